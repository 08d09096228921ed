"""``praisonmem browse`` under Textual's pilot, on a copy of a home the real library wrote: the tree and the list
are ``session list``'s, the item is ``session show``'s rendering (and ``--working``'s), search is ``session
search``'s, the filter is ``session list``'s, and nothing in the home changes."""

from __future__ import annotations

import json

import pytest

from tests.helpers import snapshot
from tests.tui.conftest import browsing, listed, shown, strip_rules, wait_for

def run(coro):
    import asyncio

    return asyncio.run(coro)


def listing(cli, home, *args):
    result = cli("--home", home, "session", "list", "--limit", "0", "--json", *args)
    assert result.exit_code == 0, result.stderr
    return result.json()


def test_the_list_is_session_lists_rows_and_the_item_is_session_shows_rendering(cli, fixture_home):
    rows = listing(cli, fixture_home)
    readable = [r for r in rows if not r["unreadable"]]
    assert len(readable) >= 3

    async def go():
        async with browsing(fixture_home) as (app, pilot):
            assert [cells[0] for cells in listed(app)] == [r["session_id"] or r["file"].rsplit("/", 1)[-1]
                                                           for r in rows]
            tree = app.query_one("#tree")
            labels = [str(node.label) for node in tree.root.children]
            assert labels[0] == f"Sessions ({len(rows)})"
            stores = {r["store"] for r in rows}
            assert [str(n.label) for n in tree.root.children[0].children] == \
                [f"{s} ({sum(1 for r in rows if r['store'] == s)})" for s in dict.fromkeys(r["store"] for r in rows)]
            assert stores
            texts = {}
            for index, row in enumerate(rows):
                if row["unreadable"]:
                    continue
                app.query_one("#list").move_to(index)
                await wait_for(pilot, lambda: app.shown_item is not None and app.shown_item.item == row["session_id"]
                               and app.shown_item.store == row["store"])
                texts[row["session_id"]] = (shown(app), shown(app, "working"))
            return texts

    texts = run(go())
    assert len(texts) == len({r["session_id"] for r in readable})
    for session_id, (transcript, working) in texts.items():
        store = next(r["store"] for r in readable if r["session_id"] == session_id)
        show = cli("--home", fixture_home, "session", "show", session_id, "--store", store)
        assert show.exit_code == 0, show.stderr
        assert strip_rules(transcript) == show.stdout.rstrip("\n")
        show = cli("--home", fixture_home, "session", "show", session_id, "--store", store, "--working")
        assert strip_rules(working) == show.stdout.rstrip("\n")
