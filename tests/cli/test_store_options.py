"""One store choice on every session command: ``--store``, ``--table-prefix`` and ``--schema`` (cli/options.py's
``store_options``), the same three with the same help on each command that reads or writes sessions, ``watch`` and
``tail`` included, and one conversion of them to the core's store argument."""

from __future__ import annotations

import json
from pathlib import Path

from typing import Any

import pytest
import typer

from praisonmem.cli.commands import session as session_commands

STORE_OPTIONS = ("store", "table_prefix", "schema")
# Every session command that reads or writes sessions; adopt works on the home's JSON history files, migrate
# names its two stores with --from and --to (and shares --table-prefix/--schema with them).
TAKE_A_STORE = {"list", "show", "path", "search", "rename", "delete", "prune", "export", "import", "scan", "redact",
                "watch", "tail"}
OWN_STORES = {"adopt": (), "migrate": ("table_prefix", "schema")}
KEY = "sk-proj-" + "Q7vX2mR9tL4wZ8kP3nB6yH1cJ5fD0gS2aE7uW4iO9qT3xV8"  # an OpenAI project key's shape


def options(command: Any) -> dict[str, Any]:
    return {p.name: p for p in command.params if p.param_type_name == "option"}


@pytest.fixture(scope="module")
def commands() -> dict[str, Any]:
    return dict(typer.main.get_command(session_commands.app).commands)


def test_every_session_command_is_either_given_the_store_options_or_named_here(commands):
    assert set(commands) == TAKE_A_STORE | set(OWN_STORES)


@pytest.mark.parametrize("name", sorted(TAKE_A_STORE))
def test_each_session_command_takes_the_three_store_options_with_one_help_each(commands, name):
    reference = options(commands["list"])
    have = options(commands[name])
    for option in STORE_OPTIONS:
        assert option in have, f"session {name} has no {reference[option].opts[0]}"
        assert (have[option].opts, have[option].metavar, have[option].help, have[option].default) == (
            reference[option].opts, reference[option].metavar, reference[option].help, None)
    assert reference["store"].opts == ["--store"] and reference["table_prefix"].opts == ["--table-prefix"]
    assert reference["schema"].opts == ["--schema"]
    # the three side by side, in one place of --help
    names = [p.name for p in commands[name].params]
    start = names.index("store")
    assert names[start:start + 3] == list(STORE_OPTIONS)


@pytest.mark.parametrize("name, own", sorted(OWN_STORES.items()))
def test_adopt_and_migrate_take_only_what_applies_to_them(commands, name, own):
    reference = options(commands["list"])
    have = options(commands[name])
    assert [o for o in STORE_OPTIONS if o in have] == list(own)
    for option in own:
        assert have[option].help == reference[option].help


def test_the_store_help_is_one_paragraph(commands):
    for option in STORE_OPTIONS:
        text = options(commands["list"])[option].help
        assert "\n" not in text and text.endswith(")."), option


@pytest.fixture
def team_store(cli, tmp_path) -> Path:
    """A SQLite conversation store under the prefix team_, holding one session with a key in a message."""
    sessions = tmp_path / "src" / "sessions"
    sessions.mkdir(parents=True)
    doc = {"session_id": "leaky", "messages": [
        {"role": "user", "content": f"use {KEY} for the calls", "timestamp": 1796050189.5, "metadata": {}},
        {"role": "assistant", "content": "noted", "timestamp": 1796050190.5, "metadata": {}}],
        "metadata": {}, "created_at": "2026-11-30T14:49:49", "updated_at": "2026-11-30T14:49:50"}
    (sessions / "leaky.json").write_text(json.dumps(doc), encoding="utf-8")
    db = tmp_path / "team.db"
    moved = cli("session", "migrate", "--from", sessions, "--to", db, "--all", "--table-prefix", "team_")
    assert moved.exit_code == 0, moved.stderr
    return db


def test_scan_and_redact_reach_a_conversation_store_under_another_prefix(cli, team_store):
    found = cli("session", "scan", "--store", team_store, "--table-prefix", "team_", "--json")
    assert (found.exit_code, [(f["session"], f["kind"]) for f in found.json()]) == (1, [("leaky", "openai_api_key")])
    assert KEY not in found.stdout + found.stderr
    redacted = cli("session", "redact", "leaky", "--store", team_store, "--table-prefix", "team_", "--yes")
    assert redacted.exit_code == 0, redacted.stderr
    again = cli("session", "scan", "--store", team_store, "--table-prefix", "team_", "--json")
    assert (again.exit_code, again.json()) == (0, [])
    assert KEY.encode() not in team_store.read_bytes()
    missing = cli("session", "scan", "--store", team_store, "--json")  # the default prefix names no tables
    assert missing.exit_code == 3 and "no PraisonAI conversation tables" in missing.stderr


@pytest.mark.parametrize("command", ["watch", "tail"])
def test_watch_and_tail_take_the_options_and_say_what_they_follow(cli, fixture_home, team_store, command):
    bad = cli("--home", fixture_home, "session", command, "compacted-demo", "--table-prefix", "team_")
    assert (bad.exit_code, bad.stdout, bad.stderr) == (
        2, "", "praisonmem: error: --table-prefix and --schema apply to a conversation store (--store "
               "sqlite:///PATH, postgresql://... or mysql://...)\n")
    elsewhere = cli("session", command, "leaky", "--store", team_store, "--table-prefix", "team_")
    assert (elsewhere.exit_code, elsewhere.stdout, elsewhere.stderr) == (
        2, "", f"praisonmem: error: --store {team_store}: session watch follows the home's stores (this home has: "
               "json), not a store elsewhere\n")
