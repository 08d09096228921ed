"""What one session records about its usage: tokens, cost and turns, read from where each writer puts them.

Nothing here computes or estimates a number. Where the libraries write usage (checked against the
installed praisonaiagents 1.7.17, praisonai 4.7.19 and upsonic 0.77.3):

* ``metadata.total_tokens`` / ``metadata.cost`` (and their top-level mirrors, ``token_count``): written by
  ``Agent._persist_session_stats`` after every turn, the agent's running totals (prompt + completion, no
  split);
* ``metadata.usage``: a usage object in the OpenAI (``prompt_tokens``/``completion_tokens``/``total_tokens``)
  or input/output shape, as integrations and hand-written stores keep it;
* ``total_input_tokens`` / ``total_output_tokens`` / ``total_cost``: the unified CLI session
  (``UnifiedSession``, top level) and the local managed agent (in ``metadata``);
* per-message ``usage`` (or ``metadata.usage``): used only when the session records no total, which already
  counts them;
* Upsonic: the session row's ``usage`` (``TaskUsage.to_dict()``, which drops every key whose value is 0); for a
  session whose ``usage`` is null, the rows of the usage registry's ledger (``upsonic_usage_entries``, one per LLM
  call, written when a registry is attached to the storage) whose ``run_id`` is one of the session's runs.

A record whose every figure is zero counts as *no usage*: praisonaiagents writes ``total_tokens: 0`` and
``cost: 0.0`` on its streaming path, which does not count tokens, and a new unified session starts at 0, so a
zero says the writer did not count, not that nothing was used.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from praisonmem.core.io.timeutil import epoch_of
from praisonmem.core.sessions import gateway_chat, messages_of, metadata_of

FIGURES = ("prompt_tokens", "completion_tokens", "total_tokens", "cost")


@dataclass
class SessionUsage:
    """One session's usage as recorded (``None``: not recorded) and what it is grouped by."""

    store: str
    session_id: str
    when: float | None  # the last write (updated_at, else created_at): when the recorded totals were current
    model: str | None
    agent: str | None
    user: str | None
    turns: int  # user messages, archived ones too
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cost: float | None = None
    source: str | None = None  # where the figures were read, for --json

    @property
    def recorded(self) -> bool:
        return any(getattr(self, f) for f in FIGURES)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _count(value: Any) -> int | None:
    """A token count as stored (an integral number, 0 or more), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if value >= 0 else None


def _money(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def usage_object(usage: Any) -> dict[str, Any]:
    """The figures of a usage object in the OpenAI or the input/output shape (absent ones ``None``)."""
    if not isinstance(usage, dict):
        return dict.fromkeys(FIGURES)
    return {"prompt_tokens": _first(_count(usage.get("prompt_tokens")), _count(usage.get("input_tokens"))),
            "completion_tokens": _first(_count(usage.get("completion_tokens")), _count(usage.get("output_tokens"))),
            "total_tokens": _count(usage.get("total_tokens")),
            "cost": _first(_money(usage.get("cost")), _money(usage.get("total_cost")), _money(usage.get("cost_usd")))}


def _session_figures(doc: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    meta = metadata_of(doc)
    usage = usage_object(meta.get("usage"))
    sources = ["metadata.usage"] if any(v is not None for v in usage.values()) else []

    def unified(key: str, read: Any) -> Any:
        return _first(read(doc.get(key)), read(meta.get(key)))

    figures = {
        "prompt_tokens": _first(usage["prompt_tokens"], unified("total_input_tokens", _count)),
        "completion_tokens": _first(usage["completion_tokens"], unified("total_output_tokens", _count)),
        # metadata first: it wins over the top-level mirror when the library loads a session
        "total_tokens": _first(usage["total_tokens"], _count(meta.get("total_tokens")), _count(doc.get("total_tokens")),
                               _count(meta.get("token_count")), _count(doc.get("token_count"))),
        "cost": _first(usage["cost"], _money(meta.get("cost")), _money(doc.get("cost")), unified("total_cost", _money)),
    }
    if any(unified(k, _count if k != "total_cost" else _money) is not None
           for k in ("total_input_tokens", "total_output_tokens", "total_cost")):
        sources.append("total_input_tokens")
    if any(v is not None for v in (meta.get("total_tokens"), doc.get("total_tokens"), meta.get("token_count"),
                                   doc.get("token_count"), meta.get("cost"), doc.get("cost"))):
        sources.append("total_tokens")
    return figures, sources


def _message_figures(messages: list[Any]) -> dict[str, Any]:
    sums: dict[str, Any] = dict.fromkeys(FIGURES)
    for message in messages:
        if not isinstance(message, dict):
            continue
        inner = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
        found = _complete_total(usage_object(message.get("usage") if isinstance(message.get("usage"), dict)
                                             else inner.get("usage")))
        for key, value in found.items():
            if value is not None:
                sums[key] = (sums[key] or 0) + value
    return sums


def _complete_total(figures: dict[str, Any]) -> dict[str, Any]:
    if figures["total_tokens"] is None and figures["prompt_tokens"] is not None \
            and figures["completion_tokens"] is not None:
        figures["total_tokens"] = figures["prompt_tokens"] + figures["completion_tokens"]
    return figures


def praisonai_usage(doc: dict[str, Any], *, store: str, session_id: str) -> SessionUsage:
    """A PraisonAI session document's usage (JSON files and ``sessions.db`` alike)."""
    meta = metadata_of(doc)
    messages = messages_of(doc, "archived_messages") + messages_of(doc)
    chat = gateway_chat(doc)
    turns = sum(1 for m in (chat if chat is not None else messages) if isinstance(m, dict) and m.get("role") == "user")
    figures, sources = _session_figures(doc)
    if not any(figures.values()):
        figures, sources = _message_figures(messages), ["messages"]
    record = SessionUsage(
        store=store, session_id=session_id,
        when=_first(epoch_of(doc.get("updated_at")), epoch_of(doc.get("created_at"))),
        model=_first(_text(meta.get("model")), _text(doc.get("model")), _text(doc.get("llm")),
                     _text(meta.get("llm")), _text(doc.get("current_model"))),
        agent=_text(doc.get("agent_name")), user=_text(doc.get("user_id")), turns=turns,
        **_complete_total(figures))
    record.source = "+".join(sources) if record.recorded else None
    return record


def upsonic_usage(row: dict[str, Any], *, store: str, entries: list[dict[str, Any]] | None = None) -> SessionUsage:
    """An Upsonic session row's usage: its ``usage`` column (a missing key there is 0, as the library drops them),
    else the ledger ``entries`` of its runs."""
    from praisonmem.core.upsonic import parts

    agent_data = row.get("agent_data") if isinstance(row.get("agent_data"), dict) else {}
    found = parts(row.get("messages"))
    turns = sum(1 for p in found if p.get("part_kind") == "user-prompt")
    if not turns and isinstance(row.get("runs"), dict):
        turns = len(row["runs"])
    models = [p.get("model_name") for p in found if p.get("kind") == "response" and _text(p.get("model_name"))]
    usage = row.get("usage")
    figures: dict[str, Any] = dict.fromkeys(FIGURES)
    if isinstance(usage, dict):
        prompt = _count(usage.get("input_tokens", 0))
        completion = _count(usage.get("output_tokens", 0))
        figures = {"prompt_tokens": prompt, "completion_tokens": completion,
                   "total_tokens": None if prompt is None or completion is None else prompt + completion,
                   "cost": _money(usage.get("cost"))}
    elif entries:
        figures = _entry_figures(entries)
    record = SessionUsage(
        store=store, session_id=str(row.get("session_id")),
        when=_first(epoch_of(row.get("updated_at")), epoch_of(row.get("created_at"))),
        model=_first(_text(agent_data.get("model_name")), models[-1] if models else None),
        agent=_first(_text(agent_data.get("agent_name")), _text(row.get("agent_id"))),
        user=_text(row.get("user_id")), turns=turns, **figures)
    record.source = ("upsonic.usage" if isinstance(usage, dict) else "upsonic_usage_entries") if record.recorded else None
    return record


def _entry_figures(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The sums of ledger rows (their token columns are NOT NULL; ``cost_usd`` is null when not priced)."""
    sums: dict[str, Any] = dict.fromkeys(FIGURES)
    for entry in entries:
        for key, column, read in (("prompt_tokens", "input_tokens", _count), ("completion_tokens", "output_tokens",
                                                                              _count), ("cost", "cost_usd", _money)):
            value = read(entry.get(column))
            if value is not None:
                sums[key] = (sums[key] or 0) + value
    return _complete_total(sums)


def ledger_by_session(rows: list[dict[str, Any]], entries: list[dict[str, Any]]) -> tuple[dict[str, list[dict[str, Any]]],
                                                                                         int]:
    """The ledger rows of each session without a ``usage`` column (matched by run id), and how many rows belong to
    no session (a session with a ``usage`` column already counts its runs' rows)."""
    owner: dict[str, tuple[str, bool]] = {}
    for row in rows:
        runs = row.get("runs") if isinstance(row.get("runs"), dict) else {}
        for run_id in runs:
            owner[str(run_id)] = (str(row.get("session_id")), isinstance(row.get("usage"), dict))
    found: dict[str, list[dict[str, Any]]] = {}
    unattached = 0
    for entry in entries:
        match = owner.get(str(entry.get("run_id"))) if entry.get("run_id") is not None else None
        if match is None:
            unattached += 1
        elif not match[1]:
            found.setdefault(match[0], []).append(entry)
    return found, unattached
