"""What a new user hit in passing: messages that name only the stores the home has, a configured server that is
down leaving the rest of the report standing, an empty directory that is nothing to check."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import REPO

EXAMPLES = REPO / "examples" / "home"
DOWN = "postgresql://pm:hunter2secret@127.0.0.1:1/upsonic"  # port 1: refused at once, no server needed
SHOWN = "postgresql://pm:***@127.0.0.1:1/upsonic"
REFUSED = (f"cannot connect to {SHOWN}: connection to server at \"127.0.0.1\", port 1 failed: Connection refused")


@pytest.fixture
def home(tmp_path):
    """The shipped example home: JSON sessions only (no sessions.db, no REPL/TUI files, no run directories)."""
    shutil.copytree(EXAMPLES, tmp_path / "home")
    return tmp_path / "home"


# ---------------------------------------------------------------- only the stores the home has


def test_errors_name_only_the_stores_the_home_has(cli, home):
    unknown = cli("--home", home, "session", "list", "--store", "nosuch")
    assert (unknown.exit_code, unknown.stderr) == (2, "praisonmem: error: unknown store 'nosuch'; this home has: "
                                                      "json\n")
    missing = cli("--home", home, "session", "show", "nosuch")
    assert (missing.exit_code, missing.stderr) == (
        3, f"praisonmem: error: no session 'nosuch' in any store of {home / 'sessions'} (json)\n")
    usage = cli("--home", home, "usage", "--store", "nosuch")
    assert (usage.exit_code, usage.stderr) == (
        3, "praisonmem: error: --store nosuch: neither a store of the home (json) nor an Upsonic database file\n")


def test_a_store_is_named_once_it_holds_a_session(cli, home):
    run = home / "sessions" / "run_20261128_110000_ab12cd"
    run.mkdir()
    (run / "metadata.json").write_text(json.dumps({"run_id": run.name}), encoding="utf-8")
    missing = cli("--home", home, "session", "show", "nosuch")
    assert missing.stderr.endswith(" (json, legacy-run)\n")
    unknown = cli("--home", home, "session", "list", "--store", "nosuch")
    assert unknown.stderr == "praisonmem: error: unknown store 'nosuch'; this home has: json, legacy-run\n"


def test_store_completion_offers_only_the_stores_the_home_has(home):
    from praisonmem.cli.completion import stores

    class Root:
        params = {"home": str(home), "memory_dir": None}

        def find_root(self):
            return self

    assert stores(Root(), "") == ["json"]
    assert stores(Root(), "u") == []


# ---------------------------------------------------------------- a configured server that is down


def test_usage_with_the_configured_upsonic_server_down_reports_the_rest_and_exits_1(cli, home, monkeypatch):
    alone, alone_json = cli("--home", home, "usage"), cli("--home", home, "usage", "--json").json()
    monkeypatch.setenv("PRAISONMEM_UPSONIC_DB", DOWN)
    result = cli("--home", home, "usage")
    assert (result.exit_code, result.stdout) == (1, alone.stdout)
    assert result.stderr == (f"praisonmem: warning: the configured upsonic.db is left out: {REFUSED}; the rest is "
                             f"reported\n{alone.stderr}")
    machine = cli("--home", home, "usage", "--json")
    assert machine.exit_code == 1
    assert machine.json()["unreachable"] == [{"store": SHOWN, "error": REFUSED}]
    assert {**machine.json(), "unreachable": []} == alone_json
    assert "hunter2secret" not in result.stderr + machine.stdout + machine.stderr
    named = cli("--home", home, "usage", "--store", DOWN)  # named on the command line: the command's failure
    assert (named.exit_code, named.stdout, named.stderr) == (5, "", f"praisonmem: error: {REFUSED}\n")


def test_check_secrets_with_the_configured_upsonic_server_down_scans_the_rest_and_fails(cli, home, monkeypatch):
    alone = cli("--home", home, "check", "--secrets", "--json").json()
    monkeypatch.setenv("PRAISONMEM_UPSONIC_DB", DOWN)
    result = cli("--home", home, "check", "--secrets", "--json")
    assert result.exit_code == 1
    body = result.json()
    assert body["unreadable"] == [f"upsonic.db: {REFUSED}"]
    assert (body["ok"], body["findings"], body["scanned"]) == (False, alone["findings"], alone["scanned"])
    human = cli("--home", home, "check", "--secrets")
    assert human.exit_code == 1
    assert f"praisonmem: warning: not scanned (unreadable): upsonic.db: {REFUSED}\n" in human.stderr
    assert "hunter2secret" not in human.stdout + human.stderr + result.stdout
    named = cli("--home", home, "check", "--secrets", "--upsonic-db", DOWN)
    assert (named.exit_code, named.stdout, named.stderr) == (5, "", f"praisonmem: error: {REFUSED}\n")


# ---------------------------------------------------------------- nothing to check


def test_check_of_an_empty_directory_is_nothing_to_check(cli, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = cli("check", empty)
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr == f"praisonmem: error: nothing to check: {empty} is an empty directory\n"
    machine = cli("check", empty, "--json")
    assert machine.exit_code == 3 and json.loads(machine.stderr)["error"]["exit_code"] == 3
    (empty / "notes.txt").write_text("x", encoding="utf-8")  # something, but nothing PraisonAI's: a usage error
    other = cli("check", empty)
    assert other.exit_code == 2 and "not a PraisonAI home" in other.stderr


# ---------------------------------------------------------------- Ctrl-C, a watch's way out


@pytest.mark.parametrize("machine", [[], ["--json"]])
def test_ctrl_c_ends_session_watch_with_130_and_no_error(home, machine):
    import os
    import signal
    import subprocess
    import sys

    watch = subprocess.Popen([sys.executable, "-m", "praisonmem", "--home", str(home), "session", "watch", "my_chat",
                              "--tail", "1", *machine], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        first = watch.stdout.readline() if machine else watch.stdout.readline() + watch.stdout.readline()
        # the last turn is out: it is following the file now
        watch.send_signal(signal.SIGINT)
        out, err = watch.communicate(timeout=60)
    finally:
        watch.kill()
        watch.wait()
    assert first and watch.returncode == 130
    assert err == b""  # no "praisonmem: error: interrupted": Ctrl-C is how a watch ends
    assert out == b""
    said = json.loads(first)["content"] if machine else first.decode().splitlines()[1]
    assert said == "Echo: Remember that I like green tea"
