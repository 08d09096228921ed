"""``session migrate``: copy (or move) sessions between any two session stores, losslessly.

A store is what ``--store`` names (:mod:`.stores.locate`): a directory of JSON files, the gateway's
``sessions.db``, or a PraisonAI SQL conversation store (SQLite, PostgreSQL or MySQL/MariaDB). Each session
goes across as its document's stored bytes; a conversation store keeps what its columns cannot in its side
table (:mod:`.stores.conversation_map`), so JSON → SQL → JSON gives the same bytes, and a session the
library wrote keeps its rows' ids, NULLs and times through JSON, so SQL → JSON → SQL gives the same rows.

* **One session, one transaction** of the target (the JSON files' flock and atomic replace; the
  database's transaction), so a killed migrate loses at most the session in flight and a rerun
  continues: a target session with the same content is ``unchanged`` (nothing written), which also
  makes a rerun copy nothing.
* **Never overwrites a newer target**: a target session that differs and whose ``updated_at`` is not
  older than the source's is ``skipped`` (``newer in target``) unless ``on_conflict=replace``.
* ``verify``: every migrated session is read back from the target and compared with the source (the
  message count, archived included, and the SHA-256 of its canonical JSON); a mismatch fails the item.
* ``move``: the source session is deleted after its copy is in the target (and compares equal), inside
  the source's own transaction, and only when the source has not changed meanwhile; its spill records go
  in the same transaction.
* Turns waiting for a session in the source's spill dir (saved aside by the library after a failed write)
  go across merged into it as the library's next load would merge them (:func:`~.transfer.with_spilled`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from praisonmem.core.errors import PraisonMemError, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.io.timeutil import epoch_of
from praisonmem.core.paths import Paths
from praisonmem.core.sessions.documents import messages_of
from praisonmem.core.sessions.stores import SessionStore
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.transfer import with_spilled
from praisonmem.core.io.safetext import plural

ON_CONFLICT = ("skip", "replace")
Progress = Callable[[int, int], None] | None


@dataclass
class MigrateReport:
    """What ``session migrate`` did (or, ``dry_run``, would do), one record per session."""

    source: str
    target: str
    records: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    dry_run: bool = False

    def count(self, action: str) -> int:
        return sum(1 for r in self.records if r["action"] == action)

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["action"] == "failed"]

    @property
    def messages(self) -> int:
        return sum(r["messages"] for r in self.records if r["action"] in ("copied", "replaced", "would-copy",
                                                                         "would-replace"))

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def summary(self) -> dict[str, Any]:
        actions = ("copied", "replaced", "unchanged", "skipped", "failed", "moved", "would-copy", "would-replace")
        counts = {a: self.count(a) for a in actions if self.count(a)}
        moved = sum(1 for r in self.records if r.get("moved"))
        return {"source": self.source, "target": self.target, "sessions": len(self.records),
                "messages": self.messages, "seconds": round(self.seconds, 3), "dry_run": self.dry_run,
                **counts, **({"moved": moved} if moved else {})}

    def line(self) -> str:
        s = self.summary()
        done = ", ".join(f"{s[a]} {a}" for a in ("would-copy", "would-replace", "copied", "replaced", "unchanged",
                                                 "skipped", "failed") if s.get(a))
        moved = f", {s['moved']} moved" if s.get("moved") else ""
        messages = plural(s['messages'], 'message')
        return (f"{'dry run: ' if self.dry_run else ''}{plural(s['sessions'], 'session')} {self.source} -> "
                f"{self.target}{': ' + done if done else ''}{moved}; " + (
                    f"would write {messages}; nothing written ({s['seconds']:.2f}s)" if self.dry_run
                    else f"{messages} written in {s['seconds']:.2f}s"))


def canonical(doc: Any) -> bytes:
    return json.dumps(doc, sort_keys=True, ensure_ascii=True, allow_nan=True, separators=(",", ":")).encode()


def message_count(doc: dict[str, Any]) -> int:
    return len(messages_of(doc)) + len(messages_of(doc, "archived_messages"))


def fingerprint(doc: dict[str, Any]) -> tuple[int, str]:
    """What ``--verify`` compares: the message count (archived included) and a content hash."""
    return message_count(doc), hashlib.sha256(canonical(doc)).hexdigest()


def single(home: SessionStore, what: str) -> Any:
    """The one store behind ``--from``/``--to`` (a home of several needs a label)."""
    members = getattr(home, "stores", None)
    if isinstance(members, dict):
        if len(members) != 1:
            raise UsageError(f"{what} names a home with several stores ({', '.join(members)}); give one: "
                             f"{' or '.join(members)}")
        return next(iter(members.values()))
    return home


def migrate(paths: Paths, source: str, target: str, names: list[str], *, every: bool = False, move: bool = False,
            dry_run: bool = False, verify: bool = False, on_conflict: str = "skip",
            timeout: float = jsonfile.LOCK_TIMEOUT, progress: Progress = None) -> MigrateReport:
    """Copy the named sessions (``every``: all) from ``source`` to ``target`` (see the module docstring)."""
    if on_conflict not in ON_CONFLICT:
        raise UsageError(f"--on-conflict {on_conflict!r}: choose skip or replace")
    if bool(names) == every:
        raise UsageError("give the SESSION ids to migrate, or --all (not both)")
    src, dst = single(open_store(paths, source), "--from"), single(open_store(paths, target), "--to")
    shown_src, shown_dst = _where_label(src, source), _where_label(dst, target)
    if shown_src == shown_dst and type(src) is type(dst):
        raise UsageError(f"--from and --to are the same store ({shown_src})")
    report = MigrateReport(shown_src, shown_dst, dry_run=dry_run)
    started = time.monotonic()
    items = _items(src, names, every)  # resolves every name before anything is written
    if not dry_run and hasattr(dst, "prepare_write"):
        dst.prepare_write(timeout)  # a read-only role, another app's tables: one error, nothing written
    empty = dry_run and _empty(dst)
    total = len(items)
    try:
        for done, (ref, raw) in enumerate(_read(src, items), 1):
            report.records.append(_one(src, dst, ref, raw, move=move, dry_run=dry_run, verify=verify,
                                       on_conflict=on_conflict, timeout=timeout, empty=empty))
            if progress:
                progress(done, total)
    finally:
        for store in (src, dst):
            if hasattr(store, "close"):
                store.close()
    report.seconds = time.monotonic() - started
    return report


def _where_label(store: Any, given: str) -> str:
    return str(getattr(store, "where", None) or getattr(store, "directory", None) or getattr(store, "db", None)
               or given)


def _items(src: Any, names: list[str], every: bool) -> list[Any]:
    if every:
        return list(src.refs())
    refs, seen = [], set()
    for name in names:
        ref = src.find(name)
        if ref not in seen:
            seen.add(ref)
            refs.append(ref)
    return refs


def _read(src: Any, refs: list[Any]) -> Iterator[tuple[Any, bytes | PraisonMemError]]:
    """Each session's stored bytes (or why they cannot be read); a conversation store reads in batches."""
    batches = getattr(src, "raw_batches", None)
    if batches is not None:
        yield from batches(refs)
        return
    for ref in refs:
        try:
            yield ref, src.read_bytes(ref)
        except PraisonMemError as exc:
            yield ref, exc


def _record(session_id: str, action: str, messages: int = 0, **extra: Any) -> dict[str, Any]:
    return {"session_id": session_id, "action": action, "messages": messages, **extra}


def _empty(dst: Any) -> bool:
    """A dry run's target that does not exist yet (no database, no tables): every session would be copied.
    A target that cannot be used (another app's tables) raises, once."""
    from praisonmem.core.errors import NotFound

    try:
        dst.exists(dst.ref("praisonmem-probe"))
    except NotFound:
        return True
    return False


def _one(src: Any, dst: Any, ref: Any, raw: bytes | PraisonMemError, *, move: bool, dry_run: bool, verify: bool,
         on_conflict: str, timeout: float, empty: bool = False) -> dict[str, Any]:
    name = src.name(ref)
    if isinstance(raw, PraisonMemError):
        return _record(name, "failed", reason=raw.message, exit_code=raw.exit_code)
    try:
        stored = src.parse(ref, raw)
        sid = src.session_id(ref, stored)
        doc = with_spilled(src, ref, sid, stored)  # what the library would load: the spilled turns merged in
        if doc is not stored:  # the document as the library writes it once it has merged them
            raw = jsonfile.serialise(doc)
        count = message_count(doc)
        tref = dst.ref(sid)
        if dry_run:
            current = None if empty else _current_outside(dst, tref)
            action, why = _decide(current, doc, raw, on_conflict)
            return _record(sid, {"copy": "would-copy", "replace": "would-replace"}.get(action, action), count,
                           **({"reason": why} if why else {}))
        with dst.transaction([tref], timeout) as tx:
            current = _current(dst, tx, tref)
            action, why = _decide(current, doc, raw, on_conflict)
            if action in ("copy", "replace"):
                _put(dst, tx, tref, raw, doc)
        record = _record(sid, {"copy": "copied", "replace": "replaced"}.get(action, action),
                         count if action in ("copy", "replace") else 0, **({"reason": why} if why else {}))
        if action == "skipped":
            return record
        if verify or move:
            mismatch = _mismatch(dst, tref, doc)
            if mismatch:
                return {**record, "action": "failed", "reason": f"verify: {mismatch}", "exit_code": 1}
            if verify:
                record["verified"] = True
        if move:
            _delete_source(src, ref, stored, sid, doc, timeout)
            record["moved"] = True
        return record
    except PraisonMemError as exc:
        return _record(name, "failed", reason=exc.message, exit_code=exc.exit_code)


def _current_outside(dst: Any, tref: Any) -> tuple[bytes, dict[str, Any]] | None:
    if not dst.exists(tref):
        return None
    raw = dst.read_bytes(tref)
    return raw, dst.parse(tref, raw)


def _current(dst: Any, tx: Any, tref: Any) -> tuple[bytes, dict[str, Any]] | None:
    """The target session under its lock: its bytes and document; one that does not parse raises, so it is
    never overwritten."""
    raw = tx.read_bytes(tref)
    return None if raw is None else (raw, dst.parse(tref, raw))


def _decide(current: tuple[bytes, dict[str, Any]] | None, doc: dict[str, Any], raw: bytes,
            on_conflict: str) -> tuple[str, str | None]:
    if current is None:
        return "copy", None
    cur_raw, cur_doc = current
    if cur_raw == raw or canonical(cur_doc) == canonical(doc):
        return "unchanged", None
    if on_conflict == "replace":
        return "replace", None
    theirs, ours = epoch_of(cur_doc.get("updated_at")), epoch_of(doc.get("updated_at"))
    if theirs is not None and ours is not None and theirs < ours:
        return "replace", "the target copy is older"
    return "skipped", "newer in target (or as new, and different); --on-conflict replace overwrites it"


def _put(dst: Any, tx: Any, tref: Any, raw: bytes, doc: dict[str, Any]) -> None:
    """The source's own bytes, layout included, where the target reads them as the same session; else the
    document in the target's own serialisation (a praisonai CLI run's bytes are its metadata and events,
    not a session document)."""
    try:
        same = canonical(dst.parse(tref, raw)) == canonical(doc)
    except PraisonMemError:
        same = False
    if same:
        tx.write_raw(tref, raw)
    else:
        tx.write(tref, doc)


def _mismatch(dst: Any, tref: Any, doc: dict[str, Any]) -> str | None:
    try:
        back = dst.parse(tref, dst.read_bytes(tref))
    except PraisonMemError as exc:
        return f"cannot read it back: {exc.message}"
    want, got = fingerprint(doc), fingerprint(back)
    if want == got:
        return None
    return (f"source {plural(want[0], 'message')} sha256 {want[1][:12]}, target {plural(got[0], 'message')} sha256 "
            f"{got[1][:12]}")


def _delete_source(src: Any, ref: Any, stored: dict[str, Any], sid: str, copied: dict[str, Any],
                   timeout: float) -> None:
    """Delete the source session (``stored`` when it was read) and its spill records, in its own transaction, when
    the session and the turns spilled for it are still what was ``copied``."""
    from praisonmem.core.errors import Refused

    src.refuse(deleting=[ref])
    with src.transaction([ref], timeout) as tx:
        now = tx.read(ref)
        if now is None or canonical(now) != canonical(stored) or \
                canonical(messages_of(with_spilled(src, ref, sid, now))) != canonical(messages_of(copied)):
            raise Refused(f"{src.name(ref)}: changed in the source while it was migrated; copied but not deleted")
        tx.drop_spill(ref)  # first: the library makes a deleted session anew from turns spilled for it
        tx.delete(ref)

