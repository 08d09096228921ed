"""``praisonmem memory``: store, search, list, delete and reset memories; users, providers, extract."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer

from praisonmem.cli.options import (
    DryRunFlag,
    JsonFlag,
    LimitOption,
    MetaOption,
    NdjsonFlag,
    ProviderOption,
    UserIdOption,
    YesFlag,
    check_importance,
    parse_pairs,
)
from praisonmem.cli.output import Output, fmt_time, fmt_value, note, warn
from praisonmem.cli.prompts import confirm
from praisonmem.cli.state import State, state_of

app = typer.Typer(help="Store, search and manage agent memories (FileMemory, SQLite, plug-ins).",
                  no_args_is_help=True)

TypeOption = Annotated[list[str] | None, typer.Option("--type", metavar="TYPE",
                                                      help="short, long, entity or episodic (repeatable).")]


class ResetScope(str, Enum):
    short = "short"
    long = "long"
    all = "all"


def _provider(state: State, name: str | None, user: str | None):
    from praisonmem.core.memory.providers import open_provider

    paths = state.paths
    chosen = state.provider(name)
    # SQLite keeps the library's own user rule (a blank id = the unsuffixed files); others FileMemory's.
    user_id = state.setting("user_id", user) if chosen == "sqlite" else state.user_id(user)
    return open_provider(chosen, user_id=user_id, memory_dir=paths.memory_dir, project_dir=paths.project_dir,
                         timeout=state.lock_timeout)


def _types(provider, values: list[str] | None) -> list[str]:
    from praisonmem.core.memory.providers import Unsupported, parse_types

    types = parse_types(values)
    if provider.name != "file":
        extra = [t for t in types if t in ("entity", "episodic")]
        if extra and values:
            raise Unsupported(f"provider '{provider.name}' has no {' or '.join(extra)} memory; nothing searched")
        types = [t for t in types if t in ("short_term", "long_term")]
    return types


def _text_of(item: dict[str, Any]) -> str:
    for key in ("content", "text", "memory", "name"):
        if isinstance(item.get(key), str):
            return item[key]
    return ""


@app.command("store")
def store_command(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="What to remember.")],
    long: Annotated[bool, typer.Option("--long", help="Store in long-term memory (default: short-term).")] = False,
    importance: Annotated[float | None, typer.Option("--importance", metavar="F",
                                                     help="0..1 (default 0.5 short-term, 0.8 long-term).")] = None,
    meta: MetaOption = None,
    user_id: UserIdOption = None,
    provider: ProviderOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Store a memory and print its id (--json: the stored item).

    With the file provider the item is exactly what FileMemory writes (its keys,
    id rule and float timestamps), the user's config.json limits and
    auto-promotion apply, and a new user gets the library's default config. A
    config.json value that would make FileMemory delete items or raise (a
    negative or non-integer short_term_limit, a long_term_limit below 1) is
    refused with exit 4, naming the key, and nothing is stored.

    Example:

        praisonmem memory store "User prefers dark mode" --long --importance 0.9 --meta source=cli
    """
    from praisonmem.core.errors import UsageError

    if not text.strip():
        raise UsageError("the memory text must not be empty")
    check_importance(importance)
    metadata = parse_pairs(meta, "--meta")
    state = state_of(ctx)
    chosen = _provider(state, provider, user_id)
    chosen.require("store_long_term" if long else "store_short_term",
                   f"{'long' if long else 'short'}-term storage")
    item = chosen.store(text, long=long, importance=importance, metadata=metadata)
    out = Output(no_color=state.no_color)
    out.json(item) if as_json else out.raw(str(item["id"]))


@app.command("search")
def search_command(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for (case-insensitive).")],
    type_: TypeOption = None,
    limit: LimitOption = 10,
    filter_: Annotated[list[str] | None, typer.Option("--filter", metavar="KEY=VALUE",
                                                      help="Only items whose metadata (entities: attributes) "
                                                           "has KEY equal to VALUE (repeatable).")] = None,
    user_id: UserIdOption = None,
    provider: ProviderOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """Search memories, scored and ordered exactly as FileMemory.search.

    Score: 1.0 when the item contains the whole query, else 0.8 x the share of
    query words it contains; short- and long-term scores are multiplied by the
    item's importance. Entities match on name and attributes; episodic memory
    covers the last 7 local days. Ties keep the order short, long, entity,
    episodic; an empty query matches everything, as in the library. --json
    gives [{"type", "score", "item"}].

    Example:

        praisonmem memory search "dark mode" --type long --limit 5 --json
    """
    filters = parse_pairs(filter_, "--filter")
    state = state_of(ctx)
    chosen = _provider(state, provider, user_id)
    chosen.require("search", "search")
    types = _types(chosen, type_)
    hits = chosen.search(query, types, limit if limit and not filters else 10**9)
    if filters:
        hits = [h for h in hits if _matches(h["item"], filters)]
    if limit:
        hits = hits[:limit]
    out = Output(no_color=state.no_color)
    if not out.records(hits, as_json, as_ndjson):
        out.table(["TYPE", "SCORE", "ID", "TEXT"],
                  [[h["type"], "" if h["score"] is None else f"{h['score']:.3f}", str(h["item"].get("id", "")),
                    _text_of(h["item"])] for h in hits], wrap=["TEXT"])


def _matches(item: dict[str, Any], filters: dict[str, str]) -> bool:
    import json

    meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else item.get("attributes")
    if not isinstance(meta, dict):
        return False
    for key, wanted in filters.items():
        if key not in meta:
            return False
        value = meta[key]
        if not (str(value) == wanted or (not isinstance(value, str) and json.dumps(value) == wanted)):
            return False
    return True


@app.command("list")
def list_command(
    ctx: typer.Context,
    type_: TypeOption = None,
    user_id: UserIdOption = None,
    provider: ProviderOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List every memory of the chosen tiers (default: all), in file order.

    Entities are shown with their attributes and relationships; episodic items
    with their date.

    Example:

        praisonmem memory list --type entity --user-id alice
    """
    state = state_of(ctx)
    chosen = _provider(state, provider, user_id)
    chosen.require("list", "listing")
    rows = chosen.list(_types(chosen, type_))
    out = Output(no_color=state.no_color)
    if out.records(rows, as_json, as_ndjson):
        return
    table = []
    for row in rows:
        item = row["item"]
        if row["type"] == "entity":
            details = ", ".join(f"{k}={v}" for k, v in (item.get("attributes") or {}).items())
            rels = "; ".join(f"{r.get('type')} → {r.get('target')}" for r in item.get("relationships") or []
                             if isinstance(r, dict))
            text = f"{item.get('name')} ({item.get('entity_type')})" + (f" [{details}]" if details else "") + \
                (f" {{{rels}}}" if rels else "")
        else:
            text = _text_of(item)
        when = row.get("date") or fmt_time(item.get("created_at") or item.get("timestamp"), short=out.tty)
        table.append([row["type"], str(item.get("id", "")), fmt_value(item.get("importance")), when, text])
    out.table(["TYPE", "ID", "IMPORTANCE", "WHEN", "TEXT"], table, wrap=["TEXT"])


@app.command("delete")
def delete_command(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="The memory's id (an entity's name or id).")],
    type_: Annotated[str | None, typer.Option("--type", metavar="TYPE",
                                              help="Only look in short, long, entity or episodic memory.")] = None,
    user_id: UserIdOption = None,
    provider: ProviderOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Delete one memory by id: short-term, then long-term, then entities, then
    episodic (last 30 days), like FileMemory.delete_memory; --type narrows it.

    Example:

        praisonmem memory delete b38ae04c7880287b --yes
    """
    from praisonmem.core.errors import NotFound
    from praisonmem.core.memory.providers import parse_types

    state = state_of(ctx)
    chosen = _provider(state, provider, user_id)
    chosen.require("delete", "delete")
    tier = parse_types([type_])[0] if type_ is not None else None
    where = chosen.locate(memory_id, tier)
    if where is None:
        raise NotFound(f"no memory '{memory_id}' for user '{state.user_id(user_id)}' ({chosen.name} provider)")
    confirm(f"Delete {where['type']} memory '{memory_id}'?", yes=yes, dry_run=dry_run)
    result = where if dry_run else chosen.delete(memory_id, where["type"] if where["type"] != "memory" else None)
    if result is None:
        raise NotFound(f"memory '{memory_id}' disappeared before it could be deleted")
    out = Output(no_color=state.no_color)
    if as_json:
        out.json({**result, "dry_run": dry_run})
    else:
        out.raw(f"{'would delete' if dry_run else 'deleted'} {result['type']} memory {memory_id}")


@app.command("reset")
def reset_command(
    ctx: typer.Context,
    short: Annotated[bool, typer.Option("--short", help="Clear short-term memory (the default).")] = False,
    long: Annotated[bool, typer.Option("--long", help="Clear long-term memory.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Everything, like clear_all: keeps config.json, "
                                                     "sessions/ and checkpoints/.")] = False,
    user_id: UserIdOption = None,
    provider: ProviderOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Clear a memory tier for a user; --dry-run shows the counts.

    Example:

        praisonmem memory reset --all --user-id alice --dry-run
    """
    from praisonmem.core.errors import UsageError

    if short + long + all_ > 1:
        raise UsageError("give one of --short, --long, --all")
    what = "all" if all_ else "long" if long else "short"
    state = state_of(ctx)
    chosen = _provider(state, provider, user_id)
    chosen.require_reset(what)
    plan = chosen.reset(what, dry_run=True)
    described = ", ".join(f"{n} {k.replace('_', ' ')}" if n is not None else k.replace("_", " ")
                          for k, n in plan.items())
    confirm(f"Reset {what} memory of user '{state.user_id(user_id)}' ({described})?", yes=yes, dry_run=dry_run)
    counts = plan if dry_run else chosen.reset(what, dry_run=False)
    out = Output(no_color=state.no_color)
    if as_json:
        out.json({"reset": what, "user_id": state.user_id(user_id), "provider": chosen.name, "dry_run": dry_run,
                  "removed": counts})
    else:
        out.raw(f"{'would remove' if dry_run else 'removed'} {described}")


@app.command("users")
def users_command(
    ctx: typer.Context,
    provider: ProviderOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List the memory users found, with item counts per tier.

    Example:

        praisonmem memory users --json
    """
    from praisonmem.core.memory import filememory
    from praisonmem.core.memory import sqlitememory
    from praisonmem.core.memory.providers import Unsupported

    state = state_of(ctx)
    name = state.provider(provider)
    rows = []
    if name == "file":
        for user in filememory.users(state.paths.memory_dir):
            store = filememory.FileMemoryStore(state.paths.memory_dir, user, timeout=state.lock_timeout)
            counts = store.counts()
            rows.append({"user_id": user, "path": str(store.user_dir), **counts})
    elif name == "sqlite":
        for user in sqlitememory.users(state.paths.project_dir):
            store = sqlitememory.SqliteMemoryStore(state.paths.project_dir, user)
            rows.append({"user_id": user, "path": str(store.files["short_term"].parent),
                         "short_term": len(store.all("short_term")), "long_term": len(store.all("long_term"))})
    else:
        raise Unsupported(f"provider '{name}' cannot list its users")
    out = Output(no_color=state.no_color)
    if not out.records(rows, as_json, as_ndjson):
        keys = ["short_term", "long_term", "entities", "episodic", "summaries"] if name == "file" \
            else ["short_term", "long_term"]
        out.table(["USER"] + [k.upper().replace("_", "-") for k in keys],
                  [[r["user_id"] or "(no user)"] + ["?" if r.get(k) is None else str(r.get(k)) for k in keys]
                   for r in rows])
        for r in rows:
            for problem in r.get("unreadable") or []:
                warn(problem)


@app.command("providers")
def providers_command(ctx: typer.Context, as_json: JsonFlag = False, as_ndjson: NdjsonFlag = False) -> None:
    """List the memory providers (built-in and plug-ins) and what each supports.

    Plug-ins register a class under the entry-point group "praisonmem.providers";
    see the README.

    Example:

        praisonmem memory providers
    """
    from praisonmem.core.memory.providers import available

    infos = available()
    out = Output(no_color=state_of(ctx).no_color)
    if not out.records([i.to_json() for i in infos], as_json, as_ndjson):
        out.table(["NAME", "SOURCE", "SUPPORTS", "PROBLEM"],
                  [[i.name, i.source, ", ".join(i.supports), i.error or ""] for i in infos], wrap=["SUPPORTS"])


@app.command("extract")
def extract_command(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="A user message to extract facts from.")],
    assistant: Annotated[str | None, typer.Option("--assistant", metavar="TEXT",
                                                  help="The assistant's reply, extracted from too.")] = None,
    store: Annotated[bool, typer.Option("--store", help="Write what was found (default: preview only).")] = False,
    user_id: UserIdOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Extract names, preferences, roles, locations, projects and technologies
    with AutoMemory's patterns (no LLM). Preview by default; --store writes
    what the library would (an entity for a name, long-term items for the
    rest), skipping what this user's memory already holds.

    Example:

        praisonmem memory extract "My name is Bob and I prefer Rust for systems work." --store
    """
    from praisonmem.core.memory import automemory
    from praisonmem.core.memory.filememory import FileMemoryStore

    state = state_of(ctx)
    found = automemory.extract(text, assistant)
    target = FileMemoryStore(state.paths.memory_dir, state.user_id(user_id), timeout=state.lock_timeout)
    writes = automemory.planned_writes(target, found)
    if store:
        automemory.store_writes(target, writes)
    out = Output(no_color=state.no_color)
    if as_json:
        out.json([{**w.memory, "store_as": w.kind, "stored_text": w.content,
                   "status": ("already stored" if w.skipped else "stored" if store else "preview")}
                  for w in writes])
        return
    if not writes:
        note("nothing memorable found")
        return
    out.table(["TYPE", "CONTENT", "IMPORTANCE", "STORE AS", "STATUS"],
              [[w.memory["type"], w.memory["content"], f"{w.importance:g}",
                f"{w.kind}: {w.content}", "already stored" if w.skipped else "stored" if store else "preview"]
               for w in writes], wrap=["CONTENT", "STORE AS"])
