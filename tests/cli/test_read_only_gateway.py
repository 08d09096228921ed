"""Every read command on the real 4.7.19 home changes nothing: bytes, mtimes, modes and the file list of the home,
its SQLite files and their sidecars, the key file and the project's .git stay identical, with the key and
without, and with an index a writer died on."""

from __future__ import annotations

import pytest

from tests.helpers import snapshot
from tests.sqlitestate import crashed_wal

RUN = "run_20261128_110000_ec9910"
# each session once per store that holds it (--store picks a copy of an id two stores hold)
SHOWN = [["bot_telegram_42", "--store", "json"], ["bot_telegram_42", "--store", "sessions.db"], ["enc-1"],
         ["enc-db-1"], ["tui0001a", "--store", "unified"], ["tui0002b", "--store", "sessions.db"],
         ["db5b5fab", "--store", "unified"], [RUN], ["proj-sess-1"], ["gw-legacy", "--store", "sessions.db"],
         ["gw-1"]]
READ = [
    (["session", "list"], 0), (["session", "list", "--json"], 0), (["session", "list", "--ndjson"], 0),
    (["session", "list", "--sort", "messages", "--limit", "3"], 0),
    (["session", "search", "refund"], 0), (["session", "search", "4111", "--json"], 0),
    (["session", "search", "PLANTED", "--ndjson", "--limit", "0"], 0),
    (["session", "export", "--all"], 0), (["session", "export", "--all", "--format", "jsonl"], 0),
    (["session", "export", "enc-1", RUN, "proj-sess-1", "--format", "markdown"], 0),
    (["session", "export", "tui0001a", "--store", "unified", "--format", "markdown"], 0),
    (["session", "show", "no-such-session"], 3), (["session", "show", "tui0001a"], 2),
    (["session", "search", "IBAN", "--store", "sessions.db"], 0),
    (["session", "search", "refund", "--store", "project:8ccfb8a2", "--json"], 0),
    (["session", "export", "enc-db-1", "--format", "jsonl"], 0),
    # the warnings are sessions.db's imported TUI rows (tests/cli/commands/test_check_layouts.py)
    (["check"], 0), (["check", "--json", "--strict"], 1),
    (["workspace", "id", "--json"], 0), (["workspace", "paths"], 0),
] + [(["session", "list", "--store", label, "--json"], 0)
      for label in ("json", "sessions.db", "project:8ccfb8a2", "unified", "legacy-run")
] + [(["session", "show", *name, *flags], 0) for name in SHOWN
     for flags in ([], ["--json"], ["--tail", "2", "--json"], ["--archived"])]


def ids(value):
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


@pytest.fixture(params=["no key", "key", "key file", "crashed index"])
def state(request, gateway_home, monkeypatch):
    """How the home is read: without a key, with PRAISONAI_SESSION_KEY, with --key-file, and with
    sessions_index.db left with WAL frames by a writer that died (its -wal and -shm stay as they are)."""
    monkeypatch.chdir(gateway_home.project)
    monkeypatch.delenv("PRAISONAI_SESSION_KEY", raising=False)
    extra: list[str] = []
    if request.param == "key":
        monkeypatch.setenv("PRAISONAI_SESSION_KEY", gateway_home.key)
    elif request.param == "key file":
        extra = ["--key-file", str(gateway_home.key_file)]
    elif request.param == "crashed index":
        crashed_wal(gateway_home.index, "DELETE FROM session_meta WHERE session_id = ?", "gw-legacy")
        crashed_wal(gateway_home.project_store / "sessions_index.db",
                    "UPDATE session_meta SET updated_at = updated_at WHERE session_id = ?", "proj-sess-1")
    return extra


@pytest.mark.parametrize("args, code", READ, ids=ids)
def test_a_read_command_leaves_the_whole_home_identical(cli, gateway_home, state, args, code):
    takes_key = args[:2] in (["session", "show"], ["session", "search"], ["session", "export"])
    before = snapshot(gateway_home.root)
    result = cli("--home", gateway_home.home, *args, *(state if takes_key else []))
    assert result.exit_code == code, result.stderr
    assert snapshot(gateway_home.root) == before
    assert gateway_home.key not in result.stdout + result.stderr  # the key is never printed
