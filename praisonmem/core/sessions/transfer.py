"""``session export`` and ``session import``.

Export formats:

Every format carries the turns waiting for a session in the spill dir (turns the library saved aside
after a failed write and merges on its next load), merged as that load merges them (:func:`with_spilled`),
so the export holds what the library would load.

* ``json``: the stored documents, lossless, in praisonaiagents' portable payload
  (``{"version": 1, "sessions": [...]}``, what ``DefaultSessionStore.export_all``
  produces and ``import_sessions`` reads) plus praisonmem's ``format`` and
  ``exported_at`` keys, which the library ignores.
* ``jsonl``: one message a line, each with its ``session_id`` (archived first,
  marked), for grep, jq and spreadsheets. Not importable: it drops session fields.
* ``openai-jsonl`` and ``sharegpt``: fine-tuning and interchange formats (:mod:`.interchange`).
* ``markdown``: a readable transcript (a gateway session's chat, kept inside its snapshots,
  after them); control characters in it are shown escaped, as in every human view
  (core/io/safetext.py).

Encrypted values (:mod:`.crypto`): ``json`` keeps them exactly as stored (it is the lossless,
importable copy: a decrypted one would put plaintext in a backup file, and its import plaintext
into the session); every other format decrypts them with the session key, and leaves them
encrypted without one. The summary counts what was left encrypted.

Import reads the json format, the library's own portable payloads, bare
session documents (a session file copied from another machine), and OpenAI-chat
JSONL (each line a new session, :mod:`.interchange`). Everything is
validated, and every conflict decided, before the first write; each session is
then written under its own lock, verbatim (a restore keeps ``updated_at`` and
unknown keys). Replacing an encrypted session encrypts the messages the import brings
in with the session's key (refused without it), so no plaintext lands in it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from enum import StrEnum
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from praisonmem import __version__
from praisonmem.core.errors import CorruptFile, PraisonMemError, TargetExists, UsageError
from praisonmem.core.io import fastjson, jsonfile, jsonstream, outfile
from praisonmem.core.io.safetext import json_safe, json_safe_utf8, plural, printable
from praisonmem.core.io.timeutil import epoch_of, now_iso
from praisonmem.core.layout import HUGE_SESSION
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Outcome, Plan
from praisonmem.core.sessions.documents import (ROLES, gateway_chat, is_encrypted, messages_of, summarise,
                                                tool_calls_of, validate)
from praisonmem.core.sessions.ops import file_name, question_name, resolve_all, session_change
from praisonmem.core.sessions.stores import SessionStore
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.streamed import HugeDocument

if TYPE_CHECKING:
    from praisonmem.core.sessions.crypto import Cipher, Key

PORTABLE_VERSION = 1  # DefaultSessionStore.PORTABLE_VERSION in 1.7.17
FORMAT = "praisonmem-sessions"


class ExportFormat(StrEnum):
    """``session export --format``: json is lossless and importable, jsonl one message a line, markdown a transcript."""

    json = "json"
    jsonl = "jsonl"
    markdown = "markdown"
    openai_jsonl = "openai-jsonl"
    sharegpt = "sharegpt"


CONVERSATION_FORMATS = (ExportFormat.openai_jsonl, ExportFormat.sharegpt)  # take the conversation options


class OnConflict(StrEnum):
    """``session import --on-conflict``: what to do with a session that already exists."""

    fail = "fail"
    skip = "skip"
    replace = "replace"


Document = tuple[str, str, dict[str, Any]]  # (file, session id, document)


# ---------------------------------------------------------------- export


def export(paths: Paths, names: list[str], *, every: bool = False, format: ExportFormat | str = ExportFormat.json,
           output: str = outfile.STDOUT, stdout: BinaryIO | None = None, store: str | None = None,
           archived: bool = False, system_prompt: str | None = None, no_system: bool = False,
           redact: str | None = None, key: Key | None = None, window: Any = None,
           threshold: int | None = HUGE_SESSION) -> dict[str, Any]:
    """Write the sessions ``names`` (or ``every`` session; of ``store`` only, when given) to ``output``
    (core/io/outfile.py's rule: ``-`` is ``stdout``); what was written. Sessions are read and written one
    at a time, so memory follows the largest session, not the home (openai-jsonl and sharegpt, which are
    for training sets, gather the conversations first). Any unreadable one stops the export with nothing
    written: a file target is a temp file until the end, and before output that cannot be taken back
    (stdout, a pipe) every session is read once first. With ``every`` and several stores, a session two
    stores hold is exported twice; an import takes the last copy of an id. ``archived``, ``system_prompt``
    and ``no_system`` shape the conversations of openai-jsonl and sharegpt (:mod:`.interchange`); a session
    those formats cannot hold is skipped and listed in ``skipped``. Every format but ``json`` decrypts
    encrypted values with ``key``; ``encrypted_kept`` counts those written as stored. ``redact``
    (``standard`` or ``strict``): every secret those rules find is written as ``[REDACTED:<kind>]``
    (:mod:`.redaction`), in any format (encrypted values are opaque to the rules: left as they are). ``window``
    (a timeutil.Window, from ``--since``/``--until``): only the sessions whose ``updated_at`` lies in it; with no
    names it picks from every session, as ``every`` does. Without ``redact``, a JSON session file of ``threshold``
    bytes or more is read a message at a time for json, jsonl and markdown (:class:`~.streamed.HugeDocument`:
    the same bytes out)."""
    from praisonmem.core.sessions.crypto import encrypted_values, opened

    if every and names:
        raise UsageError("give one or more SESSION names, or --all")
    if not every and not names:
        if window is None:
            raise UsageError("give one or more SESSION names, or --all")
        every = True  # --since/--until pick from every session
    fmt = ExportFormat(format)
    if fmt not in CONVERSATION_FORMATS and (archived or system_prompt is not None or no_system):
        raise UsageError("--archived, --system-prompt and --no-system apply to --format openai-jsonl and sharegpt "
                         "(json keeps everything)")
    redact_document = None
    if redact is not None:
        from praisonmem.core.sessions.redaction import check_level, redact_document

        redact = check_level(redact)
    found = open_store(paths, store)
    refs = found.refs() if every else resolve_all(found, names)
    if window is not None:
        refs = [ref for ref in refs if window.holds((found.read(ref) or {}).get("updated_at"))]
    if redact is not None or fmt in CONVERSATION_FORMATS:
        threshold = None  # redaction and the conversation formats take whole documents
    if outfile.kind(output) != "file":
        for ref in refs:
            if not _streams(found, ref, threshold):
                found.read(ref)
    cipher = key.cipher() if key is not None and fmt is not ExportFormat.json else None
    ids: list[Any] = []
    sids: list[str] = []
    kept: dict[str, int] = {}
    redacted = 0

    def prepared() -> Iterator[Document]:
        nonlocal redacted
        for file, sid, doc in documents(found, refs, ids, threshold=threshold, cipher=cipher):
            if isinstance(doc, HugeDocument):
                sids.append(sid)
                yield file, sid, doc
                kept[sid] = kept.get(sid, 0) + doc.kept  # counted as it was written
                continue
            if cipher is not None:
                doc = opened(doc, cipher, f"session '{sid}'")
            if redact_document is not None:
                doc, count = redact_document(doc, redact)
                redacted += count
            sids.append(sid)
            kept[sid] = kept.get(sid, 0) + sum(1 for _ in encrypted_values(doc))
            yield file, sid, doc

    skipped: list[dict[str, str]] = []
    with outfile.opened(output, stdout=stdout) as handle:
        if fmt in CONVERSATION_FORMATS:
            from praisonmem.core.sessions import interchange

            write = interchange.export_openai_jsonl if fmt is ExportFormat.openai_jsonl else interchange.export_sharegpt
            text, skipped = write(list(prepared()), archived=archived, system_prompt=system_prompt,
                                  no_system=no_system)
            handle.write(text.encode("utf-8"))
        else:
            for chunk in CHUNKS[fmt](prepared()):
                handle.write(chunk if isinstance(chunk, bytes) else chunk.encode("utf-8"))
                del chunk
    left_out = {s["session_id"] for s in skipped}
    summary: dict[str, Any] = {"output": str(output), "format": fmt.value, "count": len(ids) - len(skipped),
                               "sessions": [i for i, sid in zip(ids, sids) if sid not in left_out]}
    if fmt in CONVERSATION_FORMATS:
        summary["skipped"] = skipped
    summary["encrypted_kept"] = sum(n for sid, n in kept.items() if sid not in left_out)
    if redact is not None:
        from praisonmem.core.secrets import masked

        summary["redacted"] = redacted
        summary["sessions"] = [None if s is None else masked(s, redact) for s in summary["sessions"]]
        for item in skipped:
            item["session_id"] = masked(item["session_id"], redact)
    return summary


def documents(store: SessionStore, refs: list[Any], ids: list[Any] | None = None, *, threshold: int | None = None,
              cipher: Cipher | None = None) -> Iterator[Document]:
    """Each session read and validated when it is reached (its ``session_id`` noted in ``ids``), with the turns
    waiting for it in the spill dir merged in (:func:`with_spilled`). With ``threshold``, a JSON session file that
    large is a :class:`~.streamed.HugeDocument` (its messages opened with ``cipher``), valid until the next one."""
    from praisonmem.core.sessions import streamed
    from praisonmem.core.sessions.stores.jsondir import huge_file, waiting_for

    for ref in refs:
        huge = huge_file(store, ref, threshold)
        if huge is not None:
            given = False
            try:
                with streamed.huge_document(store, ref, huge[1], partial(waiting_for, huge[0]), cipher) as big:
                    if ids is not None:
                        ids.append(big.skeleton.get("session_id"))
                    given = True
                    yield str(ref), store.session_id(ref, big.skeleton), big
                continue
            except streamed.Unstreamable as exc:
                if given:  # its first pass read it whole, so the file changed under the descriptor since
                    raise CorruptFile(huge[1], "changed while praisonmem read it (written in place?)") from exc
                # else read whole: reported as ever
        doc = store.read(ref)
        if ids is not None:
            ids.append(doc.get("session_id"))
        sid = store.session_id(ref, doc)
        yield str(ref), sid, with_spilled(store, ref, sid, doc)
        del doc  # before the next one is read: one session in memory at a time


def _streams(store: SessionStore, ref: Any, threshold: int | None) -> bool:
    """The session is a huge file that reads to its end as a valid session document, a message at a time."""
    from praisonmem.core.sessions import streamed
    from praisonmem.core.sessions.stores.jsondir import huge_file

    huge = huge_file(store, ref, threshold)
    if huge is None:
        return False
    try:
        with streamed.opened(huge[1]) as fd:
            streamed.skeleton(fd, huge[1])
    except streamed.Unstreamable:
        return False
    return True


def with_spilled(store: SessionStore, ref: Any, session_id: str, doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with the turns the library's next load adds from the spill dir appended to its ``messages``, as
    that load merges them (:meth:`~.stores.SessionStore.spilled`: in its order, its form, without the turns it
    would drop as already there); ``doc`` itself when none wait. Every other key stays as stored (``updated_at``
    too: the library sets it to the time of its own write, which a copy is not); the library's window
    (compacting beyond ``max_messages``) is applied by its next write, as its own settings say."""
    turns = store.spilled(ref, session_id, messages_of(doc))
    if not turns:
        return doc
    return {**doc, "messages": [*messages_of(doc), *turns]}


def json_chunks(docs: Iterable[Document]) -> Iterator[bytes]:
    """The portable payload, one session at a time: the bytes of ``json.dumps(payload, indent=2)``."""
    header = {"version": PORTABLE_VERSION, "format": FORMAT, "praisonmem_version": __version__,
              "exported_at": now_iso()}
    yield (json_safe(jsonfile.dumps(header)[:-2]) + ',\n  "sessions": [').encode("utf-8")
    first = True
    for _, _, doc in docs:
        if isinstance(doc, HugeDocument):
            yield b"\n    " if first else b",\n    "
            yield from _batched(json_safe_utf8(piece.replace(b"\n", b"\n    "))
                                for piece in jsonstream.object_chunks(doc.pairs()))
            first = False
            continue
        data = fastjson.dumps_indented(doc)  # bytes, never a str twice the size
        if data is None:
            data = json_safe(jsonfile.dumps(doc)).encode("utf-8")
        del doc
        # A JSON text holds no raw newline inside a string, so every one is structural: indent it one level.
        yield (b"\n    " if first else b",\n    ") + json_safe_utf8(data.replace(b"\n", b"\n    "))
        del data
        first = False
    yield b"]\n}\n" if first else b"\n  ]\n}\n"


def jsonl_chunks(docs: Iterable[Document]) -> Iterator[str]:
    for _, sid, doc in docs:
        if isinstance(doc, HugeDocument):
            yield from _batched(_jsonl_lines(sid, doc.messages))
            continue
        yield "".join(_jsonl_lines(sid, lambda key: messages_of(doc, key)))
        del doc


def _jsonl_lines(sid: str, messages: Callable[[str], Iterable[Any]]) -> Iterator[str]:
    """One line a message, archived ones first: ``messages(key)`` gives a list's messages."""
    import json

    for archived, key in ((True, "archived_messages"), (False, "messages")):
        for index, message in enumerate(messages(key)):
            record = {"session_id": sid, "archived": archived, "index": index}
            record.update(message if isinstance(message, dict) else {"value": message})
            yield json_safe(json.dumps(record, ensure_ascii=False)) + "\n"


def _batched(pieces: Iterable[Any], size: int = 1 << 20) -> Iterator[Any]:
    """``pieces`` (all bytes or all str) joined into runs of about ``size``: few, large writes."""
    run: list[Any] = []
    held = 0
    for piece in pieces:
        run.append(piece)
        held += len(piece)
        if held >= size:
            yield run[0][:0].join(run)
            run, held = [], 0
    if run:
        yield run[0][:0].join(run)


def markdown_chunks(docs: Iterable[Document]) -> Iterator[str]:
    """Each session's transcript; the blank lines that end one are written only when another follows."""
    held: str | None = None
    for file, sid, doc in docs:
        if isinstance(doc, HugeDocument):
            if held is not None:
                yield held + "\n"
            held = yield from _held_back(_batched(_joined(_markdown_lines(file, sid, doc.skeleton, doc.messages))))
            continue
        text = "\n".join(markdown_lines(file, sid, doc))
        del doc
        if held is not None:
            yield held + "\n"
        body = text.rstrip("\n")
        yield body
        held = text[len(body):]
    yield "\n"


def _joined(lines: Iterable[str]) -> Iterator[str]:
    """``"\\n".join(lines)``, a line at a time."""
    first = True
    for line in lines:
        yield line if first else "\n" + line
        first = False


def _held_back(pieces: Iterable[str]) -> Iterator[str]:
    """``pieces`` without the newlines their text ends in, which are returned (``markdown_chunks``' ``held``)."""
    held = ""
    for piece in pieces:
        body = piece.rstrip("\n")
        if body:
            yield held + body
            held = ""
        held += piece[len(body):]
    return held


def markdown_lines(file: str, sid: str, doc: dict[str, Any]) -> list[str]:
    return list(_markdown_lines(file, sid, doc, lambda key: messages_of(doc, key)))


def _markdown_lines(file: str, sid: str, doc: dict[str, Any], messages: Callable[[str], Iterable[Any]]
                    ) -> Iterator[str]:
    """The transcript's lines: ``doc``'s fields and gateway chat, ``messages(key)`` each list's messages."""
    def when(value: Any) -> str:
        from datetime import datetime, timezone

        stamp = epoch_of(value)
        if not stamp:
            return ""
        try:
            return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        except (OverflowError, OSError, ValueError):  # NaN, ±1e300, 1e400: no date; shown as stored
            return printable(str(value))

    row = summarise(doc, session_id=sid, file=file)  # the fields `session list` shows, read the same way
    yield f"# Session `{printable(str(row['session_id']))}`\n"
    facts = [("Agent", row["agent_name"]), ("User", row["user_id"]), ("Title", row["title"]),
             ("Model", row["model"]), ("Created", when(row["created_at"])), ("Updated", when(row["updated_at"]))]
    yield from (f"- **{k}:** {printable(str(v))}" for k, v in facts if v not in (None, ""))
    yield ""
    for archived, key in ((True, "archived_messages"), (False, "messages")):
        for index, message in enumerate(messages(key)):
            if not isinstance(message, dict):
                continue
            label = f"{'archived ' if archived else ''}#{index} {printable(str(message.get('role', '?')))}"
            stamp = when(message.get("timestamp"))
            yield f"### {label}" + (f" · {stamp}" if stamp else "")
            yield ""
            content = message.get("content")
            if is_encrypted(content):
                yield "*(encrypted)*"
            elif content:
                text = content if isinstance(content, str) else jsonfile.dumps(content)
                yield printable(text, multiline=True)
            if is_encrypted(message.get("tool_calls")):
                yield "\n*(tool calls encrypted)*"
            for call_id, name, arguments in tool_calls_of(message):
                yield f"\n**Tool call** `{printable(str(name))}` (`{printable(str(call_id))}`):\n"
                yield f"```json\n{printable(str(arguments), multiline=True)}\n```"
            if message.get("tool_call_id"):
                yield f"\n*(result of tool call `{printable(str(message['tool_call_id']))}`)*"
            yield ""
    for index, message in enumerate(gateway_chat(doc) or []):  # the chat a gateway keeps in its snapshots
        stamp = when(message.get("timestamp"))
        sender = printable(str(message.get("sender_id")))
        yield f"### gateway #g{index} {message['role']} ({sender})" + (f" · {stamp}" if stamp else "")
        yield ""
        content = message.get("content")
        if is_encrypted(content):
            yield "*(encrypted)*"
        elif content:
            yield printable(content if isinstance(content, str) else jsonfile.dumps(content), multiline=True)
        yield ""
    yield ""


CHUNKS = {ExportFormat.json: json_chunks, ExportFormat.jsonl: jsonl_chunks, ExportFormat.markdown: markdown_chunks}


# ---------------------------------------------------------------- import


@dataclass
class ImportPlan:
    items: list[tuple[dict[str, Any], Any, Action]]  # document, target, imported | replaced | skipped
    key: Key | None = None  # encrypts messages brought into an encrypted session


def read_payload(file: str | os.PathLike[str], id_prefix: str | None = None) -> list[dict[str, Any]]:
    """The sessions in an export file (``-``: standard input), or a clear error saying why it is not one.
    OpenAI-chat JSONL becomes new sessions ``<id_prefix>-<line>`` (default prefix: the file's stem)."""
    from praisonmem.core.sessions import interchange  # only imports need it (session list imports this module)

    raw = jsonfile.read_source(file)
    prefix = id_prefix if id_prefix is not None else (
        "stdin" if os.fspath(file) == jsonfile.STDIN else os.path.basename(os.fspath(file)).rsplit(".", 1)[0])
    try:
        data = jsonfile.parse(raw, file)
    except PraisonMemError as exc:
        chats = interchange.read_jsonl(raw, str(file), prefix)
        if chats is not None:
            return chats
        if raw.lstrip().startswith(b"{") and b"\n{" in raw.strip():
            raise UsageError(f"{file}: looks like a jsonl export, which is not importable "
                             "(it keeps messages only); export with --format json") from exc
        reason = getattr(exc, "reason", exc.message)
        raise UsageError(f"{file}: not a praisonmem or PraisonAI session export ({reason})") from exc
    if isinstance(data, dict) and isinstance(data.get("sessions"), list):
        version = data.get("version")
        if isinstance(version, int) and version > PORTABLE_VERSION:
            raise UsageError(f"{file}: export format version {version} is newer than this praisonmem reads "
                             f"(<= {PORTABLE_VERSION})")
        return data["sessions"]
    if isinstance(data, dict) and isinstance(data.get("session_id"), str) and "messages" in data:
        return [data]
    if interchange.is_openai_chat(data):  # a one-line OpenAI-chat JSONL file
        return interchange.sessions_from_jsonl([(1, data)], str(file), prefix)
    raise UsageError(f"{file}: not a praisonmem or PraisonAI session export "
                     "(expected {\"version\": 1, \"sessions\": [...]}, a session document, or OpenAI-chat JSONL)")


def validate_session(doc: Any, index: int) -> str:
    """Raise with the index and reason when a record cannot become a session; else its id."""
    where = f"session {index}"
    if not isinstance(doc, dict):
        raise UsageError(f"{where}: not a JSON object")
    sid = doc.get("session_id")
    if "session_id" in doc and not isinstance(sid, str):
        raise UsageError(f"{where}: session_id is {jsonfile.json_kind(sid)}, not a string")
    if not isinstance(sid, str) or not sid.strip():
        raise UsageError(f"{where}: missing or empty session_id")
    where = f"session {index} ('{sid}')"
    try:
        validate(doc, where)
    except PraisonMemError as exc:
        raise UsageError(exc.message) from exc
    if not isinstance(doc.get("messages"), list):  # the library's loader fails on anything else
        raise UsageError(f"{where}: 'messages' must be a list")
    checkpoint = doc.get("last_compaction")
    if checkpoint and not (isinstance(checkpoint, dict) and isinstance(checkpoint.get("message_index"), int)):
        raise UsageError(f"{where}: 'last_compaction' must be an object with an integer message_index")
    for key in ("messages", "archived_messages"):
        for i, message in enumerate(messages_of(doc, key)):
            if not isinstance(message, dict):
                raise UsageError(f"{where}: {key}[{i}] is not an object")
            if message.get("role") not in ROLES:
                raise UsageError(f"{where}: {key}[{i}] has role {message.get('role')!r}, not one of {', '.join(ROLES)}")
    return sid


def plan_import(paths: Paths, file: str | os.PathLike[str], *, on_conflict: OnConflict | str = OnConflict.fail,
                timeout: float = jsonfile.LOCK_TIMEOUT, store: str | None = None, id_prefix: str | None = None,
                key: Key | None = None) -> Plan:
    """``session import``: every session in ``file`` validated and every conflict decided before the first
    write; replacing existing sessions is asked first. The sessions go to the JSON directory, or to
    ``store``; a conflict is a session that store already holds. ``key`` encrypts what an import brings
    into an encrypted session."""
    docs = read_payload(file, id_prefix)
    paths.require_home()
    store = open_store(paths, store)
    plan = plan_documents(store, docs, OnConflict(on_conflict))
    plan.key = key
    _refuse_unsealable(store, plan)
    replacing = sum(1 for _, _, action in plan.items if action is Action.replaced)
    return Plan(f"Replace {plural(replacing, 'existing session')}?" if replacing else None,
                lambda dry_run, progress: run_import(store, plan, on_conflict=OnConflict(on_conflict),
                                                     dry_run=dry_run, timeout=timeout))


def _refuse_unsealable(store: SessionStore, plan: ImportPlan) -> None:
    """Before anything is written: an import that replaces an encrypted session with plaintext messages needs
    that session's key (and the key must open it)."""
    from praisonmem.core.sessions.crypto import seal

    for doc, target, action in plan.items:
        if action is not Action.replaced:
            continue
        try:
            current = store.read(target)
        except PraisonMemError:
            continue  # refused under the lock, as any unreadable target
        seal(current, doc, plan.key.cipher() if plan.key else None, f"session '{doc['session_id']}'")


def plan_documents(store: SessionStore, docs: list[dict[str, Any]], on_conflict: OnConflict) -> ImportPlan:
    targets: dict[Any, str] = {}
    items = []
    for index, doc in enumerate(docs):
        sid = validate_session(doc, index)
        target = store.ref(sid)
        if target in targets:
            raise UsageError(f"session {index} ('{sid}') and '{targets[target]}' both map to "
                             f"{question_name(store, target)}")
        targets[target] = sid
        items.append((doc, target, Action.replaced if store.exists(target) else Action.imported))
    conflicts = [target for _, target, action in items if action is Action.replaced]
    if conflicts and on_conflict is OnConflict.fail:
        listed = ", ".join(question_name(store, t) for t in conflicts[:5]) + (" …" if len(conflicts) > 5 else "")
        raise TargetExists(f"{plural(len(conflicts), 'session')} already {'exists' if len(conflicts) == 1 else 'exist'} "
                           f"({listed}); nothing imported: "
                           "use --on-conflict skip or --on-conflict replace")
    if on_conflict is OnConflict.skip:
        items = [(d, t, Action.skipped if a is Action.replaced else a) for d, t, a in items]
    store.refuse(creating=[t for _, t, a in items if a is Action.imported])
    return ImportPlan(items)


def run_import(store: SessionStore, plan: ImportPlan, *, on_conflict: OnConflict, dry_run: bool = False,
               timeout: float = jsonfile.LOCK_TIMEOUT) -> Outcome:
    """Write each planned session under its lock; per-session outcome, failures recorded."""
    from praisonmem.core.sessions.crypto import seal

    changes = []
    for doc, target, action in plan.items:
        change = session_change(action, doc["session_id"], target, dry_run=dry_run, where=file_name(target),
                                detail="already exists" if action is Action.skipped else None)
        if dry_run or action is Action.skipped:
            changes.append(change)
            continue
        try:
            with store.transaction([target], timeout) as tx:
                exists = tx.exists(target)
                if exists and on_conflict is OnConflict.skip:
                    change.action, change.detail = Action.skipped, "appeared during import"
                elif exists and on_conflict is not OnConflict.replace:
                    change.fail(TargetExists(f"{file_name(target)} appeared during the import; not replaced"))
                else:
                    current = tx.read(target) if exists else None  # refuse to replace a file that does not parse
                    cipher = plan.key.cipher() if plan.key else None
                    tx.write(target, seal(current, doc, cipher, f"session '{doc['session_id']}'"))
                    change.action = Action.replaced if exists else Action.imported
        except PraisonMemError as exc:
            change.fail(exc)
        changes.append(change)
    return Outcome(changes)
