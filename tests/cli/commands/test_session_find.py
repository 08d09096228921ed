"""What people reach for to find a session: ``session show --latest``, ``session path`` and ``session watch
--wait``; exact outputs, and each bad input one line with its exit code and nothing changed."""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.conftest import FIXTURES, PRAISONAI_FIXTURES
from tests.helpers import snapshot, spill

GATEWAY = FIXTURES / "praisonai-4.7.19-home" / "home"


@pytest.fixture
def gateway(tmp_path):
    home = tmp_path / "home"
    shutil.copytree(GATEWAY, home)
    return home


@pytest.fixture
def plain(tmp_path):
    home = tmp_path / "plain"
    shutil.copytree(PRAISONAI_FIXTURES / "home", home)
    return home


# ---------------------------------------------------------------- show --latest


def test_latest_is_the_session_last_session_names(cli, gateway):
    before = snapshot(gateway)
    latest = cli("--home", gateway, "session", "show", "--latest", "--tail", "1", "--json")
    assert latest.exit_code == 0
    assert latest.stderr == ("praisonmem: showing tui0002b: the session .last_session names (praisonai's "
                             "/continue) (unified)\n")
    assert latest.stdout == cli("--home", gateway, "session", "show", "tui0002b", "--store", "unified", "--tail", "1",
                                "--json").stdout
    assert snapshot(gateway) == before


def test_latest_without_last_session_is_the_most_recently_updated(cli, plain):
    rows = cli("--home", plain, "session", "list", "--json").json()
    newest = max((r for r in rows if not r["unreadable"]), key=lambda r: r["updated_at"])
    latest = cli("--home", plain, "session", "show", "--latest")
    assert latest.exit_code == 0
    assert latest.stderr == f"praisonmem: showing {newest['session_id']}: the most recently updated session (json)\n"
    assert latest.stdout == cli("--home", plain, "session", "show", newest["session_id"]).stdout


def test_latest_follows_last_session_when_it_changes(cli, gateway):
    (gateway / "sessions" / ".last_session").write_text("tui0001a", encoding="utf-8")
    latest = cli("--home", gateway, "session", "show", "--latest")
    assert latest.exit_code == 0 and latest.stdout.startswith("Session   tui0001a\n")


@pytest.mark.parametrize("args, code, message", [
    (["show"], 2, "give SESSION or --latest (not both)"),
    (["show", "my_chat", "--latest"], 2, "give SESSION or --latest (not both)"),
])
def test_latest_bad_inputs(cli, plain, args, code, message):
    before = snapshot(plain)
    result = cli("--home", plain, "session", *args)
    assert (result.exit_code, result.stdout, result.stderr) == (code, "", f"praisonmem: error: {message}\n")
    assert snapshot(plain) == before


def test_latest_of_a_home_without_sessions_is_not_found(cli, tmp_path):
    (tmp_path / "empty" / "sessions").mkdir(parents=True)
    result = cli("--home", tmp_path / "empty", "session", "show", "--latest")
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr == f"praisonmem: error: no session to show: {tmp_path / 'empty' / 'sessions'} holds none\n"


# ---------------------------------------------------------------- path


def test_path_names_every_store_that_holds_the_session(cli, gateway):
    sessions = gateway / "sessions"
    before = snapshot(gateway)
    shown = cli("--home", gateway, "session", "path", "tui0002b")
    assert shown.exit_code == 0
    assert shown.stdout == (f"{sessions / 'sessions.db'}\n  store  sessions.db\n"
                            "  row    sessions where session_id = tui0002b\n\n"
                            f"{sessions / 'tui0002b.json'}\n  store  unified\n"
                            f"  file   {sessions / 'tui0002b.json.lock'}\n")
    records = cli("--home", gateway, "session", "path", "tui0002b", "--json").json()
    assert records == [
        {"store": "sessions.db", "session_id": "tui0002b", "kind": "row", "path": str(sessions / "sessions.db"),
         "table": "sessions", "key": "tui0002b", "files": [str(sessions / "sessions.db")]},
        {"store": "unified", "session_id": "tui0002b", "kind": "file", "path": str(sessions / "tui0002b.json"),
         "table": None, "key": None, "files": [str(sessions / "tui0002b.json"), str(sessions / "tui0002b.json.lock")]}]
    one = cli("--home", gateway, "session", "path", "tui0002b", "--store", "unified", "--json").json()
    assert one == records[1:]
    assert snapshot(gateway) == before


def test_path_lists_the_spill_files_waiting_for_a_session(cli, plain):
    waiting = spill(plain, "my_chat", "my_chat", "a turn that failed to save")
    spill(plain, "other", "other", "not this one's")
    files = cli("--home", plain, "session", "path", "my_chat", "--json").json()[0]["files"]
    sessions = plain / "sessions"
    assert files == [str(sessions / "my_chat.json"), str(sessions / "my_chat.json.lock"), str(waiting)]


@pytest.mark.parametrize("name", ["nope", "tui0002"])  # a prefix is not the name
def test_path_of_an_unknown_session_is_exit_3(cli, gateway, name):
    before = snapshot(gateway)
    result = cli("--home", gateway, "session", "path", name)
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr.startswith(f"praisonmem: error: no session '{name}' in any store of {gateway / 'sessions'} (")
    assert len(result.stderr.splitlines()) == 1
    assert snapshot(gateway) == before


# ---------------------------------------------------------------- watch --wait

WRITER = """
    import sys
    from praisonaiagents.paths import get_sessions_dir
    from praisonaiagents.session.store import DefaultSessionStore
    store = DefaultSessionStore(session_dir=str(get_sessions_dir()))
    assert store.add_message(sys.argv[1], "user", "first turn")
    assert store.add_message(sys.argv[1], "assistant", "second turn")
"""


def lines_of(stream, count: int, timeout: float = 30) -> list[str]:
    sel = selectors.DefaultSelector()
    sel.register(stream, selectors.EVENT_READ)
    lines, buffer, deadline = [], b"", time.monotonic() + timeout
    while len(lines) < count and time.monotonic() < deadline:
        if sel.select(timeout=0.2):
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            *done, buffer = buffer.split(b"\n")
            lines += [line.decode("utf-8") for line in done]
    return lines


@pytest.mark.compat
def test_watch_wait_follows_a_session_once_the_library_creates_it(plain):
    env = {**os.environ, "PRAISONAI_HOME": str(plain), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    watch = subprocess.Popen([sys.executable, "-m", "praisonmem", "--home", str(plain), "session", "watch",
                              "brand-new", "--wait", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env)
    try:
        said = lines_of(watch.stderr, 1)
        assert said == [f"praisonmem: waiting for session brand-new to appear in {plain / 'sessions'}; Ctrl-C to "
                        "stop"]
        subprocess.run([sys.executable, "-c", textwrap.dedent(WRITER), "brand-new"], env=env, check=True,
                       timeout=120)
        records = [json.loads(line) for line in lines_of(watch.stdout, 2)]
        assert [(r["session_id"], r["role"], r["content"]) for r in records] == [
            ("brand-new", "user", "first turn"), ("brand-new", "assistant", "second turn")]
        assert watch.poll() is None  # still following
        watch.send_signal(signal.SIGINT)
        out, err = watch.communicate(timeout=30)
    finally:
        watch.kill()
    assert watch.returncode == 130 and out == b"" and b"Traceback" not in err


def test_watch_without_wait_of_a_missing_session_is_exit_3(cli, plain):
    before = snapshot(plain)
    result = cli("--home", plain, "session", "watch", "brand-new")
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr.startswith("praisonmem: error: no session 'brand-new'") and len(result.stderr.splitlines()) == 1
    assert snapshot(plain) == before
