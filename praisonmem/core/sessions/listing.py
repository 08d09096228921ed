"""PraisonAI session documents: find, validate, summarise, list and view (spec §2).

A session is ``<sessions dir>/<safe id>.json``. Only names ending in ``.json``
are sessions: ``.json.lock`` sidecars, ``*.tmp`` files and quarantined
``*.json.corrupt-*`` files are not. Every function here reads without a lock
and changes nothing; writes live in :mod:`praisonmem.core.sessions.ops`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from praisonmem.core.io import jsonfile
from praisonmem.core.io import parallel
from praisonmem.core.errors import AmbiguousName, CorruptFile, IOFailure, NotFound, PraisonMemError
from praisonmem.core.paths import Paths
from praisonmem.core.sessions.workspace import safe_file_stem, scope_of

ENCRYPTED_PREFIX = "praisonai:enc:v1:"
SCOPES = ("workspace", "global", "legacy", "other", "explicit")
SORT_KEYS = ("updated", "created", "messages", "id")


def session_paths(sessions_dir: Path | str) -> list[str]:
    """Session files in name order, as path strings: regular files whose name ends in ``.json``."""
    try:
        with os.scandir(sessions_dir) as entries:
            found = [e.path for e in entries if e.name.endswith(".json") and e.is_file()]
    except FileNotFoundError:
        return []
    except NotADirectoryError as exc:
        raise IOFailure(f"{sessions_dir}: not a directory") from exc
    except PermissionError as exc:
        raise IOFailure(f"{sessions_dir}: permission denied") from exc
    found.sort()
    return found


def session_files(sessions_dir: Path) -> list[Path]:
    return [Path(p) for p in session_paths(sessions_dir)]


def validate(doc: dict[str, Any], path: Path | str) -> dict[str, Any]:
    """Refuse a document whose shape no PraisonAI reader could use."""
    for key in ("messages", "archived_messages"):
        value = doc.get(key)
        if key in doc and value is not None and not isinstance(value, list):
            raise CorruptFile(str(path), f"'{key}' is {jsonfile.json_kind(value)}, not a list")
    if "metadata" in doc and doc["metadata"] is not None and not isinstance(doc["metadata"], dict):
        raise CorruptFile(str(path), f"'metadata' is {jsonfile.json_kind(doc['metadata'])}, not an object")
    return doc


def load(path: Path | str) -> dict[str, Any]:
    """Read and validate one session document (no lock, no write)."""
    return validate(jsonfile.read_object(path), path)


def raw_session_id(doc: dict[str, Any], path: Path | str) -> str:
    """``session_id`` as stored, else the file stem (what the library's listing shows)."""
    sid = doc.get("session_id")
    return sid if isinstance(sid, str) else os.path.basename(path)[: -len(".json")]


def messages_of(doc: dict[str, Any], key: str = "messages") -> list[Any]:
    value = doc.get(key)
    return value if isinstance(value, list) else []


def metadata_of(doc: dict[str, Any]) -> dict[str, Any]:
    meta = doc.get("metadata")
    return meta if isinstance(meta, dict) else {}


def tool_calls_of(message: Any) -> list[tuple[str, str, str]]:
    """A message's tool calls as ``(id, name, arguments)``; malformed entries are skipped, never fatal."""
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    out = []
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            arguments = fn.get("arguments")
            out.append((str(call.get("id") or ""), str(fn.get("name") or "?"),
                        arguments if isinstance(arguments, str) else jsonfile.dumps(arguments, compact=True)))
    return out


def title_of(doc: dict[str, Any]) -> str | None:
    """``metadata.title`` (what ``rename_session`` sets), else a hierarchical store's ``title``."""
    for value in (metadata_of(doc).get("title"), doc.get("title")):
        if isinstance(value, str) and value:
            return value
    return None


# ---------------------------------------------------------------- finding


def find(paths: Paths, name: str, *, allow_prefix: bool = False) -> Path:
    """Resolve SESSION: a path to a ``.json`` file, a raw session id, or a file stem.

    Raw ids go through the library's sanitising, so ``support/ticket #1234`` finds
    ``support_ticket__1234.json``. With ``allow_prefix``, a unique stem prefix
    also resolves. Two different files for one name is :class:`AmbiguousName`.
    """
    if not name:
        raise NotFound("no session named '' (give a session id, file stem or path)")
    as_path = Path(name).expanduser()
    if (os.sep in name or name.endswith(".json")) and as_path.is_file():
        return as_path
    paths.require_home()
    sessions_dir = paths.sessions_dir
    candidates = [sessions_dir / f"{safe_file_stem(name)}.json"]
    if "/" not in name and "\\" not in name:  # a stem names a file in the sessions dir, never elsewhere
        candidates.append(sessions_dir / f"{name}.json")
    exact = [p for p in dict.fromkeys(candidates) if p.is_file()]
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        holding = [p for p in exact if _holds_id(p, name)]
        if len(holding) == 1:
            return holding[0]
        raise AmbiguousName(_ambiguous_message(name, exact))
    if allow_prefix and "/" not in name:
        matches = [p for p in session_files(sessions_dir) if p.name.startswith(name)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise AmbiguousName(_ambiguous_message(name, matches))
    where = sessions_dir if sessions_dir.is_dir() else f"{sessions_dir} (no such directory)"
    raise NotFound(f"no session '{name}' in {where}")


def _holds_id(path: Path, session_id: str) -> bool:
    try:
        return jsonfile.read_object(path).get("session_id") == session_id
    except PraisonMemError:
        return False


def _ambiguous_message(name: str, candidates: list[Path]) -> str:
    shown = ", ".join(p.name for p in candidates[:10])
    more = f" and {len(candidates) - 10} more" if len(candidates) > 10 else ""
    return f"'{name}' matches several sessions: {shown}{more}"


# ---------------------------------------------------------------- spill


def spill_files(spill_dir: Path) -> list[Path]:
    try:
        return sorted(p for p in spill_dir.iterdir() if p.name.endswith(".json") and p.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return []


def spill_records(spill_dir: Path, session_id: str) -> list[tuple[Path, dict[str, Any]]]:
    """The spill files the library would merge into ``session_id`` (spec §2.5), with their records.

    Files named ``<safe id>.*.json`` whose ``session_id`` is the raw id, as the
    library's re-ingest picks them; unreadable ones are skipped here (``check``
    reports them).
    """
    prefix = f"{safe_file_stem(session_id)}."
    found = []
    for path in spill_files(spill_dir):
        if not path.name.startswith(prefix):
            continue
        try:
            record = jsonfile.read_object(path)
        except PraisonMemError:
            continue
        if record.get("session_id") == session_id:
            found.append((path, record))
    return found


def spilled_messages(spill_dir: Path, session_id: str, present: Iterable[Any] = ()) -> list[dict[str, Any]]:
    """Turns salvaged to the spill dir for ``session_id`` and not yet merged: messages already
    present (same role, content, timestamp) are left out, as the library's re-ingest does."""
    seen = {_message_key(m) for m in present if isinstance(m, dict)}
    found: list[dict[str, Any]] = []
    for _, record in spill_records(spill_dir, session_id):
        for message in messages_of(record):
            if isinstance(message, dict) and _message_key(message) not in seen:
                seen.add(_message_key(message))
                found.append(message)
    return found


def _message_key(message: dict[str, Any]) -> tuple[str, str, str]:
    return (repr(message.get("role")), repr(message.get("content")), repr(message.get("timestamp")))


def spill_counts(spill_dir: Path) -> dict[str, int]:
    """Waiting spilled turns per raw session id."""
    counts: dict[str, int] = {}
    for path in spill_files(spill_dir):
        try:
            record = jsonfile.read_object(path)
        except PraisonMemError:
            continue
        sid = record.get("session_id")
        if isinstance(sid, str) and path.name.startswith(f"{safe_file_stem(sid)}."):
            counts[sid] = counts.get(sid, 0) + len(messages_of(record))
    return counts


# ---------------------------------------------------------------- listing


@dataclass
class ListResult:
    rows: list[dict[str, Any]]
    total: int  # readable sessions matching the filters, before --limit
    hidden_unreadable: int = 0  # unreadable files left out because filters were given
    unreadable: int = 0


LIST_FIELDS = (
    "session_id", "file", "agent_name", "user_id", "title", "message_count", "archived_count", "created_at",
    "updated_at", "model", "total_tokens", "cost", "scope", "agent_id", "source", "parent_id", "spilled_count",
    "unreadable", "error",
)


def summarise(path: Path | str, doc: dict[str, Any]) -> dict[str, Any]:
    """One ``session list`` row: the library's ``list_sessions`` fields plus counts.

    ``scope`` and ``spilled_count`` are filled in by :func:`list_sessions`.
    """
    meta = metadata_of(doc)
    return {
        "session_id": raw_session_id(doc, path),
        "file": str(path),
        "agent_name": doc.get("agent_name"),
        "user_id": doc.get("user_id"),
        "title": title_of(doc),
        "message_count": len(messages_of(doc)),
        "archived_count": len(messages_of(doc, "archived_messages")),
        "created_at": doc.get("created_at"),
        "updated_at": doc.get("updated_at"),
        "model": doc.get("model") or doc.get("llm") or meta.get("model"),
        "total_tokens": doc.get("total_tokens") or doc.get("token_count") or meta.get("total_tokens"),
        "cost": doc.get("cost") or meta.get("cost"),
        "scope": None,
        "agent_id": doc.get("agent_id") or meta.get("agent_id"),
        "source": doc.get("source") or meta.get("source"),
        "parent_id": doc.get("parent_id") or meta.get("parent_id"),
        "spilled_count": 0,
        "unreadable": False,
        "error": None,
    }


def unreadable_row(path: Path | str, error: PraisonMemError) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(LIST_FIELDS)
    reason = error.reason if isinstance(error, CorruptFile) else error.message
    row.update(file=str(path), spilled_count=0, unreadable=True, error=reason)
    return row


def summarise_files(paths: list[str]) -> list[dict[str, Any]]:
    """Rows for a chunk of files (runs in a worker process for large directories)."""
    rows = []
    for path in paths:
        try:
            rows.append(summarise(path, load(path)))
        except PraisonMemError as exc:
            rows.append(unreadable_row(path, exc))
    return rows


def list_sessions(
    paths: Paths,
    *,
    workspace: Callable[[], str],
    agent: str | None = None,
    user: str | None = None,
    scope: str | None = None,
    sort: str = "updated",
    limit: int = 50,
    progress: Callable[[int, int], None] | None = None,
) -> ListResult:
    """Summaries of every session file, filtered, sorted and cut to ``limit`` (0 = all).

    Unreadable files are listed first with their reason (never skipped silently)
    and do not count against ``limit``; when filters are given they cannot be
    matched, so they are counted in ``hidden_unreadable`` instead.
    """
    paths.require_home()
    files = session_paths(paths.sessions_dir)
    scope_fn = _scope_function(workspace)
    waiting = spill_counts(paths.spill_dir)
    rows: list[dict[str, Any]] = []
    bad: list[dict[str, Any]] = []
    for row in parallel.map_chunks(summarise_files, files, progress=progress):
        if row["unreadable"]:
            bad.append(row)
            continue
        agent_name = row["agent_name"] if isinstance(row["agent_name"], str) else None
        row["scope"] = scope_fn(row["session_id"], agent_name)
        row["spilled_count"] = waiting.get(row["session_id"], 0)
        if _matches(row, agent, user, scope):
            rows.append(row)
    _sort_rows(rows, sort)
    total = len(rows)
    if limit:
        rows = rows[:limit]
    if agent is not None or user is not None or scope is not None:
        return ListResult(rows, total, hidden_unreadable=len(bad), unreadable=len(bad))
    return ListResult(bad + rows, total, unreadable=len(bad))


def _scope_function(workspace: Callable[[], str]) -> Callable[[str, str | None], str]:
    cache: list[str] = []

    def scope(session_id: str, agent_name: str | None) -> str:
        if not session_id.startswith("history_"):
            return "explicit"
        if not cache:
            cache.append(workspace())  # git runs only when a history id is present
        try:
            return scope_of(session_id, agent_name, cache[0])
        except UnicodeEncodeError:
            return "other"

    return scope


def _matches(row: dict[str, Any], agent: str | None, user: str | None, scope: str | None) -> bool:
    return (
        (agent is None or row["agent_name"] == agent)
        and (user is None or row["user_id"] == user)
        and (scope is None or row["scope"] == scope)
    )


def _sort_rows(rows: list[dict[str, Any]], sort: str) -> None:
    def text(value: Any) -> str:
        return value if isinstance(value, str) else ""

    if sort == "updated":
        rows.sort(key=lambda r: text(r["updated_at"]), reverse=True)
    elif sort == "created":
        rows.sort(key=lambda r: text(r["created_at"]), reverse=True)
    elif sort == "messages":
        rows.sort(key=lambda r: r["message_count"], reverse=True)
    elif sort == "id":
        rows.sort(key=lambda r: r["session_id"])
    else:  # the CLI restricts choices; a library caller gets a clear error
        raise ValueError(f"unknown sort key {sort!r}; choose from {', '.join(SORT_KEYS)}")


# ---------------------------------------------------------------- viewing


@dataclass
class Turn:
    """One message as ``session show`` presents it."""

    section: str  # "archived" | "active" | "spilled" | "checkpoint"
    index: int | None
    role: str
    content: str
    timestamp: Any
    encrypted: bool = False
    encrypted_metadata: bool = False
    partial: bool = False
    compaction: int | None = None  # compacted_count of a [Session Summary] message
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None  # the call this tool result answers
    malformed: bool = False


@dataclass
class SessionView:
    path: Path
    doc: dict[str, Any]
    session_id: str
    turns: list[Turn]
    hidden_before: int = 0  # turns cut by --tail
    spilled: int = 0


def is_encrypted(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(ENCRYPTED_PREFIX)


def view(
    paths: Paths,
    path: Path,
    doc: dict[str, Any],
    *,
    archived: bool = False,
    working: bool = False,
    tail: int | None = None,
) -> SessionView:
    """The transcript ``session show`` renders: archived (opt-in), active and spilled turns.

    ``working`` is the history an agent resumes with (spec §2.7): the compaction
    checkpoint's summary followed by ``messages[message_index:]``, or all
    messages when there is no checkpoint.
    """
    sid = raw_session_id(doc, path)
    active = messages_of(doc)
    turns: list[Turn] = []
    if working:
        checkpoint = doc.get("last_compaction")
        start = 0
        if isinstance(checkpoint, dict) and checkpoint:
            index = checkpoint.get("message_index")
            start = max(0, min(index if isinstance(index, int) else 0, len(active)))
            turns.append(Turn("checkpoint", None, str(checkpoint.get("role") or "system"),
                              _text(checkpoint.get("summary")), checkpoint.get("timestamp")))
        turns += _turns("active", active, offset=start)
    else:
        if archived:
            turns += _turns("archived", messages_of(doc, "archived_messages"))
        turns += _turns("active", active)
    spilled = spilled_messages(paths.spill_dir, sid, present=active)
    turns += _turns("spilled", spilled)
    _link_tool_results(turns)
    hidden = 0
    if tail is not None and tail < len(turns):
        hidden = len(turns) - tail
        turns = turns[hidden:] if tail else []
    return SessionView(path, doc, sid, turns, hidden, len(spilled))


def _turns(section: str, messages: list[Any], offset: int = 0) -> list[Turn]:
    return [_turn(section, i, m) for i, m in enumerate(messages[offset:], offset)]


def _turn(section: str, index: int, message: Any) -> Turn:
    if not isinstance(message, dict):
        return Turn(section, index, "?", jsonfile.dumps(message, compact=True), None, malformed=True)
    meta = message.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    content = message.get("content")
    calls = [{"id": i, "name": n, "arguments": a} for i, n, a in tool_calls_of(message)]
    compacted = meta.get("compacted_count") if meta.get("compaction") else None
    return Turn(
        section=section,
        index=index,
        role=str(message.get("role") or "?"),
        content=_text(content),
        timestamp=message.get("timestamp"),
        encrypted=is_encrypted(content),
        encrypted_metadata=set(meta) == {"__enc__"},
        partial=meta.get("partial") is True,
        compaction=compacted if isinstance(compacted, int) else (0 if meta.get("compaction") else None),
        tool_calls=calls,
        tool_call_id=message.get("tool_call_id") if isinstance(message.get("tool_call_id"), str) else None,
    )


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else jsonfile.dumps(value, compact=True)


def _link_tool_results(turns: list[Turn]) -> None:
    names: dict[str, str] = {}
    for turn in turns:
        for call in turn.tool_calls:
            names[call["id"]] = call["name"]
        if turn.tool_call_id is not None:
            turn.tool_name = names.get(turn.tool_call_id)
