"""``praisonmem memory``: store, search, list, delete and reset memories; users, providers, extract."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from praisonmem.cli.options import (
    DryRunFlag,
    ExportOutputOption,
    JsonFlag,
    LimitOption,
    MetaOption,
    NdjsonFlag,
    ProviderOption,
    UserIdOption,
    YesFlag,
    complete_memory_types,
    parse_pairs,
    table_options,
)
from praisonmem.cli.output import binary_stdout, fmt_size, fmt_time, fmt_value, note, plural, render_outcome, warn
from praisonmem.cli.prompts import confirm_and_run
from praisonmem.cli.state import State, state_of
from praisonmem.core import memory
from praisonmem.core.errors import UsageError

app = typer.Typer(help="Store, search and manage agent memories (FileMemory, SQLite, plug-ins).\n\nExample:\n\n"
                       "    praisonmem memory search \"dark mode\" --user-id alice", no_args_is_help=True)

ChromaPathOption = Annotated[Path | None, typer.Option(
    "--chroma-path", metavar="DIR", help="--provider chroma: the Chroma directory (default: .praisonai/chroma_db, "
                                         "or chroma_db_<user> with --user-id, as praisonaiagents names it).")]
TypeOption = Annotated[list[str] | None, typer.Option("--type", metavar="TYPE", autocompletion=complete_memory_types,
                                                      help="short, long, entity, episodic (repeatable; default: "
                                                           "these four), or summary.")]
FilterOption = Annotated[list[str] | None, typer.Option("--filter", metavar="KEY=VALUE",
                                                        help="Only items whose metadata (entities: attributes; "
                                                             "mem0-history: the event's columns) has KEY equal to "
                                                             "VALUE (repeatable).")]
HistoryDbOption = Annotated[str | None, typer.Option("--db", metavar="PATH",
                                                     help="mem0's history.db (--provider mem0-history; default "
                                                          "$MEM0_DIR/history.db, else ~/.mem0/history.db).")]
MEM0_HISTORY = "mem0-history"


def _provider(state: State, name: str | None, user: str | None, db: str | None = None,
              chroma_path: Path | None = None) -> Any:
    """The chosen provider (flag > environment > config > file) for the chosen user. For Chroma an unset user
    is no user, as praisonaiagents' Memory() without a user_id (chroma_db, memory_store)."""
    chosen = state.setting("provider", name)
    if chosen == MEM0_HISTORY and user is not None:
        raise UsageError("mem0's history.db records no user: --user-id does not apply to --provider mem0-history "
                         "(--filter actor_id=NAME or memory_id=ID narrows it)")
    if db is not None and chosen != MEM0_HISTORY:
        raise UsageError(f"--db applies to --provider {MEM0_HISTORY} only")
    who = state.settings.get("user_id", user)
    user_id = "" if chosen in ("chroma", "rag") and who.source == "default" else who.value
    return memory.open_provider(chosen, user_id=user_id, paths=state.paths, timeout=state.lock_timeout,
                                cache=state.cache, db=db, chroma_path=chroma_path)


def _say(provider: Any) -> None:
    """What the provider says about where it read or wrote (e.g. an older release's shared SQLite files)."""
    for message in provider.notes:
        note(message)


def _unknown_user(state: State, chosen: Any, user: str | None) -> None:
    """A user id given (--user-id, PRAISONMEM_USER_ID or the config's user_id) that no memory holds is said, as a
    mistyped --home is: a typo would otherwise read as an empty memory. Not for the default user, nor where the
    provider cannot list its users or holds none at all (the missing directory is said already)."""
    from praisonmem.core.errors import PraisonMemError

    who = state.settings.get("user_id", user)
    if who.source == "default" or not getattr(chosen, "user_id", None):
        return
    try:
        # rows of no user (an older release's shared files) name nobody: they neither list nor rule out a user
        known = [str(row["user_id"]) for row in type(chosen).users(state.paths, state.lock_timeout).rows
                 if row.get("user_id")]
    except PraisonMemError:
        return
    if known and who.value not in known:
        given = {"flag": "--user-id", "config": "config user_id"}.get(who.source, who.source.removeprefix("env "))
        shown = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
        warn(f"no memory of user '{who.value}' ({given}); the users with memories: {shown}")


def _looked(state: State, provider: str) -> None:
    """A read of FileMemory that found no memory directory says where it looked, as 'session list' does."""
    missing = state.paths.absent_memory() if provider == "file" else None
    if missing:
        warn(missing)


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
) -> int:
    """Store a memory and print its id (--json: its change record, the stored item).

    With the file provider the item is exactly what FileMemory writes (its keys,
    id rule and float timestamps), the user's config.json limits and
    auto-promotion apply, and a new user gets the library's default config. A
    config.json value that would make FileMemory delete items or raise (a
    negative or non-integer short_term_limit, a long_term_limit below 1) is
    refused with exit 4, naming the key, and nothing is stored.

    Example:

        praisonmem memory store "User prefers dark mode" --long --importance 0.9 --meta source=cli
    """
    metadata = parse_pairs(meta, "--meta")
    state = state_of(ctx)
    chosen = _provider(state, provider, user_id)
    outcome = memory.store_memory(chosen, text, long=long, importance=importance, metadata=metadata)
    _say(chosen)
    return render_outcome(state.output(as_json), outcome, ids=True)


@app.command("search")
@table_options
def search_command(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(metavar="QUERY", help="What to look for (case-insensitive).",
                                                show_default=False)] = None,
    type_: TypeOption = None,
    limit: LimitOption = 10,
    like: Annotated[str | None, typer.Option("--like", metavar="ID",
                                             help="--provider chroma: instead of QUERY, the items nearest to this "
                                                  "stored item's own vector (no model needed).")] = None,
    filter_: FilterOption = None,
    user_id: UserIdOption = None,
    provider: ProviderOption = None,
    db: HistoryDbOption = None,
    chroma_path: ChromaPathOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """Search memories, scored and ordered exactly as FileMemory.search.

    Score: 1.0 when the item contains the whole query, else 0.8 x the share of
    query words it contains; short- and long-term scores are multiplied by the
    item's importance. Entities match on name and attributes; episodic memory
    covers the last 7 local days. Ties keep the order short, long, entity,
    episodic; an empty query matches everything, as in the library. --json
    gives [{"type", "score", "item"}]. --type summary searches the user's
    summaries.json (scored like episodic items), which FileMemory.search does
    not; --provider mem0-history searches the old and new text of mem0's
    memory events.

    With --provider chroma the same word score runs over each document and
    its metadata values (no embedding model is needed), best first; --like ID
    instead ranks the items by cosine distance to that item's stored vector
    (score 1 - distance, as the library's search).

    Example:

        praisonmem memory search "dark mode" --type long --limit 5 --json
        praisonmem memory search --like 1796183033907891330 --provider chroma --user-id alice
    """
    filters = parse_pairs(filter_, "--filter")
    if (query is None) == (like is None):
        raise UsageError("give QUERY or --like ID (one of them)")
    state = state_of(ctx)
    chosen = _provider(state, provider, user_id, db, chroma_path)
    if like is not None:
        hits = memory.similar_memory(chosen, like, limit=limit)
    else:
        hits = memory.search_memory(chosen, query, types=type_, limit=limit, filters=filters)
    _say(chosen)
    _looked(state, state.setting("provider", provider))
    _unknown_user(state, chosen, user_id)
    out = state.output(as_json, as_ndjson)
    if out.records(hits):
        return
    if chosen.name == MEM0_HISTORY:
        _history_table(out, [h["item"] for h in hits], [h["score"] for h in hits])
    else:
        out.table(["TYPE", "SCORE", "ID", "TEXT"],
                  [[h["type"], "" if h["score"] is None else f"{h['score']:.3f}", str(h["item"].get("id", "")),
                    memory.item_text(h["item"])] for h in hits], truncate=["TEXT"],
                  optional=["SCORE"])


@app.command("list")
@table_options
def list_command(
    ctx: typer.Context,
    type_: TypeOption = None,
    filter_: FilterOption = None,
    user_id: UserIdOption = None,
    provider: ProviderOption = None,
    db: HistoryDbOption = None,
    chroma_path: ChromaPathOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List every memory of the chosen tiers (default: short, long, entity and
    episodic), in file order.

    Entities are shown with their attributes and relationships; episodic items
    with their date. --type summary lists the user's summaries.json (the
    summaries FileMemory.add_summary wrote; "memory users" counts them).
    --provider mem0-history lists mem0's memory events (history.db: ADD,
    UPDATE and DELETE, with the old and new text), oldest first.

    Example:

        praisonmem memory list --type summary --user-id alice
        praisonmem memory list --provider mem0-history --filter event=DELETE
    """
    filters = parse_pairs(filter_, "--filter")
    state = state_of(ctx)
    chosen = _provider(state, provider, user_id, db, chroma_path)
    rows = memory.list_memory(chosen, types=type_, filters=filters)
    _say(chosen)
    _looked(state, state.setting("provider", provider))
    _unknown_user(state, chosen, user_id)
    out = state.output(as_json, as_ndjson)
    if out.records(rows):
        return
    if chosen.name == MEM0_HISTORY:
        _history_table(out, [r["item"] for r in rows])
        return
    table = []
    for row in rows:
        item = row["item"]
        if not isinstance(item, dict):  # a summaries.json entry that is no object: shown as it is stored
            import json

            item = {"summary": json.dumps(item, ensure_ascii=False)}
        if row["type"] == "entity":
            details = ", ".join(f"{k}={v}" for k, v in (item.get("attributes") or {}).items())
            rels = "; ".join(f"{r.get('type')} → {r.get('target')}" for r in item.get("relationships") or []
                             if isinstance(r, dict))
            text = f"{item.get('name')} ({item.get('entity_type')})" + (f" [{details}]" if details else "") + \
                (f" {{{rels}}}" if rels else "")
        else:
            text = memory.item_text(item)
        # FileMemory stamps are epoch floats; SQLite's CURRENT_TIMESTAMP is UTC without a zone
        when = row.get("date") or fmt_time(item.get("created_at") or item.get("timestamp"),
                                           naive_utc=True)
        table.append([row["type"], str(item.get("id", "")), fmt_value(item.get("importance")), when, text])
    out.table(["TYPE", "ID", "IMPORTANCE", "WHEN", "TEXT"], table, truncate=["TEXT"],
              optional=["IMPORTANCE", "WHEN"])


@app.command("delete")
def delete_command(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="The memory's id (an entity's name or id).")],
    type_: Annotated[str | None, typer.Option("--type", metavar="TYPE", autocompletion=complete_memory_types,
                                              help="Only look in short, long, entity, episodic or summary "
                                                   "memory.")] = None,
    user_id: UserIdOption = None,
    provider: ProviderOption = None,
    db: HistoryDbOption = None,
    chroma_path: ChromaPathOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Delete one memory by id: short-term, then long-term, then entities, then
    episodic (last 30 days), like FileMemory.delete_memory; --type narrows it.
    --type summary deletes one summary of summaries.json (only there).

    With --provider mem0-history, ID is a history event's id (that event) or a
    memory_id (every event of that memory): deleted in one transaction with
    secure_delete, then the database is vacuumed when free pages still hold
    old text, so the deleted text stays in no page.

    With --provider chroma the item is deleted through chromadb, then its text
    is scrubbed from chromadb's log and SQLite's free pages, and every file of
    the directory is checked for it; refused (exit 4) while another process
    (an agent) has the store open.

    Example:

        praisonmem memory delete b38ae04c7880287b --yes
    """
    state = state_of(ctx)
    plan = memory.plan_delete_memory(_provider(state, provider, user_id, db, chroma_path), memory_id, type_=type_)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)


@app.command("export")
def export_command(
    ctx: typer.Context,
    output: ExportOutputOption = "-",
    user_id: UserIdOption = None,
    provider: ProviderOption = None,
    chroma_path: ChromaPathOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Export a user's memories as JSON lines (--provider chroma): a header
    line naming the collection, then one {"id", "document", "metadata",
    "embedding"} a line, the embedding's floats exactly as stored, so
    'memory import' gives the collection back. --json (with --output) prints
    a summary.

    Example:

        praisonmem memory export --provider chroma --user-id alice -o alice.jsonl
    """
    state = state_of(ctx)
    summary = memory.export_memory(_provider(state, provider, user_id, chroma_path), output=output,
                                   stdout=binary_stdout())
    if output != "-":
        state.output(as_json).document(summary) or note(f"exported {plural(summary['exported'], 'item')} to {output}")


@app.command("import")
def import_command(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(metavar="FILE", help="A 'memory export' file ('-': stdin).")],
    on_conflict: Annotated[str, typer.Option("--on-conflict", metavar="fail|skip",
                                             help="An id the collection holds already: fail (default, nothing "
                                                  "imported) or skip it.")] = "fail",
    user_id: UserIdOption = None,
    provider: ProviderOption = None,
    chroma_path: ChromaPathOption = None,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Import a 'memory export' file into a user's collection (--provider
    chroma), made as praisonaiagents makes it when absent. The whole file is
    checked first; refused (exit 4) while another process has the store open.

    Example:

        praisonmem memory import alice.jsonl --provider chroma --user-id alice
    """
    state = state_of(ctx)
    outcome = memory.import_memory(_provider(state, provider, user_id, chroma_path), source,
                                   on_conflict=on_conflict, dry_run=dry_run)
    return render_outcome(state.output(as_json), outcome)


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
) -> int:
    """Clear a memory tier for a user; --dry-run shows the counts.

    Example:

        praisonmem memory reset --all --user-id alice --dry-run
    """
    if short + long + all_ > 1:
        raise UsageError("give one of --short, --long, --all")
    tier = memory.ResetTier.all if all_ else memory.ResetTier.long if long else memory.ResetTier.short
    state = state_of(ctx)
    plan = memory.plan_reset_memory(_provider(state, provider, user_id), tier)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)


@app.command("users")
@table_options
def users_command(
    ctx: typer.Context,
    provider: ProviderOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List the memory users found, with item counts per tier.

    FileMemory user directories are listed by their real names, those an
    older release made from a raw user id (" alice ", team/alice; before
    praisonaiagents 1.6.58) too, with a warning saying why 1.7.17 does not
    read them (--json: "legacy").

    Example:

        praisonmem memory users --json
    """
    state = state_of(ctx)
    report = memory.provider_users(state.setting("provider", provider), state.paths, state.lock_timeout)
    _looked(state, state.setting("provider", provider))
    for message in report.notes:
        warn(message)
    out = state.output(as_json, as_ndjson)
    if out.records(report.rows):
        return
    out.table(["USER"] + [k.upper().replace("_", "-") for k in report.counts],
              [[_user_cell(r["user_id"])] + ["?" if r.get(k) is None else str(r.get(k)) for k in report.counts]
               for r in report.rows])
    for row in report.rows:
        for problem in row.get("unreadable") or []:
            warn(problem)


def _history_table(out: Any, events: list[dict[str, Any]], scores: list[float] | None = None) -> None:
    """mem0's memory events: what happened to which memory, when, and the text before and after."""
    rows = [[e["event"] or "", e["id"] or "", e["memory_id"] or "",
             fmt_time(e["updated_at"] or e["created_at"]), e["actor_id"] or "", e["role"] or "",
             e["old_memory"] or "", e["new_memory"] or ""] for e in events]
    headers = ["EVENT", "ID", "MEMORY-ID", "WHEN", "ACTOR", "ROLE", "OLD", "NEW"]
    if scores is not None:
        headers.insert(1, "SCORE")
        for row, score in zip(rows, scores):
            row.insert(1, f"{score:.3f}")
    out.table(headers, rows, truncate=["OLD", "NEW"], optional=["ACTOR", "ROLE", "WHEN"])


def _user_cell(user_id: str) -> str:
    """A user as the table shows it: quoted when spaces around it would otherwise be invisible."""
    if not user_id:
        return "(no user)"
    return f'"{user_id}"' if user_id != user_id.strip() else user_id


@app.command("providers")
@table_options
def providers_command(ctx: typer.Context, as_json: JsonFlag = False, as_ndjson: NdjsonFlag = False) -> None:
    """List the memory providers (built-in and plug-ins) and what each supports.

    Plug-ins register a class under the entry-point group "praisonmem.providers";
    see docs/memory.md.

    Example:

        praisonmem memory providers
    """
    infos = memory.available_providers()
    out = state_of(ctx).output(as_json, as_ndjson)
    if not out.records([i.to_json() for i in infos]):
        out.table(["NAME", "SOURCE", "SUPPORTS", "PROBLEM"],
                  [[i.name, i.source, ", ".join(i.supports), i.error or ""] for i in infos],
                  truncate=["SUPPORTS", "PROBLEM"])


@app.command("extract")
def extract_command(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="A user message to extract facts from.")],
    assistant: Annotated[str | None, typer.Option("--assistant", metavar="TEXT",
                                                  help="The assistant's reply, extracted from too.")] = None,
    store: Annotated[bool, typer.Option("--store", help="Write what was found (default: preview only).")] = False,
    user_id: UserIdOption = None,
    as_json: JsonFlag = False,
) -> int:
    """Extract names, preferences, roles, locations, projects and technologies
    with AutoMemory's patterns (no LLM). Preview by default; --store writes
    what the library would (an entity for a name, long-term items for the
    rest), skipping what this user's memory already holds.

    Example:

        praisonmem memory extract "My name is Bob and I prefer Rust for systems work." --store
    """
    state = state_of(ctx)
    outcome = memory.extract_memories(state.paths, state.setting("user_id", user_id), text, assistant=assistant,
                                      store=store, timeout=state.lock_timeout, cache=state.cache)
    return render_outcome(state.output(as_json), outcome)


class _ListByDefault(TyperGroup):
    """``memory sessions [--user-id U]`` means ``memory sessions list [--user-id U]``."""

    def parse_args(self, ctx, args):  # type: ignore[no-untyped-def]
        if not args or (args[0].startswith("-") and args[0] not in ("--help", "-h")):
            args = ["list", *args]
        return super().parse_args(ctx, args)


sessions_app = typer.Typer(cls=_ListByDefault, help="FileMemory's saved sessions (FileMemory.save_session): list "
                                                    "them, show or delete one.\n\nExample:\n\n"
                                                    "    praisonmem memory sessions --user-id alice")
app.add_typer(sessions_app, name="sessions")
SessionNameArgument = Annotated[str, typer.Argument(metavar="NAME", help="The name it was saved under "
                                                                       "(sessions/NAME.json).")]


@sessions_app.command("list")
@table_options
def sessions_list_command(
    ctx: typer.Context,
    user_id: UserIdOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List the user's saved sessions, newest first (as list_sessions orders
    them): name, when it was saved, its messages, short-term items and size.

    A file that does not parse is listed as unreadable, with a warning.

    Example:

        praisonmem memory sessions --user-id alice --json
    """
    state = state_of(ctx)
    rows = memory.list_saved_sessions(state.paths, state.setting("user_id", user_id), timeout=state.lock_timeout)
    _looked(state, "file")
    for row in rows:
        if row["unreadable"]:
            warn(row["unreadable"])
    out = state.output(as_json, as_ndjson)
    if out.records(rows):
        return
    out.table(["NAME", "SAVED", "MESSAGES", "SHORT-TERM", "SIZE"],
              [[r["name"], fmt_time(r["saved_at"]) if r["unreadable"] is None else "unreadable",
                fmt_value(r["messages"]), fmt_value(r["short_term"]), fmt_size(r["size"], out.tty)] for r in rows],
              truncate=["NAME"])


@sessions_app.command("show")
def sessions_show_command(
    ctx: typer.Context,
    name: SessionNameArgument,
    user_id: UserIdOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show one saved session: its conversation as a transcript (as session
    show prints one), or its short-term items when it saved no conversation.
    --json prints the file exactly as stored.

    Example:

        praisonmem memory sessions show standup --user-id alice
    """
    state = state_of(ctx)
    saved = memory.show_saved_session(state.paths, state.setting("user_id", user_id), name,
                                      timeout=state.lock_timeout)
    out = state.output(as_json)
    if out.machine:
        out.json_text(saved.raw.decode("utf-8", "replace"))
        return
    from praisonmem.cli.render.savedsession import render_saved_session

    render_saved_session(out, saved)


@sessions_app.command("delete")
def sessions_delete_command(
    ctx: typer.Context,
    name: SessionNameArgument,
    user_id: UserIdOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Delete one saved session: its sessions/NAME.json only (as
    FileMemory.delete_session), under praisonmem's per-user writer lock, with
    any temp file an interrupted save_session of it left.

    Example:

        praisonmem memory sessions delete standup --user-id alice --yes
    """
    state = state_of(ctx)
    plan = memory.plan_delete_saved_session(state.paths, state.setting("user_id", user_id), name,
                                            timeout=state.lock_timeout)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)
