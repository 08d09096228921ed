"""Consistency: the same thing is said and done the same way everywhere."""

from __future__ import annotations

import json
import os
import re
import select
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from praisonmem.cli.app import app


def _without_stamp(text: str):
    doc = json.loads(text)
    doc.pop("exported_at", None)
    return doc


@pytest.mark.parametrize("fmt", ["json", "jsonl", "markdown"])
def test_session_export_dash_is_stdout_exactly_as_no_output(cli, fixture_home, fmt):
    plain = cli("--home", fixture_home, "session", "export", "my_chat", "--format", fmt)
    dash = cli("--home", fixture_home, "session", "export", "my_chat", "--format", fmt, "-o", "-")
    assert (plain.exit_code, dash.exit_code, dash.stderr) == (0, 0, "")
    if fmt == "json":
        assert _without_stamp(dash.stdout) == _without_stamp(plain.stdout)
    else:
        assert dash.stdout == plain.stdout
    assert not Path("-").exists()


def test_upsonic_export_defaults_to_stdout_like_session_export(cli, db, tmp_path):
    plain = cli("upsonic", "export", "--db", db)
    assert (plain.exit_code, plain.stderr) == (0, "")
    assert json.loads(plain.stdout)["format"] == "praisonmem-upsonic"
    dash = cli("upsonic", "export", "--db", db, "-o", "-")
    assert _without_stamp(dash.stdout) == _without_stamp(plain.stdout)
    to_file = cli("upsonic", "export", "--db", db, "-o", tmp_path / "out.json", "--json")
    assert to_file.exit_code == 0 and to_file.json()["output"] == str(tmp_path / "out.json")
    assert _without_stamp((tmp_path / "out.json").read_text()) == _without_stamp(plain.stdout)


def user_memory(db: Path, user: str) -> str:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT user_memory FROM upsonic_user_memories WHERE user_id = ?", (user,)).fetchone()[0]


def test_user_memory_replace_needs_yes_when_not_on_a_terminal(cli, db, tmp_path):
    new = tmp_path / "traits.json"
    new.write_text('{"only": "this"}')
    before = user_memory(db, "user_456")
    refused = cli("upsonic", "user-memory", "replace", "user_456", "--from", new, "--db", db)
    assert (refused.exit_code, refused.stdout) == (4, "")
    assert refused.stderr == ("praisonmem: error: replace the whole memory of user 'user_456' with the object in "
                              f"{new}: not confirmed, nothing changed (pass --yes in a non-interactive run, or "
                              "--dry-run to see what would change)\n")
    assert user_memory(db, "user_456") == before
    assert cli("upsonic", "user-memory", "replace", "user_456", "--from", new, "--db", db, "--dry-run").exit_code == 0
    assert user_memory(db, "user_456") == before
    done = cli("upsonic", "user-memory", "replace", "user_456", "--from", new, "--db", db, "-y")
    assert done.exit_code == 0 and json.loads(user_memory(db, "user_456")) == {"only": "this"}


def test_a_bad_replacement_file_is_reported_before_any_question(cli, db, tmp_path):
    bad = tmp_path / "list.json"
    bad.write_text("[1, 2]")
    result = cli("upsonic", "user-memory", "replace", "user_456", "--from", bad, "--db", db)
    assert result.exit_code == 2 and "user memory must be a JSON object, got an array" in result.stderr


@pytest.mark.parametrize(("answer", "code"), [("y", 0), ("n", 4)])
def test_user_memory_replace_asks_on_a_terminal(db, tmp_path, answer, code):
    new = tmp_path / "traits.json"
    new.write_text('{"only": "this"}')
    before = user_memory(db, "user_456")
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "praisonmem", "upsonic", "user-memory", "replace", "user_456",
                             "--from", str(new), "--db", str(db)], stdin=slave, stdout=slave, stderr=slave,
                            env={**os.environ, "TERM": "xterm", "COLUMNS": "100"})
    os.close(slave)
    screen = b""
    while b"[y/N]" not in screen:
        ready, _, _ = select.select([master], [], [], 30)
        assert ready, screen
        screen += os.read(master, 4096)
    os.write(master, answer.encode() + b"\n")
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        try:
            data = os.read(master, 4096) if ready else b""
        except OSError:
            break
        if not data:
            break
        screen += data
    os.close(master)
    assert proc.wait(timeout=30) == code, screen
    assert b"Replace the whole memory of user 'user_456'" in screen
    after = user_memory(db, "user_456")
    assert (json.loads(after) == {"only": "this"}) if code == 0 else (after == before)


def test_a_session_updated_in_the_future_is_said_so_not_0_s_ago(cli, fixture_home):
    path = fixture_home / "sessions" / "my_chat.json"
    doc = json.loads(path.read_text())
    doc["updated_at"] = "2099-01-01T00:00:00+00:00"
    path.write_text(json.dumps(doc))
    result = cli("--home", fixture_home, "session", "rename", "my_chat", "other")
    assert result.exit_code == 4
    assert "0 s ago" not in result.stderr
    assert re.fullmatch(r"praisonmem: error: my_chat\.json has an updated_at \d+ days? in the future \(a clock "
                        r"set wrong\?\): an agent may still be writing it \(it would carry on in a fresh file under "
                        r"the old id\); rename it anyway with --force\n", result.stderr), result.stderr


@pytest.mark.parametrize(("key", "given", "stored"), [
    ("home", "rel/home", "{cwd}/rel/home"),
    ("memory_dir", "./proj/.praisonai/memory", "{cwd}/proj/.praisonai/memory"),
    ("backup.dir", "backups", "{cwd}/backups"),
    ("upsonic.db", "data.db", "{cwd}/data.db"),
    ("backup.dir", "~/backups", "~/backups"),  # one place wherever it is read
    ("upsonic.db", "postgresql://me@db.example/agents", "postgresql://me@db.example/agents"),
])
def test_config_set_of_a_relative_path_stores_it_absolute(cli, config, key, given, stored):
    result = cli("config", "set", key, given)
    assert result.exit_code == 0, result.stderr
    assert cli("config", "get", key).stdout == stored.format(cwd=os.getcwd()) + "\n"


def test_the_search_warning_names_the_file_once(cli, fixture_home):
    torn = fixture_home / "sessions" / "torn.json"
    torn.write_text('{"session_id": "torn", "mess', encoding="utf-8")
    result = cli("--home", fixture_home, "session", "search", "hello", "--json")
    line = next(line for line in result.stderr.splitlines() if "torn.json" in line)
    assert line.count(str(torn)) == 1
    assert line.startswith(f"praisonmem: warning: skipped unreadable session file {torn}: invalid JSON: "
                           "unterminated string starting at line 1 column 24")


def leaves(command, path):
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        yield path
        return
    for name, sub in subcommands.items():
        yield from leaves(sub, [*path, name])


def groups(command, path):
    subcommands = getattr(command, "commands", None)
    if subcommands:
        yield path
        for name, sub in subcommands.items():
            yield from groups(sub, [*path, name])


def help_text(args: list[str], columns: int = 200) -> str:
    return subprocess.run([sys.executable, "-m", "praisonmem", *args, "--help"], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": str(columns), "TERM": "dumb"}).stdout


@pytest.mark.parametrize("group", list(groups(typer.main.get_command(app), [])), ids=" ".join)
def test_group_listings_show_each_summary_as_one_unbroken_paragraph(group):
    text = help_text(group, columns=120)
    panel = [line for line in text[text.index("Commands"):].splitlines()[1:] if line.startswith("│")]
    assert panel
    start = re.match(r"│ [a-z-]+ +", panel[0]).end()  # where the summaries begin
    room = len(panel[0]) - 2 - start  # inside the right border and its padding
    for before, line in zip(panel, panel[1:]):
        if line[2:start].strip():  # a new command's row
            continue
        # A summary goes on to a second line only where the next word did not fit: no line break of its own.
        word = line[start:].split()[0]
        assert len(before[start:].rstrip(" │")) + 1 + len(word) > room, (before, line)


@pytest.mark.parametrize("command", list(leaves(typer.main.get_command(app), [])), ids=" ".join)
def test_arguments_read_by_their_names(command):
    text = help_text(command)
    assert not re.findall(r"\{[A-Z_]+\}|<(str|int|float|text|path)>", text), text
    usage = text[text.index("Usage:"):].splitlines()[0]
    assert "{" not in usage
