"""The ``state`` commands, one function each: ``list_keys``, ``show_key``, ``plan_delete``, ``export_to``,
``plan_import`` (the store is :mod:`.redis`, the key names and values :mod:`.model`)."""

from __future__ import annotations

import json
from typing import Any, BinaryIO

from praisonmem.core.errors import NotFound, UsageError
from praisonmem.core.io import inputfile, outfile
from praisonmem.core.io.safetext import json_safe
from praisonmem.core.result import Action, Change, Outcome, Plan
from praisonmem.core.state.model import DEFAULT_PREFIX, Kind, KindFilter, StateKey
from praisonmem.core.state.redis import READERS, Raw, RedisState, decode_record, encode_record, glob_escape

EXPORT_FORMAT = "praisonmem-redis-state"
EXPORT_VERSION = 1


def open_state(url: str, prefix: str | None = None) -> RedisState:
    prefix = DEFAULT_PREFIX if prefix is None else prefix
    if not prefix:
        raise UsageError("--prefix must not be empty (praisonai's state store uses 'praison:')")
    return RedisState(url, prefix)


def _pattern(kind: KindFilter) -> str:
    return "*" if kind in (KindFilter.all, KindFilter.other) else f"{kind.value}:*"


def _selected(store: RedisState, kind: KindFilter, session: str | None) -> list[tuple[Raw, StateKey]]:
    """The keys of ``kind`` (and of ``session``: its runs, its agent record, its traces and their spans)."""
    if session is not None:
        found = _session_keys(store, session)
    else:
        raws = store.read(store.scan(_pattern(kind)))
        found = [(raw, store.describe(raw)) for raw in raws]
    return [(raw, item) for raw, item in found if kind is KindFilter.all or item.kind.value == kind.value]


def _session_keys(store: RedisState, session: str) -> list[tuple[Raw, StateKey]]:
    escaped = glob_escape(session)
    candidates = store.scan(f"run:{escaped}:*") + store.scan(f"agent:{escaped}") + store.scan("trace:*")
    described = [(raw, store.describe(raw)) for raw in store.read(candidates)]
    mine = [(raw, item) for raw, item in described if item.session_id == session]
    traces = {item.trace_id for _, item in mine if item.kind is Kind.trace}
    if traces:
        spans = [(raw, store.describe(raw)) for raw in store.read(store.scan("span:*"))]
        mine += [(raw, item) for raw, item in spans if item.trace_id in traces]
    return sorted(mine, key=lambda pair: pair[0].key)


def _refuse_foreign(store: RedisState) -> None:
    """Nothing under the prefix, yet the database holds keys: another key space, most likely."""
    others = store.others()
    if others:
        raise NotFound(f"{store.label}: no key under prefix '{store.prefix}' (the database holds {others} other "
                       "keys: another store's? pass its --prefix)")


def list_keys(url: str, *, prefix: str | None = None, kind: KindFilter = KindFilter.all,
              session: str | None = None) -> list[StateKey]:
    """``state list``: the keys, described, grouped by kind (runs, traces, spans, agent records, learn stores,
    the rest) and by key within each; read-only: no key is written, no TTL touched."""
    store = open_state(url, prefix)
    try:
        found = [item for _, item in _selected(store, kind, session)]
        if not found and kind is KindFilter.all and session is None:
            _refuse_foreign(store)
        order = list(Kind)
        return sorted(found, key=lambda item: (order.index(item.kind), item.key))  # grouped by kind
    finally:
        store.close()


def _full_name(store: RedisState, key: str) -> bytes:
    """A KEY argument: the Redis key when it starts with the prefix, else the library's key (prefix added)."""
    if not key:
        raise UsageError("KEY must not be empty")
    return key.encode("utf-8") if key.startswith(store.prefix) else store.full(key)


def _named(store: RedisState, keys: list[str], then: str) -> list[tuple[Raw, StateKey]]:
    wanted = list(dict.fromkeys(_full_name(store, k) for k in keys))
    found = {raw.key: raw for raw in store.read(wanted)}
    for key in wanted:
        if key not in found:
            raise NotFound(f"{store.label}: no key '{key.decode('utf-8', 'replace')}'; {then}")
    return [(found[k], store.describe(found[k])) for k in wanted]


def show_key(url: str, key: str, *, prefix: str | None = None) -> StateKey:
    """``state show``: one key, its value as the library's ``get`` (a string) or ``hgetall`` (a hash) returns it."""
    store = open_state(url, prefix)
    try:
        [(_, item)] = _named(store, [key], "nothing shown")
        return item
    finally:
        store.close()


def plan_delete(url: str, keys: list[str], *, prefix: str | None = None, session: str | None = None) -> Plan:
    """``state delete``: the keys named, or a session's (runs, agent record, traces and their spans), at once."""
    if bool(keys) == (session is not None):
        raise UsageError("give the KEYs to delete or --session S (not both)")
    store = open_state(url, prefix)
    try:
        planned = _named(store, keys, "nothing deleted") if keys else _session_keys(store, session or "")
    except BaseException:
        store.close()
        raise
    if not planned:
        store.close()
        raise NotFound(f"{store.label}: no key of session '{session}' under prefix '{store.prefix}'; "
                       "nothing deleted")

    def run(dry_run: bool, progress: Any) -> Outcome:
        try:
            if not dry_run:
                store.delete([raw for raw, _ in planned])
        finally:
            store.close()
        return Outcome([Change(Action.deleted, f"key '{item.key}'", dry_run=dry_run, where=store.label,
                               fields={"store": store.label, **item.to_json()}) for _, item in planned])

    count = f"{len(planned)} keys" if len(planned) > 1 else f"key '{planned[0][1].key}'"
    what = f" of session '{session}'" if session is not None else ""
    return Plan(f"Delete {count}{what} from {store.label}?", run)


def export_to(url: str, output: str, *, prefix: str | None = None, stdout: BinaryIO | None = None
              ) -> dict[str, Any]:
    """``state export``: a header line, then one JSON line per key (type, TTL, expiry instant, value byte for
    byte), written to ``output`` (``-``: stdout); what was written, and the keys of a type it cannot hold (a
    stream, a module's type), left out."""
    store = open_state(url, prefix)
    try:
        found = store.read(store.scan())
        if not found:
            _refuse_foreign(store)
        now = store.now_ms()
    finally:
        store.close()
    raws = [raw for raw in found if raw.type in READERS]
    left_out = [f"{raw.key.decode('utf-8', 'replace')} (a {raw.type})" for raw in found if raw.type not in READERS]
    header = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "prefix": store.prefix, "exported_at": now,
              "keys": len(raws)}
    lines = [json.dumps(header, ensure_ascii=False)]
    lines += [json.dumps(encode_record(raw, now), ensure_ascii=False) for raw in raws]
    outfile.write(output, ("".join(json_safe(line) + "\n" for line in lines)).encode("utf-8"), stdout=stdout)
    return {"output": output, "store": store.label, "prefix": store.prefix, "keys": len(raws),
            "with_ttl": sum(1 for raw in raws if raw.pttl >= 0), "left_out": left_out}


def read_export(file: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An export file's header and records (bytes restored); :class:`UsageError` naming the line otherwise."""
    try:
        lines = inputfile.read_source(file).decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise UsageError(f"{file}: not UTF-8 ({exc.reason} at byte {exc.start}); not a praisonmem Redis state "
                         "export") from None
    records: list[dict[str, Any]] = []
    header: Any = None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{file}: line {number} is not JSON ({exc})") from None
        if header is None:
            header = doc
            if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
                raise UsageError(f"{file}: not a praisonmem Redis state export (expected a first line with "
                                 f"\"format\": \"{EXPORT_FORMAT}\"; create one with 'praisonmem state export')")
            if doc.get("version") != EXPORT_VERSION:
                raise UsageError(f"{file}: export version {doc.get('version')!r}; this praisonmem reads "
                                 f"version {EXPORT_VERSION}")
            continue
        if not isinstance(doc, dict):
            raise UsageError(f"{file}: line {number} is not a JSON object")
        try:
            records.append(decode_record(doc))
        except (ValueError, TypeError) as exc:
            raise UsageError(f"{file}: line {number}: {exc}") from None
    if header is None:
        raise UsageError(f"{file}: empty; not a praisonmem Redis state export")
    return header, records


def plan_import(url: str, file: str) -> Plan:
    """``state import``: the export's keys written back as they were, each expiring when it would have; refuses
    (nothing written) if any key is there already."""
    _, records = read_export(file)
    store = open_state(url)

    def run(dry_run: bool, progress: Any) -> Outcome:
        try:
            now = store.now_ms()
            live = [r for r in records if r["expires_at"] is None or r["expires_at"] > now]
            expired = [r for r in records if r not in live]
            if live and not dry_run:
                store.restore(live)
        finally:
            store.close()
        changes = [Change(Action.imported, f"key '{r['raw_key'].decode('utf-8', 'replace')}'", dry_run=dry_run,
                          where=store.label, fields=_import_fields(store, r, now)) for r in live]
        changes += [Change(Action.skipped, f"key '{r['raw_key'].decode('utf-8', 'replace')}'",
                           "expired since the export", dry_run=dry_run, fields=_import_fields(store, r, now))
                    for r in expired]
        return Outcome(changes)

    return Plan(None, run)


def _import_fields(store: RedisState, record: dict[str, Any], now: int) -> dict[str, Any]:
    expires = record["expires_at"]
    return {"store": store.label, "key": record["raw_key"].decode("utf-8", "replace"), "type": record["type"],
            "ttl": None if expires is None else max(0, (expires - now + 999) // 1000)}
