"""Human rendering of a session (``session show``) and of search hits."""

from __future__ import annotations

from typing import Any

from praisonmem.cli.output import Output, fmt_cost, fmt_time, fmt_value, plural
from praisonmem.core.sessions import SessionView, Turn, gateway_chat, messages_of, summarise

PREFIXES = {"archived": "a", "spilled": "s", "gateway": "g"}  # before a turn's index: #a3, #s0, #g1
ROLE_STYLES = {"user": "bold cyan", "assistant": "bold green", "system": "bold magenta", "tool": "bold yellow"}


def render_session(out: Output, view: SessionView) -> None:
    doc = view.doc
    row = summarise(doc, session_id=view.session_id, file=view.file)  # as `session list` reads them
    header = [
        ("Session", view.session_id),
        ("File", view.file),
        ("Store", view.store),
        ("Agent", fmt_value(row["agent_name"]) or "-"),
        ("User", fmt_value(row["user_id"]) or "-"),
        ("Title", row["title"] or "-"),
        ("Model", fmt_value(row["model"]) or "-"),
        ("Tokens", fmt_value(row["total_tokens"]) or "-"),
        ("Cost", fmt_cost(row["cost"]) or "-"),
        ("Created", fmt_time(row["created_at"]) or "-"),
        ("Updated", fmt_time(row["updated_at"]) or "-"),
        ("Messages", _counts(row, view)),
    ]
    if view.copies:
        header.insert(3, ("Copies", _copies(view)))
    checkpoint = doc.get("last_compaction")
    if isinstance(checkpoint, dict) and checkpoint:
        header.append(("Checkpoint", _checkpoint(checkpoint)))
    if row["parent_id"]:
        header.append(("Parent", str(row["parent_id"])))
    width = max(len(k) for k, _ in header)
    for key, value in header:
        _kv(out, key, value, width)
    if view.hidden_before:
        out.line()
        out.line(f"… {view.hidden_before} earlier turns not shown (--tail)", style="dim")
    for turn in view.turns:
        out.line()
        _render_turn(out, turn)


def _copies(view: SessionView) -> str:
    others = ", ".join(view.copies["paired_with"])
    if view.copies["pair"] == "equal":
        return f"{others} holds the same session"
    if view.copies["stale"]:
        return f"STALE: {others} holds a newer, different copy"
    return f"{others} holds a different, older copy"


def _counts(row: dict[str, Any], view: SessionView) -> str:
    if gateway_chat(view.doc) is not None:
        return (f"{plural(row['message_count'], 'chat message')} in {plural(len(messages_of(view.doc)), 'gateway snapshot')}, "
                f"{row['archived_count']} archived")
    text = f"{row['message_count']} active, {row['archived_count']} archived"
    if view.spilled:
        text += f", {view.spilled} spilled (waiting in the spill dir, merged on the next load)"
    return text


def _checkpoint(cp: dict[str, Any]) -> str:
    parts = [f"resumes at message {cp.get('message_index')}"]
    if cp.get("tokens_before") is not None:
        parts.append(f"{cp.get('tokens_before')}→{cp.get('tokens_after')} tokens")
    if cp.get("timestamp") is not None:
        parts.append(fmt_time(cp.get("timestamp")))
    return ", ".join(parts)


def _kv(out: Output, key: str, value: str, width: int) -> None:
    """``Key  value``; on a terminal a long value (a title) wraps at spaces under itself, a path or id whole."""
    out.wrapped(value, indent=width + 2, lead=[(f"{key:<{width}}", "bold"), ("  ", "")])


def _label(turn: Turn) -> str:
    if turn.section == "checkpoint":
        return "summary"
    prefix = PREFIXES.get(turn.section, "")
    return f"#{prefix}{turn.index}"


def _markers(turn: Turn) -> list[str]:
    marks = []
    if turn.section == "archived":
        marks.append("archived")
    if turn.section == "spilled":
        marks.append("spilled: not yet merged into the file")
    if turn.section == "checkpoint":
        marks.append("compaction checkpoint: what the agent resumes with")
    if turn.section == "gateway":
        marks.append(f"gateway chat from {turn.sender or '?'}")
    if turn.compaction is not None:
        marks.append(f"summary of {turn.compaction} compacted messages")
    if turn.partial:
        marks.append("partial: interrupted or still streaming")
    if turn.tool_name is not None or (turn.role == "tool" and turn.tool_call_id):
        marks.append(f"result of {turn.tool_name or '?'} [{turn.tool_call_id}]")
    if turn.decrypted:
        marks.append("decrypted")
    else:
        if turn.encrypted_metadata:
            marks.append("metadata encrypted")
        if turn.encrypted_tool_calls:
            marks.append("tool calls encrypted")
    if turn.malformed:
        marks.append("not a message object")
    return marks


def render_turn(out: Output, turn: Turn) -> None:
    """One turn as ``session show`` prints it (``session watch`` prints them as they come)."""
    _render_turn(out, turn)


def _render_turn(out: Output, turn: Turn) -> None:
    title = f"{_label(turn)} {turn.role}"
    when = fmt_time(turn.timestamp)
    marks = _markers(turn)
    heading: list[str | tuple[str, str]] = [(title, ROLE_STYLES.get(turn.role, "bold"))]
    if out.tty:
        heading.insert(0, ("── ", "dim"))
    if when:
        heading.append((f" · {when}", "dim"))
    for mark in marks:
        heading.append((f" [{mark}]", "italic yellow" if mark.startswith(("partial", "spilled")) else "italic"))
    out.styled(*heading)
    if turn.encrypted and not turn.decrypted:
        out.line("‹encrypted content›", style="dim italic")
    elif turn.content:
        out.body(turn.content)
    for call in turn.tool_calls:
        out.body(f"→ tool call {call['name']}({call['arguments']}) [{call['id']}]", style="yellow")


def render_hits(out: Output, hits: list[dict[str, Any]]) -> None:
    if not out.tty:
        out.table(
            ["SESSION", "INDEX", "ARCHIVED", "ROLE", "SCORE", "SNIPPET", "STORE", "SECTION"],
            [[str(h["session_id"]), str(h["index"]), "yes" if h["archived"] else "no", str(h["role"]),
              f"{h['score']:g}", h["snippet"], h["store"], h["section"]] for h in hits],
        )
        return
    for hit in hits:
        where = f"#{PREFIXES.get(hit['section'], '')}{hit['index']}"
        out.styled((str(hit["session_id"]), "bold"), " ", (where, "cyan"), " ",
                   (str(hit["role"]), ROLE_STYLES.get(str(hit["role"]), "")), (f"  score {hit['score']:g}", "dim"),
                   (f"  {hit['store']}", "dim"),
                   *([(" [archived]", "italic")] if hit["archived"] else []),
                   *([(" [gateway chat]", "italic")] if hit["section"] == "gateway" else []))
        out.marked(hit["snippet"], hit["highlights"], style="bold reverse", indent="    ")
