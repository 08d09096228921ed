"""Uniting two histories of one agent, keeping the library's compaction structure.

Used by ``session adopt --merge`` and for an agent with both name-only files.
praisonaiagents keeps ``messages`` as the active window, ``[summary, *recent]``
once it has compacted, with every turn rolled out of it in ``archived_messages``
and an optional in-run checkpoint in ``last_compaction``. Sorting everything by
timestamp would break that: the summary is stamped at compaction time, later
than the turns after it, so it would land at the end, the library would resume
with it last and archive it as an ordinary turn on its next write. The rule:

* Every turn of both sides (archived or active; summaries aside) is kept once
  (an exact duplicate, same role, content and timestamp, once), in time order.
* The active window stays the newest part of that timeline: a turn older than
  the newest turn either side had archived goes to ``archived_messages``, so
  archived turns always precede active ones, as the library leaves them.
* One ``[Session Summary]`` message heads the window whenever either side had
  one or the merge archived turns itself. Its text is the sides' summaries (each
  without its prefix) and, for the turns the merge archived, a block in the
  library's ``Previous conversation: N messages`` form, in the time order of
  the turns they cover, joined by ``\\n---\\n`` as the library carries a summary
  forward; its ``compacted_count`` is the sum. A side's summary that the other
  side already carries (same text inside, all its archived turns archived
  there too) is not repeated, so merging again changes nothing.
* ``last_compaction``: the newer checkpoint is kept (an older one is dropped;
  its turns all stay). Its ``message_index`` points at the same turn, or
  earlier, at the first turn its side had not seen, so the working history
  (checkpoint summary + ``messages[message_index:]``) hides no adopted turn.
* Other fields: the first document's win, keys only the second has are added;
  the same for ``metadata``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from praisonmem.core.errors import CorruptFile
from praisonmem.core.io.timeutil import epoch_of
from praisonmem.core.sessions.documents import messages_of, metadata_of

SUMMARY_PREFIX = "[Session Summary]\n"
SUMMARY_JOIN = "\n---\n"


@dataclass
class _Turn:
    message: dict[str, Any]
    stamp: float
    order: int
    sides: set[int] = field(default_factory=set)
    archived_by: set[int] = field(default_factory=set)


@dataclass
class _Part:
    position: float  # where in the timeline the turns it covers start
    side: int | None  # None: the block for turns the merge archived
    text: str
    count: int
    message: dict[str, Any] | None = None


def is_summary(message: Any) -> bool:
    meta = message.get("metadata") if isinstance(message, dict) else None
    return isinstance(meta, dict) and bool(meta.get("compaction"))


def merge_documents(first: dict[str, Any], second: dict[str, Any], where: object) -> dict[str, Any]:
    """``first`` and ``second`` as one history (see the module doc); ``first``'s fields win."""
    sides = (first, second)
    turns, summaries, identity_of = _timeline(sides, where)
    cut = max((i for i, t in enumerate(turns) if t.archived_by), default=-1)
    parts = _summary_parts(summaries, turns, cut)
    head = _summary_message(parts, turns[: cut + 1])
    merged = _fields(first, second)
    merged["messages"] = ([head] if head else []) + [t.message for t in turns[cut + 1:]]
    if turns[: cut + 1] or "archived_messages" in merged:
        merged["archived_messages"] = [t.message for t in turns[: cut + 1]]
    checkpoint = _checkpoint(sides, turns, cut, parts, identity_of, merged["messages"])
    if checkpoint is not None:
        merged["last_compaction"] = checkpoint
    return merged


def _identity(message: dict[str, Any]) -> str:
    return json.dumps([message.get("role"), message.get("content"), message.get("timestamp")],
                      sort_keys=True, ensure_ascii=False, default=str)


def _timeline(sides: tuple[dict[str, Any], ...], where: object
              ) -> tuple[list[_Turn], list[tuple[int, dict[str, Any]]], dict[str, _Turn]]:
    """Every turn once, in time order (file order where stamps tie or are missing), and each side's summaries."""
    by_identity: dict[str, _Turn] = {}
    summaries: list[tuple[int, dict[str, Any]]] = []
    order = 0
    for side, doc in enumerate(sides):
        last = float("-inf")
        for key in ("archived_messages", "messages"):
            for i, message in enumerate(messages_of(doc, key)):
                if not isinstance(message, dict):
                    raise CorruptFile(str(where), f"{key}[{i}] is not an object; cannot merge")
                if key == "messages" and is_summary(message):
                    summaries.append((side, message))
                    continue
                stamp = epoch_of(message.get("timestamp"))
                last = stamp if stamp is not None else last
                turn = by_identity.setdefault(_identity(message), _Turn(message, last, order))
                order += 1
                turn.sides.add(side)
                if key == "archived_messages":
                    turn.archived_by.add(side)
    turns = sorted(by_identity.values(), key=lambda t: (t.stamp, t.order))
    return turns, summaries, by_identity


def _summary_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    return text[len(SUMMARY_PREFIX):] if text.startswith(SUMMARY_PREFIX) else text


def _count(message: dict[str, Any]) -> int:
    value = metadata_of(message).get("compacted_count")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _summary_parts(summaries: list[tuple[int, dict[str, Any]]], turns: list[_Turn], cut: int) -> list[_Part]:
    parts: list[_Part] = []
    for side, message in summaries:
        covered = [i for i, t in enumerate(turns) if side in t.archived_by]
        parts.append(_Part(covered[0] if covered else -1, side, _summary_text(message), _count(message), message))
    parts = [p for p in parts if not any(_carries(other, p, turns) for other in parts if other is not p)]
    moved = [i for i, t in enumerate(turns[: cut + 1]) if not t.archived_by]
    if moved:
        parts.append(_Part(moved[0], None, _block([turns[i].message for i in moved]), len(moved)))
    parts.sort(key=lambda p: p.position)
    return parts


def _carries(other: _Part, part: _Part, turns: list[_Turn]) -> bool:
    """``other`` already stands for ``part``: its text holds part's, and part's archived turns are archived there."""
    if other.side == part.side or part.text not in other.text or (other.text == part.text and other.side > part.side):
        return False
    return all(other.side in t.archived_by for t in turns if part.side in t.archived_by)


def _block(messages: list[dict[str, Any]]) -> str:
    """The library's deterministic summary block (``ContextCompressor._create_fallback_summary``), files aside."""
    counts: dict[Any, int] = {"user": 0, "assistant": 0, "tool": 0, "system": 0}
    tools: set[str] = set()
    for message in messages:
        role = message.get("role", "unknown")
        counts[role] = counts.get(role, 0) + 1
        name = metadata_of(message).get("name")
        if role == "tool" and isinstance(name, str):
            tools.add(name)
    lines = [f"Previous conversation: {len(messages)} messages", f"Message breakdown: {counts}"]
    if tools:
        lines.append(f"Tools used: {', '.join(sorted(tools))}")
    return "\n".join(lines)


def _summary_message(parts: list[_Part], archived: list[_Turn]) -> dict[str, Any] | None:
    if not parts:
        return None
    kept = [p.message for p in parts if p.message is not None]
    if kept:
        base = max(kept, key=lambda m: epoch_of(m.get("timestamp")) or float("-inf"))
    else:  # stamped like the turns it covers, so merging the same documents twice gives the same bytes
        base = {"role": "system", "content": "", "timestamp": max((t.stamp for t in archived), default=0.0),
                "metadata": {}}
    content = SUMMARY_PREFIX + SUMMARY_JOIN.join(p.text for p in parts)
    meta = {**metadata_of(base), "compaction": True, "compacted_count": sum(p.count for p in parts)}
    return {**base, "content": content, "metadata": meta}


def _fields(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    merged = dict(first)
    for key, value in second.items():
        if key not in merged:
            merged[key] = value
    if "metadata" in merged:
        first_meta, second_meta = metadata_of(first), metadata_of(second)
        merged["metadata"] = {**first_meta, **{k: v for k, v in second_meta.items() if k not in first_meta}}
    if not _valid_checkpoint(first.get("last_compaction")) and _valid_checkpoint(second.get("last_compaction")):
        merged.pop("last_compaction", None)  # replaced by the re-anchored one from the second side
    return merged


def _valid_checkpoint(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and isinstance(value.get("message_index"), int) \
        and not isinstance(value.get("message_index"), bool)


def _checkpoint(sides: tuple[dict[str, Any], ...], turns: list[_Turn], cut: int, parts: list[_Part],
                identity_of: dict[str, _Turn], messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The newer checkpoint, its ``message_index`` re-pointed into the merged window (``None``: none valid)."""
    found = [(side, doc["last_compaction"]) for side, doc in enumerate(sides)
             if _valid_checkpoint(doc.get("last_compaction"))]
    if not found:
        return None
    side, checkpoint = max(found, key=lambda item: (epoch_of(item[1].get("timestamp")) or float("-inf"), -item[0]))
    head_rank = cut + 0.5  # the summary heading the window stands for everything archived
    position = {id(t): i for i, t in enumerate(turns)}

    def rank(message: dict[str, Any]) -> float:
        if is_summary(message):
            return head_rank
        index = position[id(identity_of[_identity(message)])]
        return head_rank if index <= cut else float(index)

    own = messages_of(sides[side])
    index = max(0, checkpoint["message_index"])
    if index < len(own):
        anchor = rank(own[index])
    else:
        anchor = rank(own[-1]) + 0.25 if own else float("-inf")
    unseen = [rank(t.message) for t in turns if side not in t.sides]
    if any(p.side not in (side, None) for p in parts):
        unseen.append(head_rank)
    start = min([anchor, *unseen])
    new_index = next((i for i, m in enumerate(messages) if rank(m) >= start), len(messages))
    return {**checkpoint, "message_index": new_index}
