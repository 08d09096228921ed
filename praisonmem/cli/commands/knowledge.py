"""``praisonmem knowledge``: list, show, search, delete, export and import praisonaiagents' Knowledge items."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from praisonmem.cli.options import (
    DryRunFlag,
    ExportOutputOption,
    JsonFlag,
    LimitOption,
    NdjsonFlag,
    YesFlag,
    parse_pairs,
    table_options,
)
from praisonmem.cli.output import binary_stdout, fmt_time, note, plural, render_outcome
from praisonmem.cli.prompts import confirm_and_run
from praisonmem.cli.state import State, state_of
from praisonmem.core import knowledge

app = typer.Typer(help="Read and manage praisonaiagents' Knowledge store (Chroma, or the knowledge.db fallback)."
                       "\n\nExample:\n\n    praisonmem knowledge list --path .praisonai/knowledge/chroma",
                  no_args_is_help=True)

PathOption = Annotated[Path | None, typer.Option(
    "--path", metavar="DIR|FILE", help="A Chroma directory or a knowledge.db file (default: "
                                       ".praisonai/knowledge/chroma when it exists, else ./knowledge.db).")]
CollectionOption = Annotated[str, typer.Option("--collection", metavar="NAME",
                                               help="The Chroma collection (default: praisonai_knowledge).")]
WhereOption = Annotated[list[str] | None, typer.Option(
    "--where", metavar="KEY=VALUE", help="Only items whose metadata (knowledge.db: or scope column) has KEY "
                                         "equal to VALUE (repeatable).")]


def _store(state: State, path: Path | None, collection: str, *, must_exist: bool = True) -> Any:
    return knowledge.open_store(path, Path(), collection=collection, timeout=state.lock_timeout,
                                must_exist=must_exist)


def _table(out: Any, rows: list[dict[str, Any]], score: bool = False) -> None:
    head = (["SCORE"] if score else []) + ["ID", "WHEN", "METADATA", "TEXT"]
    table = []
    for row in rows:
        item = row["item"] if score else row
        meta = ", ".join(f"{k}={v}" for k, v in (item.get("metadata") or {}).items())
        when = fmt_time(item.get("created_at")) if item.get("created_at") is not None else ""
        table.append(([f"{row['score']:.3f}"] if score else []) + [item["id"], when, meta, item.get("document") or ""])
    out.table(head, table, truncate=["METADATA", "TEXT"], optional=["WHEN", "METADATA"])


@app.command("list")
@table_options
def list_command(
    ctx: typer.Context,
    path: PathOption = None,
    collection: CollectionOption = knowledge.COLLECTION,
    where: WhereOption = None,
    limit: Annotated[int, typer.Option("--limit", metavar="N", help="At most N items (0 = all).")] = 0,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List the knowledge items in stored order: id, text, metadata
    (knowledge.db: also user_id, agent_id, run_id, created_at). Read from a
    private copy of a Chroma store: nothing on disk changes.

    Example:

        praisonmem knowledge list --where user_id=alice --json
    """
    state = state_of(ctx)
    rows = knowledge.list_items(_store(state, path, collection), where=parse_pairs(where, "--where"), limit=limit)
    out = state.output(as_json, as_ndjson)
    if not out.records(rows):
        _table(out, rows)


@app.command("show")
def show_command(
    ctx: typer.Context,
    item_id: Annotated[str, typer.Argument(metavar="ID", help="The item's id.")],
    path: PathOption = None,
    collection: CollectionOption = knowledge.COLLECTION,
    as_json: JsonFlag = False,
) -> None:
    """Show one knowledge item (--json: the record as stored).

    Example:

        praisonmem knowledge show 1796183033907891330
    """
    state = state_of(ctx)
    item = knowledge.show_item(_store(state, path, collection), item_id)
    out = state.output(as_json)
    if not out.document(item):
        out.table(["KEY", "VALUE"], [["id", item["id"]], *[[f"metadata.{k}", str(v)] for k, v in
                                                            item["metadata"].items()],
                                     *[[k, fmt_time(item[k]) if k == "created_at" else str(item[k])]
                                       for k in ("user_id", "agent_id", "run_id", "created_at")
                                       if item.get(k) is not None],
                                     ["text", item.get("document") or ""]])


@app.command("search")
@table_options
def search_command(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(metavar="QUERY", help="Words to look for (case-insensitive).",
                                                show_default=False)] = None,
    like: Annotated[str | None, typer.Option("--like", metavar="ID",
                                             help="Instead of QUERY: the items nearest to this item's stored "
                                                  "vector (Chroma only; no model needed).")] = None,
    where: WhereOption = None,
    limit: LimitOption = 10,
    path: PathOption = None,
    collection: CollectionOption = knowledge.COLLECTION,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """Search knowledge items without any model: by words (1.0 when the text
    or a metadata value holds the whole query, else 0.8 x the share of its
    words found), or with --like ID by cosine distance to that item's stored
    vector (score 1 - distance, as the library's search). --json gives
    [{"score", "item"}], best first.

    Example:

        praisonmem knowledge search "capital portugal" --where user_id=alice
    """
    state = state_of(ctx)
    hits = knowledge.search_items(_store(state, path, collection), query, like=like,
                                  where=parse_pairs(where, "--where"), limit=limit)
    out = state.output(as_json, as_ndjson)
    if not out.records(hits):
        _table(out, hits, score=True)


@app.command("delete")
def delete_command(
    ctx: typer.Context,
    item_ids: Annotated[list[str], typer.Argument(metavar="ID...", help="The items' ids.")],
    path: PathOption = None,
    collection: CollectionOption = knowledge.COLLECTION,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Delete knowledge items; every id must exist, else nothing is deleted.
    Through chromadb (or one SQLite transaction), then scrubbed: no copy of the
    deleted text stays in chromadb's log or in SQLite's free pages. Refused
    (exit 4) while another process (an agent) has a Chroma store open.

    Example:

        praisonmem knowledge delete 1796183033907891330 --yes
    """
    state = state_of(ctx)
    plan = knowledge.plan_delete(_store(state, path, collection), item_ids)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)


@app.command("export")
def export_command(
    ctx: typer.Context,
    output: ExportOutputOption = "-",
    path: PathOption = None,
    collection: CollectionOption = knowledge.COLLECTION,
    as_json: JsonFlag = False,
) -> None:
    """Export every knowledge item as JSON lines: a header line, then one
    record a line (a Chroma store's with its embedding, floats exactly as
    stored), for 'knowledge import'.

    Example:

        praisonmem knowledge export -o knowledge.jsonl
    """
    state = state_of(ctx)
    summary = knowledge.export_items(_store(state, path, collection), output=output, stdout=binary_stdout())
    if output != "-":
        state.output(as_json).document(summary) or note(f"exported {plural(summary['exported'], 'item')} to {output}")


@app.command("import")
def import_command(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(metavar="FILE", help="A 'knowledge export' file ('-': stdin).")],
    path: PathOption = None,
    collection: CollectionOption = knowledge.COLLECTION,
    on_conflict: Annotated[str, typer.Option("--on-conflict", metavar="fail|skip",
                                             help="An id the store holds already: fail (default, nothing "
                                                  "imported) or skip it.")] = "fail",
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Import a 'knowledge export' file; a store that does not exist yet is
    made as the library makes it (a Chroma directory, or knowledge.db when
    --path ends in .db). The whole file is checked before anything is written.

    Example:

        praisonmem knowledge import knowledge.jsonl --path /tmp/restored-chroma
    """
    state = state_of(ctx)
    outcome = knowledge.import_items(_store(state, path, collection, must_exist=False), source,
                                     on_conflict=on_conflict, dry_run=dry_run)
    return render_outcome(state.output(as_json), outcome)
