"""The tree's other nodes: FileMemory's users and tiers (as ``memory users`` and ``memory list`` read them), the
learn stores (``learn list``) and the configured Upsonic database (``upsonic sessions``, ``upsonic show``)."""

from __future__ import annotations

import asyncio
import json

from tests.tui.conftest import browsing, listed, pane_width, shown, wait_for


def node(app, *labels):
    """The tree node whose label starts with each of ``labels`` in turn."""
    at = app.query_one("#tree").root
    for label in labels:
        at = next(n for n in at.children if str(n.label).startswith(label))
    return at


async def select(app, pilot, tree_node):
    app.query_one("#tree").select_node(tree_node)
    await wait_for(pilot, lambda: app.node is tree_node.data)
    await pilot.pause()


def test_filememory_users_and_tiers_list_what_memory_list_lists(cli, fixture_home, project):
    home = fixture_home
    users = cli("--home", home, "memory", "users", "--json").json()
    alice = next(u for u in users if u["user_id"] == "alice")
    expected = cli("--home", home, "memory", "list", "--type", "long", "--user-id", "alice", "--json").json()
    assert expected

    async def go():
        async with browsing(home) as (app, pilot):
            top = node(app, "FileMemory")
            labels = [str(n.label) for n in top.children]
            tier = node(app, "FileMemory", "alice", "long_term")
            await select(app, pilot, tier)
            await wait_for(pilot, lambda: len(listed(app)) == len(expected))
            ids = [cells[1] for cells in listed(app)]
            await wait_for(pilot, lambda: app.shown_item is not None and app.shown_item.kind == "memory")
            return str(top.label), labels, str(tier.label), ids, shown(app), app.shown_item

    top, labels, tier, ids, text, selected = asyncio.run(go())
    assert top == f"FileMemory ({len(users)})"
    assert labels == [f"{u['user_id']} ({sum(u[k] for k in ('short_term', 'long_term', 'entities', 'episodic', 'summaries'))})"
                      for u in users]
    assert tier == f"long_term ({alice['long_term']})"
    assert ids == [str(row["item"]["id"]) for row in expected]
    first = expected[0]["item"]
    assert text.splitlines()[0].split() == ["type", "long_term"]
    assert f"content  {first['content']}" in text.replace("content     ", "content  ") or first["content"] in text
    assert (selected.item, dict(selected.context)) == (str(first["id"]), {"provider": "file", "user_id": "alice",
                                                                           "tier": "long_term"})


def test_learn_stores_list_what_learn_list_lists(cli, fixture_home):
    entries = cli("--home", fixture_home, "learn", "list", "--json").json()
    stores = {}
    for e in entries:
        stores.setdefault(f"{e['scope']}/{e['user_id']}/{e['store']}", []).append(e["id"])

    async def go():
        async with browsing(fixture_home) as (app, pilot):
            learn = node(app, "Learn")
            labels = [str(n.label) for n in learn.children]
            first = learn.children[0]
            await select(app, pilot, first)
            await wait_for(pilot, lambda: app.shown_item is not None and app.shown_item.kind == "learn")
            return str(learn.label), labels, [c[1] for c in listed(app)], shown(app)

    top, labels, ids, text = asyncio.run(go())
    assert top == f"Learn ({len(entries)})"
    assert labels == [f"{name} ({len(found)})" for name, found in stores.items()]
    assert ids == next(iter(stores.values()))
    entry = next(e for e in entries if e["id"] == ids[0])
    assert f"content" in text and entry["content"] in text and json.dumps(entry["metadata"]) in text


def test_the_configured_upsonic_database_lists_and_shows_as_the_upsonic_commands(cli, tty_cli, fixture_home, db):
    rows = cli("upsonic", "sessions", "--db", db, "--json", "--limit", "0").json()

    async def go():
        async with browsing(fixture_home, upsonic_db=str(db)) as (app, pilot):
            upsonic = node(app, "Upsonic")
            await select(app, pilot, upsonic)
            await wait_for(pilot, lambda: app.shown_item is not None and app.shown_item.kind == "upsonic")
            return str(upsonic.label), [c[0] for c in listed(app)], shown(app), app.shown_item.item, pane_width(app)

    label, ids, text, item, width = asyncio.run(go())
    assert label == f"Upsonic {db} ({len(rows)})"
    assert ids == [r["session_id"] for r in rows]
    show = tty_cli("upsonic", "show", item, "--db", db, width=width)
    assert text == show.stdout.rstrip("\n")
