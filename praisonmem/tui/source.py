"""What the browser shows, read through the commands' core calls (no Textual here: plain data, testable alone).

* :func:`tree` — the left pane: the session stores (one ``session list`` over the home, or over ``--store``,
  grouped by the store each row names, with counts), FileMemory's users and their tiers (``memory users``),
  the learn stores (``learn list``) and the configured Upsonic database (``upsonic sessions``).
* :class:`Node` ``.rows()`` — the middle pane's rows of a node, as those commands list them.
* :func:`detail` — the right pane: one item rendered as its ``show`` command renders it.

Nothing here writes: every call is one of the read commands' own, which change no byte, mtime or lock file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from praisonmem.cli.output import fmt_cost, fmt_time, fmt_value
from praisonmem.core.errors import PraisonMemError
from praisonmem.tui import render
from praisonmem.tui.model import Kind, Selection

SESSION_COLUMNS = (("ID", 38), ("AGENT", 14), ("TITLE", 22), ("MSGS", 5), ("UPDATED", 16), ("STORE", 12))
MEMORY_COLUMNS = (("TYPE", 10), ("ID", 24), ("WHEN", 16), ("TEXT", 60))
LEARN_COLUMNS = (("STORE", 12), ("ID", 30), ("UPDATED", 16), ("CONTENT", 60))
UPSONIC_COLUMNS = (("ID", 30), ("TYPE", 8), ("AGENT", 14), ("USER", 14), ("MSGS", 5), ("UPDATED", 16))
# Which column stretches, and which go first when the pane is narrow (then the rightmost)
FLEX = {"session": 2, "memory": 3, "learn": 3, "upsonic": 0}
DROP = {"session": (5, 1, 3), "memory": (2,), "learn": (0, 2), "upsonic": (1, 3, 2)}


@dataclass
class Options:
    """The browse command's choices: the home, ``--store``, the key, the lock timeout, the cache, and the
    configured Upsonic database."""

    paths: Any
    store: Any = None  # the core's ``store`` argument (a label, a Location, or None: every store of the home)
    key: Any = None
    lock_timeout: float = 5.0
    cache: Any = None
    upsonic_db: str | None = None


@dataclass
class Filters:
    """``f``: only these sessions (``session list --agent/--user/--scope``, ``--store``, and ``--since DATE`` as
    ``usage --since`` reads a date: a session last written at or after it)."""

    agent: str | None = None
    user: str | None = None
    scope: str | None = None
    store: str | None = None
    since: str | None = None

    def active(self) -> bool:
        return any(v for v in (self.agent, self.user, self.scope, self.store, self.since))

    def describe(self) -> str:
        return " ".join(f"{k}={v}" for k, v in vars(self).items() if v)


@dataclass
class Node:
    """One node of the tree: what it is, its label and count, and how its rows are read."""

    kind: Kind | None  # None: a heading (its children hold the rows)
    label: str
    count: int | None = None
    store: Any = None  # a session node: the store label its rows are in (None: every store listed)
    context: dict[str, str] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)
    problem: str | None = None  # why this part of the home could not be read (shown, never a traceback)
    load: Callable[[], list[dict[str, Any]]] | None = None

    def title(self) -> str:
        return self.label if self.count is None else f"{self.label} ({self.count})"


# ---------------------------------------------------------------- sessions


def list_sessions(options: Options, filters: Filters | None = None) -> list[dict[str, Any]]:
    """Every readable and unreadable row ``session list --limit 0`` prints, with ``filters``' agent, user and
    scope applied by the core, and ``since`` after it."""
    from praisonmem.core import sessions

    f = filters or Filters()
    store = options.store
    if f.store and store is None:
        store = f.store
    result = sessions.list_sessions(options.paths, workspace=sessions.workspace_id, agent=f.agent or None,
                                    user=f.user or None, scope=f.scope or None, limit=0, store=store,
                                    cache=options.cache)
    rows = result.rows
    if f.since:
        from praisonmem.core import usage
        from praisonmem.core.io.timeutil import epoch_of

        low = usage.parse_date(f.since, "since")
        rows = [r for r in rows if not r["unreadable"] and (epoch_of(r["updated_at"]) or float("-inf")) >= low]
    return rows


def session_nodes(options: Options, rows: list[dict[str, Any]]) -> Node:
    """The "Sessions" heading: every row, then one child per store the rows name (in the order met)."""
    counts: dict[str, int] = {}
    for row in rows:
        label = str(row["store"])
        counts[label] = counts.get(label, 0) + 1
    top = Node("session", "Sessions", len(rows), store=None, load=lambda: rows)
    for label, count in counts.items():
        top.children.append(Node("session", label, count, store=label,
                                 load=lambda label=label: [r for r in rows if str(r["store"]) == label]))
    return top


def session_cells(row: dict[str, Any]) -> list[str]:
    if row["unreadable"]:
        name = row["session_id"] if row["session_id"] is not None else str(row["file"]).rsplit("/", 1)[-1]
        return [str(name), "", f"UNREADABLE: {row['error']}", "?", "", fmt_value(row["store"])]
    return [str(row["session_id"]), fmt_value(row["agent_name"]), fmt_value(row["title"]), str(row["message_count"]),
            fmt_time(row["updated_at"], short=True), fmt_value(row["store"])]


# ---------------------------------------------------------------- memory, learn, upsonic


def memory_nodes(options: Options) -> Node:
    """FileMemory's users (``memory users``), each with a child per tier and its count."""
    from praisonmem.core import memory

    top = Node(None, "FileMemory")
    try:
        report = memory.provider_users("file", options.paths, options.lock_timeout)
    except PraisonMemError as exc:
        top.problem = str(exc)
        return top
    for row in report.rows:
        user = str(row["user_id"])
        node = Node(None, user, sum(int(row.get(k) or 0) for k in report.counts))
        for tier in report.counts:
            node.children.append(Node("memory", tier, row.get(tier), context={"provider": "file", "user_id": user,
                                                                                  "tier": tier},
                                      load=lambda user=user, tier=tier: _memory_rows(options, user, tier)))
        top.children.append(node)
    top.count = len(top.children)
    return top


def _memory_rows(options: Options, user: str, tier: str) -> list[dict[str, Any]]:
    from praisonmem.core import memory

    provider = memory.open_provider("file", user_id=user, paths=options.paths, timeout=options.lock_timeout,
                                    cache=None)
    return memory.list_memory(provider, types=[_tier_type(tier)])


def _tier_type(tier: str) -> str:
    """``memory users``' count key as ``memory list --type`` names the tier."""
    return {"short_term": "short", "long_term": "long", "entities": "entity", "summaries": "summary"}.get(tier, tier)


def memory_cells(row: dict[str, Any]) -> list[str]:
    from praisonmem.core import memory

    item = row["item"] if isinstance(row["item"], dict) else {"summary": row["item"]}
    when = row.get("date") or fmt_time(item.get("created_at") or item.get("timestamp"), short=True, naive_utc=True)
    text = f"{item.get('name')} ({item.get('entity_type')})" if row["type"] == "entity" else memory.item_text(item)
    return [str(row["type"]), str(item.get("id", "")), when, str(text)]


def learn_nodes(options: Options) -> Node:
    """The learn stores ``learn list`` reads (the home's files and learn.db), one child per store."""
    from praisonmem.core import learn

    top = Node(None, "Learn")
    try:
        found, unreadable = learn.list_entries(options.paths)
    except PraisonMemError as exc:
        top.problem = str(exc)
        return top
    if unreadable:
        top.problem = f"unreadable learn store {unreadable[0]}"
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for entry in found:
        groups.setdefault((entry.store, entry.scope or "", entry.user_id or ""), []).append(entry.to_json())
    for (store, scope, user), rows in groups.items():
        label = "/".join(p for p in (scope, user, store) if p)
        top.children.append(Node("learn", label, len(rows), context={"store": store, "scope": scope, "user_id": user},
                                 load=lambda rows=rows: rows))
    top.count = sum(n.count or 0 for n in top.children)
    return top


def learn_cells(row: dict[str, Any]) -> list[str]:
    return [str(row["store"]), str(row.get("id")), fmt_time(row.get("updated_at"), short=True, naive_utc=True),
            str(row.get("content", ""))]


def upsonic_nodes(options: Options) -> Node | None:
    """The configured Upsonic database (``upsonic.db``): its sessions, as ``upsonic sessions`` lists them."""
    if not options.upsonic_db:
        return None
    from praisonmem.core import upsonic

    db = str(options.upsonic_db)
    top = Node("upsonic", f"Upsonic {db}", context={"db": db})
    try:
        rows, total = upsonic.open_store(db, timeout=options.lock_timeout).sessions_page(limit=0)
    except PraisonMemError as exc:
        top.problem = str(exc)
        return top
    top.count, top.load = total, lambda: rows
    return top


def upsonic_cells(row: dict[str, Any]) -> list[str]:
    when = row["updated_at"]
    return [str(row["session_id"]), fmt_value(row["session_type"]), fmt_value(row["agent_id"]),
            fmt_value(row["user_id"]), fmt_value(row["message_count"]),
            fmt_time(when, short=True) if isinstance(when, int) else fmt_value(when)]


COLUMNS = {"session": SESSION_COLUMNS, "memory": MEMORY_COLUMNS, "learn": LEARN_COLUMNS, "upsonic": UPSONIC_COLUMNS}
CELLS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "session": session_cells, "memory": memory_cells, "learn": learn_cells, "upsonic": upsonic_cells}


def item_id(kind: str, row: dict[str, Any]) -> str:
    if kind == "memory":
        item = row["item"]
        return str(item.get("id", "")) if isinstance(item, dict) else ""
    if kind == "learn":
        return str(row.get("id"))
    return str(row["session_id"] if row.get("session_id") is not None else row.get("file"))


# ---------------------------------------------------------------- the tree and the detail


def tree(options: Options, filters: Filters | None = None) -> tuple[list[Node], list[dict[str, Any]]]:
    """The tree's top nodes, and the session rows (listed once: the Sessions nodes share them)."""
    problem = None
    try:
        rows = list_sessions(options, filters)
    except PraisonMemError as exc:
        rows, problem = [], str(exc)
    sessions_node = session_nodes(options, rows)
    sessions_node.problem = problem
    nodes = [sessions_node, memory_nodes(options), learn_nodes(options)]
    upsonic_node = upsonic_nodes(options)
    if upsonic_node is not None:
        nodes.append(upsonic_node)
    return nodes, rows


def selection(options: Options, node: Node, row: dict[str, Any]) -> Selection:
    """The :class:`~praisonmem.tui.model.Selection` of ``row`` (of ``node``), named as the commands name it."""
    assert node.kind is not None
    kind = node.kind
    store = options.store if options.store is not None else row.get("store") if kind == "session" else None
    title = row.get("title") if kind == "session" else None
    return Selection(paths=options.paths, kind=kind, item=item_id(kind, row), store=store, key=options.key,
                     lock_timeout=options.lock_timeout, cache=options.cache,
                     title=None if title is None else str(title), context=dict(node.context))


def detail(selected: Selection, row: dict[str, Any], *, working: bool = False, width: int = 100) -> render.Captured:
    """The item as its ``show`` command renders it (a session: ``session show``, or ``--working``)."""
    if selected.kind == "session":
        if row.get("unreadable"):
            return render.pairs([("Session", str(row.get("session_id") or "")), ("File", str(row["file"])),
                                 ("Store", str(row["store"])), ("Unreadable", str(row["error"]))], width)
        from praisonmem.core import sessions

        view = sessions.show(selected.paths, selected.item, working=working, store=selected.store, key=selected.key)
        return render.session(view, width)
    if selected.kind == "upsonic":
        from praisonmem.core import upsonic

        store = upsonic.open_store(selected.context["db"], timeout=selected.lock_timeout)
        return render.upsonic_session(store.session(selected.item), width)
    return render.pairs(_item_pairs(selected.kind, row), width)


def _item_pairs(kind: str, row: dict[str, Any]) -> list[tuple[str, str]]:
    import json

    fields = row["item"] if kind == "memory" else row
    if not isinstance(fields, dict):
        fields = {"value": fields}
    pairs = [("type", str(row["type"]))] if kind == "memory" else []
    for key, value in fields.items():
        pairs.append((str(key), value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)))
    return pairs


def rows_of(node: Node) -> Sequence[dict[str, Any]]:
    return node.load() if node.load is not None else []
