"""Session export and import.

Export formats:

* ``json``: the stored documents, lossless, in praisonaiagents' portable payload
  (``{"version": 1, "sessions": [...]}``, what ``DefaultSessionStore.export_all``
  produces and ``import_sessions`` reads) plus praisonmem's ``format`` and
  ``exported_at`` keys, which the library ignores.
* ``jsonl``: one message a line, each with its ``session_id`` (archived first,
  marked), for grep, jq and spreadsheets. Not importable: it drops session fields.
* ``markdown``: a readable transcript; control characters in it are shown escaped,
  as in every human view (core/safetext.py).

Import reads the json format, the library's own portable payloads, and bare
session documents (a session file copied from another machine). Everything is
validated, and every conflict decided, before the first write; each session is
then written under its own lock, verbatim (a restore keeps ``updated_at`` and
unknown keys).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from praisonmem import __version__
from praisonmem.core.io import jsonfile
from praisonmem.core.sessions import listing as sessions
from praisonmem.core.errors import PraisonMemError, UsageError
from praisonmem.core.paths import Paths
from praisonmem.core.io.safetext import json_safe, printable
from praisonmem.core.sessions.ops import Change, resolve_all
from praisonmem.core.io.timeutil import now_iso
from praisonmem.core.sessions.workspace import session_file_name

PORTABLE_VERSION = 1  # DefaultSessionStore.PORTABLE_VERSION in 1.7.17
FORMAT = "praisonmem-sessions"
ROLES = ("user", "assistant", "system", "tool")


# ---------------------------------------------------------------- export


def load_for_export(paths: Paths, names: list[str], *, everything: bool = False) -> list[tuple[Path, dict[str, Any]]]:
    """Every requested session, read and validated; any unreadable one stops the export."""
    if everything:
        paths.require_home()
        targets = sessions.session_files(paths.sessions_dir)
    else:
        targets = resolve_all(paths, names)
    return [(path, sessions.load(path)) for path in targets]


def export_json(docs: list[tuple[Path, dict[str, Any]]]) -> str:
    payload = {"version": PORTABLE_VERSION, "format": FORMAT, "praisonmem_version": __version__,
               "exported_at": now_iso(), "sessions": [doc for _, doc in docs]}
    return json_safe(jsonfile.dumps(payload)) + "\n"


def export_jsonl(docs: list[tuple[Path, dict[str, Any]]]) -> str:
    import json

    lines = []
    for path, doc in docs:
        sid = sessions.raw_session_id(doc, path)
        for archived, key in ((True, "archived_messages"), (False, "messages")):
            for index, message in enumerate(sessions.messages_of(doc, key)):
                record = {"session_id": sid, "archived": archived, "index": index}
                record.update(message if isinstance(message, dict) else {"value": message})
                lines.append(json_safe(json.dumps(record, ensure_ascii=False)))
    return "".join(line + "\n" for line in lines)


def export_markdown(docs: list[tuple[Path, dict[str, Any]]]) -> str:
    from praisonmem.core.io.timeutil import epoch_of

    def when(value: Any) -> str:
        from datetime import datetime, timezone

        stamp = epoch_of(value)
        return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC") if stamp else ""

    out: list[str] = []
    for path, doc in docs:
        row = sessions.summarise(path, doc)  # the fields `session list` shows, read the same way
        out.append(f"# Session `{printable(str(row['session_id']))}`\n")
        facts = [("Agent", row["agent_name"]), ("User", row["user_id"]), ("Title", row["title"]),
                 ("Model", row["model"]), ("Created", when(row["created_at"])), ("Updated", when(row["updated_at"]))]
        out.extend(f"- **{k}:** {printable(str(v))}" for k, v in facts if v not in (None, ""))
        out.append("")
        for archived, key in ((True, "archived_messages"), (False, "messages")):
            for index, message in enumerate(sessions.messages_of(doc, key)):
                if not isinstance(message, dict):
                    continue
                label = f"{'archived ' if archived else ''}#{index} {printable(str(message.get('role', '?')))}"
                stamp = when(message.get("timestamp"))
                out.append(f"### {label}" + (f" · {stamp}" if stamp else ""))
                out.append("")
                content = message.get("content")
                if sessions.is_encrypted(content):
                    out.append("*(encrypted)*")
                elif content:
                    text = content if isinstance(content, str) else jsonfile.dumps(content)
                    out.append(printable(text, multiline=True))
                for call_id, name, arguments in sessions.tool_calls_of(message):
                    out.append(f"\n**Tool call** `{printable(str(name))}` (`{printable(str(call_id))}`):\n")
                    out.append(f"```json\n{printable(str(arguments), multiline=True)}\n```")
                if message.get("tool_call_id"):
                    out.append(f"\n*(result of tool call `{printable(str(message['tool_call_id']))}`)*")
                out.append("")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


# ---------------------------------------------------------------- import


@dataclass
class ImportPlan:
    items: list[tuple[dict[str, Any], Path, str]]  # document, target, action ("import"|"replace"|"skip")


def read_payload(file: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The sessions in an export file, or a clear error saying why it is not one."""
    if str(file) == "-":
        import sys

        raw = sys.stdin.buffer.read()
    else:
        raw = jsonfile.read_bytes(file)
    try:
        data = jsonfile.parse(raw, file)
    except PraisonMemError as exc:
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
    raise UsageError(f"{file}: not a praisonmem or PraisonAI session export "
                     "(expected {\"version\": 1, \"sessions\": [...]} or a session document)")


def validate_session(doc: Any, index: int) -> str:
    """Raise with the index and reason when a record cannot become a session file; else its id."""
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
        sessions.validate(doc, where)
    except PraisonMemError as exc:
        raise UsageError(exc.message) from exc
    if not isinstance(doc.get("messages"), list):  # the library's loader fails on anything else
        raise UsageError(f"{where}: 'messages' must be a list")
    checkpoint = doc.get("last_compaction")
    if checkpoint and not (isinstance(checkpoint, dict) and isinstance(checkpoint.get("message_index"), int)):
        raise UsageError(f"{where}: 'last_compaction' must be an object with an integer message_index")
    for key in ("messages", "archived_messages"):
        for i, message in enumerate(sessions.messages_of(doc, key)):
            if not isinstance(message, dict):
                raise UsageError(f"{where}: {key}[{i}] is not an object")
            if message.get("role") not in ROLES:
                raise UsageError(f"{where}: {key}[{i}] has role {message.get('role')!r}, not one of {', '.join(ROLES)}")
    return sid


def plan_import(paths: Paths, docs: list[dict[str, Any]], on_conflict: str) -> ImportPlan:
    if on_conflict not in ("fail", "skip", "replace"):
        raise UsageError(f"--on-conflict must be fail, skip or replace, got '{on_conflict}'")
    paths.require_home()
    targets: dict[Path, str] = {}
    items = []
    for index, doc in enumerate(docs):
        sid = validate_session(doc, index)
        target = paths.sessions_dir / session_file_name(sid)
        if target in targets:
            raise UsageError(f"session {index} ('{sid}') and '{targets[target]}' both map to {target.name}")
        targets[target] = sid
        items.append((doc, target, "replace" if target.exists() else "import"))
    conflicts = [target for _, target, action in items if action == "replace"]
    if conflicts and on_conflict == "fail":
        from praisonmem.core.errors import TargetExists

        shown = ", ".join(p.name for p in conflicts[:5]) + (" …" if len(conflicts) > 5 else "")
        raise TargetExists(f"{len(conflicts)} session(s) already exist ({shown}); nothing imported: "
                           "use --on-conflict skip or --on-conflict replace")
    if on_conflict == "skip":
        items = [(d, t, "skip" if a == "replace" else a) for d, t, a in items]
    return ImportPlan(items)


def run_import(plan: ImportPlan, *, on_conflict: str, dry_run: bool = False,
               timeout: float = jsonfile.LOCK_TIMEOUT) -> list[Change]:
    """Write each planned session under its lock; per-session outcome, failures recorded."""
    changes = []
    verbs = {"import": "imported", "replace": "replaced", "skip": "skipped"}
    for doc, target, action in plan.items:
        change = Change(verbs[action], doc["session_id"], str(target), dry_run)
        if action == "skip":
            change.detail = "already exists"
        if dry_run or action == "skip":
            changes.append(change)
            continue
        try:
            with jsonfile.locked(target, timeout):
                exists = jsonfile.exists(target)
                if exists and on_conflict == "skip":
                    change.action, change.detail = "skipped", "appeared during import"
                elif exists and on_conflict != "replace":
                    from praisonmem.core.errors import TargetExists

                    change.failed(TargetExists(f"{target.name} appeared during the import; not replaced"))
                else:
                    if exists:
                        jsonfile.read_current(target)  # refuse to replace a file that does not parse
                    jsonfile.write_locked(target, doc)
                    change.action = "replaced" if exists else "imported"
        except PraisonMemError as exc:
            change.failed(exc)
        changes.append(change)
    return changes
