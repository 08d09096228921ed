"""The browser's write actions (r, d, x, e) against the command each mirrors.

Each action is driven in Textual's headless pilot through a harness app that calls the hook
(``praisonmem.tui.actions.perform``) as the browser does. Each is held to the command: the plan is its dry run;
a no leaves every byte of the home as it was; a yes writes exactly what the command writes (the command is run
on a twin copy of the home, and the two compared byte for byte, or where the write is stamped with the time,
read back with praisonaiagents' own session store); a lock an agent holds gives the command's lock message and
changes nothing; text from a session reaches the screen escaped.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from praisonmem.cli.state import State
from praisonmem.tui.model import Selection
from tests.helpers import hold_flock, snapshot
from tests.tui.actions_harness import Harness, contents, screen_lines, settle, text_of, twin

SESSION = "my_chat"
SECRET = "sk-proj-" + "Q7fJ2kLm9XzP4rT8vB1nW6yH3cD5gA0e"  # an OpenAI project key's shape (scan's rules)


def selection(home: Path, item: str = SESSION, **extra) -> Selection:
    """What the browser selects for a session of ``home``: the command's own paths, cache and lock timeout."""
    state = State(home=str(home))
    fields = dict(lock_timeout=state.lock_timeout, cache=state.cache, title=None)
    fields.update(extra)
    return Selection(state.paths, "session", item, **fields)


def run(app: Harness, scenario) -> None:
    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await scenario(pilot)
    asyncio.run(main())


def lines(text: str) -> list[str]:
    return text.splitlines()


async def open_plan(app: Harness, pilot, key: str, fill=None) -> None:
    """Press ``key``; fill its form (``fill(screen)`` returns after setting the fields); wait for the plan."""
    app.act(key)
    await settle(app, pilot)
    if fill is not None:
        await fill(app.screen, pilot)
        await settle(app, pilot)
    assert type(app.screen).__name__ == "ConfirmScreen", app.notes
    await wait_armed(app, pilot)


async def wait_armed(app: Harness, pilot) -> None:
    """Until the confirmation counts a yes by key (it ignores one that comes with the Enter of the form)."""
    for _ in range(400):
        if app.screen.armed:
            return
        await pilot.pause(0.05)
    raise AssertionError("the confirmation never took a yes")


def rename_to(new_id: str | None = None, title: str | None = None):
    async def fill(screen, pilot) -> None:
        from textual.widgets import Input

        field = screen.query_one("#new-id" if new_id is not None else "#new-title", Input)
        field.value = new_id if new_id is not None else title
        field.focus()
        await pilot.pause()
        await pilot.press("enter")
    return fill


# ---------------------------------------------------------------- rename


def test_rename_shows_the_dry_run_and_a_yes_writes_what_the_command_writes(cli, fixture_home, tmp_path):
    other = twin(fixture_home, tmp_path / "twin")
    dry = cli("--home", other, "session", "rename", SESSION, "chat-archive", "--dry-run")
    done = cli("--home", other, "session", "rename", SESSION, "chat-archive")
    assert done.exit_code == 0
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "r", rename_to(new_id="chat-archive"))
        assert lines(text_of(app, "#confirm-plan")) == lines(dry.stdout)
        assert text_of(app, "#confirm-question") == "Rename session 'my_chat' to 'chat-archive'?"
        await pilot.press("y")
        await settle(app, pilot)

    run(app, scenario)
    assert contents(fixture_home) == contents(other)
    assert app.notes[-1] == (done.stdout.rstrip("\n"), "information")
    assert app.refreshed == ["chat-archive"]


@pytest.mark.parametrize("key", ["escape", "n"])
def test_a_no_to_the_rename_changes_nothing(fixture_home, key):
    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "r", rename_to(new_id="chat-archive"))
        await pilot.press(key)
        await settle(app, pilot)
        assert type(app.screen).__name__ != "ConfirmScreen"

    run(app, scenario)
    assert snapshot(fixture_home) == before
    assert app.notes == [("cancelled; nothing changed", "information")] and app.refreshed == []


def test_an_enter_that_comes_with_the_forms_own_is_not_a_yes(fixture_home, monkeypatch):
    from praisonmem.tui import confirm

    monkeypatch.setattr(confirm, "ARM_SECONDS", 3600.0)  # every key press of this test comes "too soon"
    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        app.act("r")
        await settle(app, pilot)
        await rename_to(new_id="chat-archive")(app.screen, pilot)  # the form's Enter
        await settle(app, pilot)
        assert type(app.screen).__name__ == "ConfirmScreen"
        for key in ("enter", "y", "enter"):  # a double tap, and more
            await pilot.press(key)
            await settle(app, pilot)
        assert type(app.screen).__name__ == "ConfirmScreen"  # still asking
        await pilot.press("n")  # a no counts at once
        await settle(app, pilot)
        assert type(app.screen).__name__ == "Screen"

    run(app, scenario)
    assert snapshot(fixture_home) == before
    assert app.notes == [("cancelled; nothing changed", "information")]


def test_escape_in_the_rename_form_changes_nothing_and_asks_nothing(fixture_home):
    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        app.act("r")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "RenameForm"
        await pilot.press("escape")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "Screen"

    run(app, scenario)
    assert snapshot(fixture_home) == before and app.notes == [] and app.refreshed == []


@pytest.mark.parametrize("change, problem", [
    ({"new-id": "a", "new-title": "b"}, "give NEW_ID to rename the session, or --title TEXT to set its title (not both)"),
    ({}, "nothing changed: edit the id to rename the session, or the title to retitle it"),
])
def test_the_rename_form_takes_one_change_as_the_command_does(fixture_home, change, problem):
    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        from textual.widgets import Input

        app.act("r")
        await settle(app, pilot)
        for name, value in change.items():
            app.screen.query_one(f"#{name}", Input).value = value
        await pilot.press("enter")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "RenameForm"
        assert text_of(app, "#problem") == problem

    run(app, scenario)
    assert snapshot(fixture_home) == before


def test_retitle_writes_what_the_command_writes_as_the_library_reads_it(cli, fixture_home, tmp_path):
    from praisonaiagents.session.store import DefaultSessionStore

    other = twin(fixture_home, tmp_path / "twin")
    dry = cli("--home", other, "session", "rename", SESSION, "--title", "Lisbon trip", "--dry-run")
    done = cli("--home", other, "session", "rename", SESSION, "--title", "Lisbon trip")
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "r", rename_to(title="Lisbon trip"))
        assert lines(text_of(app, "#confirm-plan")) == lines(dry.stdout)
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    assert app.notes[-1] == (done.stdout.rstrip("\n"), "information") and app.refreshed == [None]
    ours = DefaultSessionStore(session_dir=str(fixture_home / "sessions")).get_session(SESSION).to_dict()
    theirs = DefaultSessionStore(session_dir=str(other / "sessions")).get_session(SESSION).to_dict()
    assert ours["metadata"]["title"] == "Lisbon trip"
    # the write is stamped with its time (updated_at): everything else is the command's, as the library loads it
    assert {k: v for k, v in ours.items() if k != "updated_at"} == {k: v for k, v in theirs.items() if k != "updated_at"}
    stored = {p.name: p.read_bytes() for p in (fixture_home / "sessions").iterdir()}
    assert stored.keys() == {p.name for p in (other / "sessions").iterdir()}


# ---------------------------------------------------------------- delete


def test_delete_shows_the_commands_plan_and_a_yes_deletes_as_the_command_does(cli, fixture_home, tmp_path):
    other = twin(fixture_home, tmp_path / "twin")
    dry = cli("--home", other, "session", "delete", SESSION, "--dry-run")
    done = cli("--home", other, "session", "delete", SESSION, "--yes")
    assert done.exit_code == 0
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "d")
        assert lines(text_of(app, "#confirm-plan")) == lines(dry.stdout)
        assert text_of(app, "#confirm-question") == "Delete 1 session file (my_chat.json)?"
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    assert contents(fixture_home) == contents(other)
    assert not (fixture_home / "sessions" / "my_chat.json").exists()
    assert app.notes[-1] == ("deleted my_chat (my_chat.json)", "information") and app.refreshed == [None]


@pytest.mark.parametrize("key", ["escape", "n"])
def test_a_no_to_the_delete_changes_nothing(fixture_home, key):
    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "d")
        await pilot.press(key)
        await settle(app, pilot)

    run(app, scenario)
    assert snapshot(fixture_home) == before and app.refreshed == []


def test_a_session_gone_since_it_was_listed_is_the_commands_one_error_line(cli, fixture_home):
    (fixture_home / "sessions" / "my_chat.json").unlink()
    before = snapshot(fixture_home)
    expected = cli("--home", fixture_home, "session", "delete", SESSION, "--yes").stderr
    assert snapshot(fixture_home) == before
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        app.act("d")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "Screen"

    run(app, scenario)
    assert app.notes == [(expected.rstrip("\n"), "error")] and expected.count("\n") == 1
    assert snapshot(fixture_home) == before and app.refreshed == []


# ---------------------------------------------------------------- redact


def plant_secret(home: Path) -> None:
    """An agent's turn holding an API key, written by the library itself."""
    from praisonaiagents.session.store import DefaultSessionStore

    store = DefaultSessionStore(session_dir=str(home / "sessions"))
    store.add_message(SESSION, "user", f"my key is {SECRET}, keep it safe")


def choose_level(level: str):
    async def fill(screen, pilot) -> None:
        if level == "strict":
            await pilot.press("down")
        await pilot.press("enter")
    return fill


@pytest.mark.parametrize("level", ["standard", "strict"])
def test_redact_shows_the_plan_and_a_yes_rewrites_as_the_command_does(cli, fixture_home, tmp_path, level):
    plant_secret(fixture_home)
    other = twin(fixture_home, tmp_path / "twin")
    dry = cli("--home", other, "session", "redact", SESSION, "--level", level, "--dry-run")
    done = cli("--home", other, "session", "redact", SESSION, "--level", level, "--yes")
    assert done.exit_code == 0 and SECRET.encode() not in (other / "sessions" / "my_chat.json").read_bytes()
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "x", choose_level(level))
        assert lines(text_of(app, "#confirm-plan")) == lines(dry.stdout)
        assert text_of(app, "#confirm-question") == "Rewrite 1 session with their secrets redacted (my_chat.json)?"
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    assert contents(fixture_home) == contents(other)  # a redaction keeps updated_at: byte for byte
    assert app.notes[-1] == (done.stdout.rstrip("\n"), "information")


def test_a_no_to_the_redaction_changes_nothing(fixture_home):
    plant_secret(fixture_home)
    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "x", choose_level("standard"))
        await pilot.press("escape")
        await settle(app, pilot)

    run(app, scenario)
    assert snapshot(fixture_home) == before


def test_a_session_with_no_secret_is_skipped_without_a_question_as_the_command_says(cli, fixture_home, tmp_path):
    other = twin(fixture_home, tmp_path / "twin")
    done = cli("--home", other, "session", "redact", SESSION, "--yes")
    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        app.act("x")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "Screen"

    run(app, scenario)
    assert app.notes == [(done.stdout.rstrip("\n"), "information")] == [("skipped my_chat: no secrets found",
                                                                         "information")]
    assert snapshot(fixture_home) == before


# ---------------------------------------------------------------- export


def export_to(output: str, fmt: str = "json"):
    async def fill(screen, pilot) -> None:
        from textual.widgets import Input, Select

        screen.query_one("#format", Select).value = fmt
        await pilot.pause()
        field = screen.query_one("#output", Input)
        field.value = output
        field.focus()
        await pilot.press("enter")
    return fill


def without_stamp(data: bytes) -> dict:
    doc = json.loads(data)
    doc.pop("exported_at")
    return doc


@pytest.mark.parametrize("fmt", ["json", "markdown", "jsonl", "openai-jsonl", "sharegpt"])
def test_export_writes_what_the_command_writes(cli, fixture_home, tmp_path, fmt):
    theirs, ours = tmp_path / f"theirs.{fmt}", tmp_path / f"ours.{fmt}"
    done = cli("--home", fixture_home, "session", "export", SESSION, "--format", fmt, "-o", theirs)
    assert done.exit_code == 0
    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "e", export_to(str(ours), fmt))
        assert text_of(app, "#confirm-plan") == f"would export session 'my_chat' as {fmt} to {ours}"
        assert text_of(app, "#confirm-question") == f"Export session 'my_chat' to {ours}?"
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    if fmt == "json":  # the payload is stamped with the time of the export; the rest is the command's
        assert without_stamp(ours.read_bytes()) == without_stamp(theirs.read_bytes())
    else:
        assert ours.read_bytes() == theirs.read_bytes()
    assert app.notes[-1] == (done.stderr.rstrip("\n").replace(str(theirs), str(ours)), "information")
    assert snapshot(fixture_home) == before  # an export reads the home only


def test_an_export_over_an_existing_file_says_so_and_a_no_keeps_the_file(fixture_home, tmp_path):
    target = tmp_path / "keep.json"
    target.write_bytes(b"mine\n")
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "e", export_to(str(target)))
        assert text_of(app, "#confirm-question") == f"Replace {target} with the export of session 'my_chat'?"
        assert f"praisonmem: {target} exists: the export replaces it" in text_of(app, "#confirm-plan")
        await pilot.press("n")
        await settle(app, pilot)

    run(app, scenario)
    assert target.read_bytes() == b"mine\n"


def test_a_yes_replaces_the_existing_file_as_the_command_does(fixture_home, tmp_path):
    target = tmp_path / "old.json"
    target.write_bytes(b"mine\n")
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "e", export_to(str(target)))
        await pilot.press("y")
        await settle(app, pilot)

    run(app, scenario)
    assert json.loads(target.read_bytes())["sessions"][0]["session_id"] == SESSION


@pytest.mark.parametrize("make", ["directory", "link"])
def test_an_output_the_command_refuses_is_refused_with_its_line(cli, fixture_home, tmp_path, make):
    target = tmp_path / "out"
    if make == "directory":
        target.mkdir()
    else:
        (tmp_path / "real.json").write_bytes(b"real\n")
        target.symlink_to(tmp_path / "real.json")
    expected = cli("--home", fixture_home, "session", "export", SESSION, "-o", target)
    assert expected.exit_code == 4
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        app.act("e")
        await settle(app, pilot)
        await (export_to(str(target)))(app.screen, pilot)
        await settle(app, pilot)
        assert type(app.screen).__name__ == "Screen"

    run(app, scenario)
    assert app.notes == [(expected.stderr.rstrip("\n"), "error")]
    assert make == "directory" or (tmp_path / "real.json").read_bytes() == b"real\n"


def test_stdout_is_not_an_export_target_in_the_browser(fixture_home):
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        app.act("e")
        await settle(app, pilot)
        await (export_to("-"))(app.screen, pilot)
        await settle(app, pilot)

    run(app, scenario)
    assert app.notes == [("praisonmem: error: '-' (stdout) is the browser's screen here: give a file name", "error")]


# ---------------------------------------------------------------- a lock an agent holds


LOCKED_ACTIONS = {
    "rename": ("r", ["rename", SESSION, "chat-archive"], rename_to(new_id="chat-archive")),
    "retitle": ("r", ["rename", SESSION, "--title", "Lisbon"], rename_to(title="Lisbon")),
    "delete": ("d", ["delete", SESSION, "--yes"], None),
    "redact": ("x", ["redact", SESSION, "--yes"], choose_level("standard")),
}


@pytest.mark.parametrize("action", list(LOCKED_ACTIONS))
def test_a_lock_an_agent_holds_gives_the_commands_lock_message_and_changes_nothing(cli, fixture_home, tmp_path,
                                                                                  action):
    key, args, fill = LOCKED_ACTIONS[action]
    if action == "redact":
        plant_secret(fixture_home)
    other = twin(fixture_home, tmp_path / "twin")
    before = snapshot(fixture_home)
    holders = [hold_flock(home / "sessions" / "my_chat.json.lock", 30) for home in (fixture_home, other)]
    try:
        expected = cli("--home", other, "--lock-timeout", "0.5", "session", *args)
        app = Harness(selection(fixture_home, lock_timeout=0.5))

        async def scenario(pilot) -> None:
            await open_plan(app, pilot, key, fill)
            await pilot.press("enter")
            await settle(app, pilot)

        run(app, scenario)
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
    assert expected.exit_code == 4 and "could not lock" in expected.stderr
    message = expected.stderr.rstrip("\n").replace(str(other), str(fixture_home))
    assert app.notes[-1] == (message, "error")
    # what the command leaves (a .lock file for a rename's target, as the library's locks stay), and no more
    assert contents(fixture_home) == contents(other)
    assert {k: v for k, v in snapshot(fixture_home).items() if not k.endswith(".lock") and k != "sessions"} == \
        {k: v for k, v in before.items() if not k.endswith(".lock") and k != "sessions"}


# ---------------------------------------------------------------- crafted text


CRAFTED = "[bold red]Boss[/] \x1b]0;pwned\x07\x1b[2J\u202etxt.exe"


def test_a_crafted_title_reaches_the_modal_escaped_and_never_as_markup(fixture_home):
    from praisonaiagents.session.store import DefaultSessionStore

    DefaultSessionStore(session_dir=str(fixture_home / "sessions")).rename_session(SESSION, CRAFTED)
    stored = json.loads((fixture_home / "sessions" / "my_chat.json").read_text())["metadata"]["title"]
    assert stored == CRAFTED
    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home, title=stored))

    async def scenario(pilot) -> None:
        app.act("r")
        await settle(app, pilot)
        # the form does not put the raw title in an editable field: it shows it escaped above an empty one
        from textual.widgets import Input

        assert app.screen.query_one("#new-title", Input).value == ""
        assert text_of(app, "#title-now") == "Its title now: [bold red]Boss[/] \\x1b]0;pwned\\x07\\x1b[2J\\u202etxt.exe"
        await pilot.press("escape")
        await settle(app, pilot)
        await open_plan(app, pilot, "e", export_to("out.json"))
        assert text_of(app, "#confirm-about") == (
            "session 'my_chat', titled '[bold red]Boss[/] \\x1b]0;pwned\\x07\\x1b[2J\\u202etxt.exe'")
        shown = "\n".join(screen_lines(app))
        assert "[bold red]Boss[/]" in shown
        assert not any(c in shown for c in "\x1b\x07\u202e")
        await pilot.press("escape")
        await settle(app, pilot)

    run(app, scenario)
    assert snapshot(fixture_home) == before


def test_a_crafted_session_id_is_escaped_in_the_plan(fixture_home):
    from praisonaiagents.session.store import DefaultSessionStore

    crafted = "evil\x1b[2Jid"
    DefaultSessionStore(session_dir=str(fixture_home / "sessions")).add_message(crafted, "user", "hello")
    app = Harness(selection(fixture_home, item=crafted))

    async def scenario(pilot) -> None:  # nothing to redact: no question, the command's line, escaped
        app.act("x")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    assert app.notes == [("skipped evil\\x1b[2Jid: no secrets found", "information")]


# ---------------------------------------------------------------- what the actions do not cover


def test_a_kind_without_the_action_is_told_and_nothing_happens(fixture_home):
    before = snapshot(fixture_home)
    state = State(home=str(fixture_home))
    learn = Selection(state.paths, "learn", "entry-1")
    app = Harness(learn)

    async def scenario(pilot) -> None:
        app.act("r")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "Screen"

    run(app, scenario)
    assert app.notes == [("rename is not available for learn items", "warning")]
    assert snapshot(fixture_home) == before


# ---------------------------------------------------------------- what a write leaves for the listing


def test_a_delete_drops_session_lists_cache_entry_as_the_command_does(cli, fixture_home, monkeypatch, tmp_path):
    from praisonmem.core.io import cache as cachemod
    from praisonmem.core.sessions import listcache

    monkeypatch.setattr(cachemod, "GRANULARITY_NS", 0)  # files trusted as soon as they are read
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "cache"))
    assert cli("--home", fixture_home, "session", "list").exit_code == 0
    entries = sorted((tmp_path / "cache" / listcache.KIND).glob("*.bin"))
    assert len(entries) == 1, "session list keeps its rows in the cache"
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "d")
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    assert sorted((tmp_path / "cache" / listcache.KIND).glob("*.bin")) == []
    listed = cli("--home", fixture_home, "session", "list", "--json").json()
    assert SESSION not in [row["session_id"] for row in listed]


# ---------------------------------------------------------------- memory items


MEMORY_ID = "b6405825f19f0274"  # one of alice's short-term memories in the fixture project


def memory_selection(memory_dir: Path, item: str = MEMORY_ID, tier: str = "short_term") -> Selection:
    """A FileMemory item as the browser's tree names it: the user and the tier (``memory users``' count keys)."""
    state = State(memory_dir=str(memory_dir))
    return Selection(state.paths, "memory", item, lock_timeout=state.lock_timeout, cache=state.cache,
                     context={"provider": "file", "user_id": "alice", "tier": tier})


@pytest.mark.parametrize("item, tier, type_", [
    (MEMORY_ID, "short_term", "short"), ("6b6dbe1fcbd0b17f", "long_term", "long"),
    ("857e6ca8c01ccb7a", "entities", "entity"), ("8f56d0d94a921a45", "summaries", "summary"),
    ("bb51859c00dc1016", "episodic", "episodic"),
])
def test_d_on_a_memory_item_is_memory_delete(cli, project, tmp_path, today, item, tier, type_):
    other = twin(project, tmp_path / "twin")
    args = ("--memory-dir", other / ".praisonai" / "memory", "memory", "delete", item, "--user-id", "alice",
            "--type", type_)
    dry = cli(*args, "--dry-run")
    done = cli(*args, "--yes")
    assert done.exit_code == 0 and done.stdout.startswith("deleted ") and item in done.stdout
    app = Harness(memory_selection(project / ".praisonai" / "memory", item, tier))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "d")
        assert lines(text_of(app, "#confirm-plan")) == lines(dry.stdout)
        assert text_of(app, "#confirm-question").startswith("Delete ")
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    assert contents(project / ".praisonai") == contents(other / ".praisonai")
    assert app.notes[-1] == (done.stdout.rstrip("\n"), "information")


def test_a_no_to_a_memory_delete_changes_nothing(project):
    before = snapshot(project)
    app = Harness(memory_selection(project / ".praisonai" / "memory"))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "d")
        await pilot.press("n")
        await settle(app, pilot)

    run(app, scenario)
    assert snapshot(project) == before


# ---------------------------------------------------------------- a session an agent is writing


@pytest.mark.parametrize("key, args, fill", [
    ("r", ["rename", SESSION, "chat-archive"], rename_to(new_id="chat-archive")),
    ("d", ["delete", SESSION, "--yes"], None),
])
def test_a_session_an_agent_wrote_a_moment_ago_is_refused_as_the_command_refuses_it(cli, fixture_home, tmp_path,
                                                                                   key, args, fill):
    from praisonaiagents.session.store import DefaultSessionStore

    DefaultSessionStore(session_dir=str(fixture_home / "sessions")).add_message(SESSION, "user", "still here")
    other = twin(fixture_home, tmp_path / "twin")
    expected = cli("--home", other, "session", *args)
    assert expected.exit_code == 4 and "an agent may still be writing it" in expected.stderr
    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        app.act(key)
        await settle(app, pilot)
        if fill is not None:
            await fill(app.screen, pilot)
            await settle(app, pilot)
        assert type(app.screen).__name__ == "Screen"  # refused before anything is asked

    run(app, scenario)
    import re

    def aged(line: str) -> str:  # the age in seconds is the clock's: the second may tick between the two
        return re.sub(r"was updated \d+ s ago", "was updated N s ago", line)
    [(line, severity)] = app.notes
    assert (aged(line), severity) == (aged(expected.stderr.rstrip("\n")), "error")
    assert "was updated N s ago: an agent may still be writing it" in aged(line)
    assert snapshot(fixture_home) == before


# ---------------------------------------------------------------- the gateway's home: stores and encrypted sessions


def gateway_selection(gateway_home, item: str, store: str | None = None, *, with_key: bool = False) -> Selection:
    from praisonmem.core import sessions

    key = sessions.session_key(str(gateway_home.key_file)) if with_key else None
    return selection(gateway_home.home, item, store=store, key=key)


def test_delete_of_one_stores_copy_deletes_that_copy_as_the_command_with_store_does(cli, gateway_home, tmp_path):
    from tests.realhomes import copy_gateway_home

    other = copy_gateway_home(tmp_path / "twin", project=False)
    dry = cli("--home", other.home, "session", "delete", "gw-legacy", "--store", "sessions.db", "--dry-run")
    done = cli("--home", other.home, "session", "delete", "gw-legacy", "--store", "sessions.db", "--yes")
    assert done.stdout == "deleted gw-legacy (sessions.db)\n"
    app = Harness(gateway_selection(gateway_home, "gw-legacy", "sessions.db"))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "d")
        assert lines(text_of(app, "#confirm-plan")) == lines(dry.stdout)
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    assert app.notes[-1] == (done.stdout.rstrip("\n"), "information")
    assert (gateway_home.sessions / "gw-legacy.json").is_file()  # the JSON copy stays
    import sqlite3

    def rows(db: Path) -> list:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT session_id, data FROM sessions ORDER BY session_id").fetchall()
        finally:
            conn.close()
    assert rows(gateway_home.db) == rows(other.db) and "gw-legacy" not in [r[0] for r in rows(gateway_home.db)]
    json_files = lambda home: {p.name: p.read_bytes() for p in home.sessions.glob("*.json")}  # noqa: E731
    assert json_files(gateway_home) == json_files(other)


def test_a_session_two_stores_hold_needs_the_store_as_the_command_does(cli, gateway_home):
    before = snapshot(gateway_home.home)
    expected = cli("--home", gateway_home.home, "session", "delete", "gw-legacy", "--yes")
    assert expected.exit_code == 2 and snapshot(gateway_home.home) == before
    app = Harness(gateway_selection(gateway_home, "gw-legacy"))

    async def scenario(pilot) -> None:
        app.act("d")
        await settle(app, pilot)

    run(app, scenario)
    assert app.notes == [(expected.stderr.rstrip("\n"), "error")]
    assert snapshot(gateway_home.home) == before


@pytest.mark.parametrize("fmt, with_key", [("json", True), ("markdown", True), ("markdown", False)])
def test_an_encrypted_session_exports_as_the_command_exports_it(cli, gateway_home, tmp_path, fmt, with_key):
    theirs, ours = tmp_path / f"theirs.{fmt}", tmp_path / f"ours.{fmt}"
    key_args = ["--key-file", gateway_home.key_file] if with_key else []
    done = cli("--home", gateway_home.home, "session", "export", "enc-1", "--format", fmt, "-o", theirs, *key_args)
    assert done.exit_code == 0
    assert ("encrypted value" in done.stderr) == (fmt == "json" or not with_key)  # the notes the browser repeats
    app = Harness(gateway_selection(gateway_home, "enc-1", with_key=with_key))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "e", export_to(str(ours), fmt))
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    if fmt == "json":
        assert without_stamp(ours.read_bytes()) == without_stamp(theirs.read_bytes())
    else:
        assert ours.read_bytes() == theirs.read_bytes()
        assert (b"*(encrypted)*" in ours.read_bytes()) == (not with_key)  # decrypted with the selection's key
    assert app.notes[-1] == (done.stderr.rstrip("\n").replace(str(theirs), str(ours)), "information")


def test_a_rename_onto_an_existing_session_is_the_commands_refusal(cli, fixture_home, tmp_path):
    other = twin(fixture_home, tmp_path / "twin")
    expected = cli("--home", other, "session", "rename", SESSION, "history_8fe938c0")
    assert expected.exit_code == 4
    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        app.act("r")
        await settle(app, pilot)
        await rename_to(new_id="history_8fe938c0")(app.screen, pilot)
        await settle(app, pilot)
        assert type(app.screen).__name__ == "Screen"

    run(app, scenario)
    assert app.notes == [(expected.stderr.rstrip("\n").replace(str(other), str(fixture_home)), "error")]
    assert snapshot(fixture_home) == before


def test_an_export_to_a_name_under_tilde_goes_to_the_home_directory(fixture_home):
    import os

    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "e", export_to("~/chat.md", "markdown"))
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    written = Path(os.environ["HOME"]) / "chat.md"
    assert written.read_text(encoding="utf-8").startswith("# Session `my_chat`")
    assert not Path("~").exists()


def test_redact_in_sessions_db_rewrites_as_the_command_does(cli, gateway_home, tmp_path):
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore

    from tests.realhomes import copy_gateway_home

    other = copy_gateway_home(tmp_path / "twin", project=False)
    for home in (gateway_home, other):  # the gateway's own store writes the turn
        SqliteTranscriptStore(session_dir=str(home.sessions)).add_message("agent-chat-1", "user", f"key {SECRET}")
    done = cli("--home", other.home, "session", "redact", "agent-chat-1", "--store", "sessions.db", "--yes")
    assert done.exit_code == 0, done.stderr
    app = Harness(gateway_selection(gateway_home, "agent-chat-1", "sessions.db"))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "x", choose_level("standard"))
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    assert app.notes[-1] == (done.stdout.rstrip("\n"), "information")
    ours = SqliteTranscriptStore(session_dir=str(gateway_home.sessions)).get_session("agent-chat-1")
    theirs = SqliteTranscriptStore(session_dir=str(other.sessions)).get_session("agent-chat-1")
    assert [m.content for m in ours.messages] == [m.content for m in theirs.messages]
    assert ours.messages[-1].content == "key [REDACTED:openai_api_key]"
    assert not any(SECRET.encode() in p.read_bytes() for p in gateway_home.home.rglob("*") if p.is_file())


def test_an_export_into_a_directory_not_there_yet_makes_it_as_the_command_does(cli, fixture_home, tmp_path):
    theirs, ours = tmp_path / "theirs" / "new" / "out.md", tmp_path / "ours" / "new" / "out.md"
    expected = cli("--home", fixture_home, "session", "export", SESSION, "--format", "markdown", "-o", theirs)
    assert expected.exit_code == 0
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "e", export_to(str(ours), "markdown"))
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    assert app.notes[-1] == (expected.stderr.rstrip("\n").replace(str(theirs), str(ours)), "information")
    assert ours.read_bytes() == theirs.read_bytes()
    assert ours.parent.stat().st_mode == theirs.parent.stat().st_mode


def test_a_bug_in_a_write_is_one_line_never_a_traceback(fixture_home, monkeypatch):
    from praisonmem.core.sessions import ops

    def broken(*args, **kwargs):
        raise ValueError("a bug")

    before = snapshot(fixture_home)
    app = Harness(selection(fixture_home))

    async def scenario(pilot) -> None:
        await open_plan(app, pilot, "d")
        monkeypatch.setattr(ops, "delete", broken)  # the plan was made; the write breaks
        await pilot.press("enter")
        await settle(app, pilot)

    run(app, scenario)
    assert app.notes[-1] == ("praisonmem: error: internal error: ValueError: a bug (set PRAISONMEM_DEBUG=1 for a "
                             "traceback)", "error")
    assert snapshot(fixture_home) == before
