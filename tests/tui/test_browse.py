"""``praisonmem browse`` under Textual's pilot, on a copy of a home the real library wrote: the tree and the list
are ``session list``'s, the item is ``session show``'s rendering (and ``--working``'s), search is ``session
search``'s, the filter is ``session list``'s, and nothing in the home changes."""

from __future__ import annotations

import json

import pytest

from tests.helpers import snapshot
from tests.tui.conftest import browsing, listed, pane_width, screen_text, shown, wait_for

def run(coro):
    import asyncio

    return asyncio.run(coro)


def listing(cli, home, *args):
    result = cli("--home", home, "session", "list", "--limit", "0", "--json", *args)
    assert result.exit_code == 0, result.stderr
    return result.json()


def test_the_list_is_session_lists_rows_and_the_item_is_session_shows_rendering(cli, tty_cli, fixture_home):
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
                texts[row["session_id"]] = (shown(app), shown(app, "working"), pane_width(app))
            return texts

    texts = run(go())
    assert len(texts) == len({r["session_id"] for r in readable})
    for session_id, (transcript, working, width) in texts.items():
        store = next(r["store"] for r in readable if r["session_id"] == session_id)
        show = tty_cli("--home", fixture_home, "session", "show", session_id, "--store", store, width=width)
        assert show.exit_code == 0, show.stderr
        assert transcript == show.stdout.rstrip("\n")
        show = tty_cli("--home", fixture_home, "session", "show", session_id, "--store", store, "--working", width=width)
        assert working == show.stdout.rstrip("\n")


def test_keys_move_open_go_back_and_the_tree_lists_one_store(cli, fixture_home):
    rows = listing(cli, fixture_home)

    async def go():
        async with browsing(fixture_home, size=(80, 24)) as (app, pilot):
            rowlist = app.query_one("#list")
            assert app.screen.has_class("narrow") and not app.screen.has_class("opened")
            assert app.query_one("#detail").display is False  # 80 columns: the list, then the item on Enter
            await pilot.press("down", "down")
            assert rowlist.cursor == 2
            await wait_for(pilot, lambda: app.shown_item is not None and app.shown_item.item == rows[2]["session_id"])
            await pilot.press("enter")
            assert app.screen.has_class("opened") and app.query_one("#middle").display is False
            await pilot.press("escape")
            assert not app.screen.has_class("opened") and app.focused is rowlist
            await pilot.press("end")
            assert rowlist.cursor == len(rows) - 1
            await pilot.press("home", "j", "k", "pagedown")
            assert rowlist.cursor == min(len(rows) - 1, rowlist.size.height - 2)
            await pilot.press("question_mark")
            assert type(app.screen).__name__ == "HelpScreen"
            keymap = str(app.screen.query_one("#keymap").render())
            for key in ("/", "Enter", "Esc", "f", "w", "r", "d", "x", "e", "q"):
                assert f"\n{key}" in "\n" + keymap or f", {key}" in keymap or f"{key}, " in keymap
            await pilot.press("escape")
            assert type(app.screen).__name__ == "Screen"
            # the tree: one store's node lists its rows only
            tree = app.query_one("#tree")
            store_node = tree.root.children[0].children[0]
            tree.select_node(store_node)
            await pilot.pause()
            await wait_for(pilot, lambda: app.node is store_node.data)
            label = store_node.data.store
            await wait_for(pilot, lambda: [c[0] for c in listed(app)] ==
                           [r["session_id"] for r in rows if r["store"] == label])
            await pilot.press("q")
        return app.return_code

    assert run(go()) == 0


def test_q_exits_0_and_ctrl_c_exits_130(fixture_home):
    async def go(key):
        async with browsing(fixture_home) as (app, pilot):
            await pilot.press(key)
        return app.return_code

    assert run(go("q")) == 0
    assert run(go("ctrl+c")) == 130


def write_session(home, session_id, **fields):
    """A session file as the library writes it (json.dumps(indent=2, ensure_ascii=False))."""
    doc = {"session_id": session_id, "messages": [{"role": "user", "content": "hello there", "timestamp": 1.0,
                                                   "metadata": {}}],
           "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00", "metadata": {}}
    doc.update(fields)
    (home / "sessions" / f"{session_id}.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False),
                                                         encoding="utf-8")


@pytest.mark.parametrize("word", ["weather", "hotel alfama", "Café"])
def test_slash_searches_as_you_type_with_session_searchs_hits_and_enter_opens_one(cli, tty_cli, fixture_home, word):
    expected = cli("--home", fixture_home, "session", "search", word, "--json", "--limit", "200")
    assert expected.exit_code == 0, expected.stderr
    hits = expected.json()
    assert hits

    async def go():
        async with browsing(fixture_home) as (app, pilot):
            await pilot.press("slash")
            assert app.focused.id == "search"
            await pilot.press(*[{" ": "space"}.get(c, c) for c in word])
            await wait_for(pilot, lambda: app.hits is not None and [h["snippet"] for h in app.hits] ==
                           [h["snippet"] for h in hits])
            found = [(h["session_id"], h["index"], h["section"], h["score"]) for h in app.hits]
            await pilot.press("enter")  # leaves the box for the list
            assert app.focused.id == "list"
            await pilot.press("down") if len(hits) > 1 else None
            target = app.hits[app.query_one("#list").cursor]
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.shown_item is not None and app.shown_item.item == target["session_id"])
            text = shown(app)
            await pilot.press("escape", "escape")  # the item, then the search: back to the session list
            await wait_for(pilot, lambda: app.hits is None and len(listed(app)) == 12)
            return found, target, text, pane_width(app)

    found, target, text, width = run(go())
    assert found == [(h["session_id"], h["index"], h["section"], h["score"]) for h in hits]
    show = tty_cli("--home", fixture_home, "session", "show", target["session_id"], "--store", target["store"], width=width)
    assert text == show.stdout.rstrip("\n")


@pytest.mark.parametrize("field, value, args", [
    ("agent", "Legacy Bot", ["--agent", "Legacy Bot"]),
    ("user", "erin", ["--user", "erin"]),
    ("scope", "legacy", ["--scope", "legacy"]),
    ("store", "json", ["--store", "json"]),
])
def test_f_filters_sessions_as_session_list_does(cli, fixture_home, field, value, args):
    expected = [r["session_id"] for r in listing(cli, fixture_home, *args)]
    assert 0 < len(expected) < 13 or field == "store"

    async def go():
        async with browsing(fixture_home) as (app, pilot):
            await pilot.press("f")
            assert type(app.screen).__name__ == "FilterScreen"
            app.screen.query_one(f"#filter-{field}").value = value
            app.screen.query_one(f"#filter-{field}").focus()
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.filters.active() and [c[0] for c in listed(app)] == expected)
            tree_label = str(app.query_one("#tree").root.children[0].label)
            status = str(app.query_one("#status").render())
            await pilot.press("f")
            app.screen.query_one(f"#filter-{field}").value = ""
            await pilot.press("enter")
            await wait_for(pilot, lambda: not app.filters.active() and len(listed(app)) == 12)
            return tree_label, status

    label, status = run(go())
    assert label == f"Sessions ({len(expected)})"
    assert f"filter: {field}={value}" in status


def test_f_since_keeps_sessions_last_written_on_or_after_the_date(cli, fixture_home):
    write_session(fixture_home, "old-one", updated_at="2025-06-01T10:00:00+00:00")
    write_session(fixture_home, "new-one", updated_at="2026-12-01T10:00:00+00:00")

    async def go(since):
        async with browsing(fixture_home) as (app, pilot):
            await pilot.press("f")
            app.screen.query_one("#filter-since").value = since
            app.screen.query_one("#filter-since").focus()
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.filters.since == since and app.loaded.is_set()
                           and app.query_one("#tree").root.children[0].data.count is not None)
            await wait_for(pilot, lambda: str(app.query_one("#tree").root.children[0].label) ==
                           f"Sessions ({len(listed(app))})")
            return [c[0] for c in listed(app)]

    assert run(go("2026-12-01")) == ["new-one"]
    every = run(go("2025-06-01"))
    assert "old-one" in every and "new-one" in every and len(every) == 14
    assert "old-one" not in run(go("2025-06-02"))


def test_a_bad_since_is_the_one_line_error_and_changes_no_filter(fixture_home):
    async def go():
        async with browsing(fixture_home) as (app, pilot):
            await pilot.press("f")
            app.screen.query_one("#filter-since").value = "last tuesday"
            app.screen.query_one("#filter-since").focus()
            await pilot.press("enter")
            await pilot.pause()
            return app.filters.active(), [n.message for n in app._notifications]

    active, messages = run(go())
    assert not active
    assert messages == ["praisonmem: error: since must be a duration back from now (7d, 12h, 2w, 30m) or a date (YYYY-MM-DD, UTC, or an ISO date-time), got 'last tuesday'"]


CRAFTED = "\x1b]0;pwned\x07[bold red]X[/] \x1b[2J\u202eevil\r"


def test_a_crafted_title_agent_and_message_reach_the_screen_escaped_never_as_markup(fixture_home):
    write_session(fixture_home, "crafted", title=CRAFTED, agent_name=CRAFTED,
                  messages=[{"role": "user", "content": CRAFTED, "timestamp": 1.0, "metadata": {}}],
                  updated_at="2027-01-01T00:00:00+00:00")  # the newest: the first row, shown at once

    async def go():
        async with browsing(fixture_home, size=(200, 50)) as (app, pilot):
            await wait_for(pilot, lambda: app.shown_item is not None and app.shown_item.item == "crafted")
            return screen_text(app), shown(app)

    screen, pane = run(go())
    for raw in ("\x1b", "\x07", "\u202e", "\r"):
        assert raw not in screen and raw not in pane
    escaped = "\\x1b]0;pwned\\x07[bold red]X[/] \\x1b[2J\\u202eevil\\r"
    assert f"Title     {escaped}" in pane and f"Agent     {escaped}" in pane
    assert "\\x1b]0;pwned\\x07[bold red]X[/]" in screen  # the list's TITLE cell and the pane: the markup is text
    assert screen.count("\\x1b]0;pwned") >= 3  # list (agent, title) and the detail pane


def test_browsing_changes_no_byte_mtime_or_lock_file_of_the_home(cli, fixture_home):
    before = snapshot(fixture_home)

    async def go():
        async with browsing(fixture_home, size=(100, 30)) as (app, pilot):
            for _ in range(len(listed(app))):
                await pilot.press("down")
                await pilot.pause()
            await pilot.press("enter", "t", "t", "escape", "slash", "w", "e", "a", "t", "h", "e", "r")
            await wait_for(pilot, lambda: app.hits is not None and len(app.hits) > 0)
            await pilot.press("enter", "enter")
            await wait_for(pilot, lambda: app.shown_item is not None)
            await pilot.press("w")  # follow, then stop
            await wait_for(pilot, lambda: app.followed is not None)
            await pilot.press("w", "escape", "escape", "f")
            app.screen.query_one("#filter-user").value = "erin"
            app.screen.query_one("#filter-user").focus()
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.filters.active() and len(listed(app)) == 3)
            tree = app.query_one("#tree")
            for node in list(tree.root.children):  # every node of the tree listed once
                for child in [node, *node.children]:
                    tree.select_node(child)
                    await pilot.pause()
            await pilot.press("ctrl+r", "q")

    run(go())
    assert snapshot(fixture_home) == before


def test_a_gateway_home_every_store_and_encrypted_sessions_decrypted_with_the_key(cli, tty_cli, gateway_home):
    """sessions.db, the project store, unified and legacy-run beside the JSON files; enc-1 decrypted with the key
    (as session show --key-file), and the same session opaque without it."""
    from praisonmem.core import sessions

    home = gateway_home.home
    rows = listing(cli, home)
    key = sessions.session_key(gateway_home.key_file)

    async def go(with_key):
        async with browsing(home, key=key if with_key else None) as (app, pilot):
            stores = [str(n.label) for n in app.query_one("#tree").root.children[0].children]
            index = next(i for i, r in enumerate(app.query_one("#list").rows) if r["session_id"] == "enc-1")
            app.query_one("#list").move_to(index)
            await wait_for(pilot, lambda: app.shown_item is not None and app.shown_item.item == "enc-1")
            return stores, shown(app), pane_width(app)

    stores, decrypted, width = run(go(True))
    _, opaque, _ = run(go(False))
    assert stores == [f"{s} ({sum(1 for r in rows if r['store'] == s)})" for s in dict.fromkeys(r["store"] for r in rows)]
    assert len(stores) >= 3
    store = next(r["store"] for r in rows if r["session_id"] == "enc-1")
    keyed = tty_cli("--home", home, "session", "show", "enc-1", "--store", store, "--key-file", gateway_home.key_file, width=width)
    plain = tty_cli("--home", home, "session", "show", "enc-1", "--store", store, width=width)
    assert decrypted == keyed.stdout.rstrip("\n")
    assert opaque == plain.stdout.rstrip("\n")
    assert decrypted != opaque and "‹encrypted content›" in opaque and "‹encrypted content›" not in decrypted


def test_the_mouse_selects_a_row_and_a_double_click_opens_it(fixture_home):
    async def go():
        async with browsing(fixture_home, size=(80, 24)) as (app, pilot):
            rowlist = app.query_one("#list")
            await pilot.click("#list", offset=(2, 4))  # the header line, then rows 0, 1, 2: row 3 is at y=4
            first = rowlist.cursor
            await wait_for(pilot, lambda: app.shown_item is not None and app.shown_item.item ==
                           rowlist.rows[3]["session_id"])
            opened_before = app.screen.has_class("opened")
            await pilot.click("#list", offset=(2, 2), times=2)
            return first, opened_before, rowlist.cursor, app.screen.has_class("opened")

    assert run(go()) == (3, False, 1, True)



@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
def test_keys_that_come_in_one_read_go_where_the_key_before_them_moved_the_focus(fixture_home, size):
    # A terminal hands keys typed (or sent) quickly to the app in one read: every one is queued before the first
    # is handled. The Enter that leaves the search box must move the focus before the next key is handed on,
    # or the second Enter is the box's again and the hit never opens.
    from textual import events

    async def go():
        async with browsing(fixture_home, size=size) as (app, pilot):
            await pilot.press("slash")
            await pilot.press(*"alfama")
            await wait_for(pilot, lambda: app.hits is not None and len(app.hits) == 2)
            target = app.hits[0]["session_id"]
            for _ in range(2):  # both queued at once, as the terminal delivers them
                app.post_message(events.Key("enter", "\r"))
            opened = lambda: app.screen.has_class("opened")  # noqa: E731  the second Enter opened the hit
            await wait_for(pilot, lambda: opened() and app.shown_item is not None and app.shown_item.item == target
                           and "Found Hotel Alfama Patio" in shown(app), timeout=20)
            focused = app.focused.id
            app.post_message(events.Key("q", "q"))
            await wait_for(pilot, lambda: app.return_code is not None)
            return target, focused, app.return_code

    target, focused, code = run(go())
    assert target == "compacted-demo"
    assert focused == "scroll-show"  # the transcript has the keys, no longer the search box
    assert code == 0


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
def test_slash_and_the_word_typed_in_one_read_all_go_to_the_search_box(fixture_home, size):
    from textual import events

    async def go():
        async with browsing(fixture_home, size=size) as (app, pilot):
            app.post_message(events.Key("slash", "/"))
            for c in "alfama":  # queued with the "/", before it is handled ("f" alone would open the filter)
                app.post_message(events.Key(c, c))
            await wait_for(pilot, lambda: app.hits is not None, timeout=20)
            return app.query_one("#search").value, len(app.hits), type(app.screen).__name__

    assert run(go()) == ("alfama", 2, "Screen")


def test_q_right_behind_the_enters_that_open_a_hit_quits(fixture_home):
    # "q" queued behind the two Enters was the search box's ("alfamaq"): the browser searched on and never ended
    from textual import events

    async def go():
        async with browsing(fixture_home, size=(80, 24)) as (app, pilot):
            await pilot.press("slash", *"alfama")
            await wait_for(pilot, lambda: app.hits is not None and len(app.hits) == 2)
            for key, char in (("enter", "\r"), ("enter", "\r"), ("q", "q")):
                app.post_message(events.Key(key, char))
            await wait_for(pilot, lambda: app.return_code is not None, timeout=20)
            return app.return_code, app.query_one("#search").value

    assert run(go()) == (0, "alfama")
