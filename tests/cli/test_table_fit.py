"""Tables fit a real terminal.

Each command runs on a pseudo-terminal whose size is set with TIOCSWINSZ (no COLUMNS in the environment: Rich
must find the width as it does for a user). No line is wider than the terminal, the values people copy (ids,
file names, paths) appear whole on one line, and text columns are cut with ``…`` at a word boundary.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from rich.cells import cell_len

from praisonmem.cli.render import table as fit
from tests.conftest import PRAISONAI_FIXTURES, UPSONIC_DB
from tests.helpers import read_pty

WIDTHS = [80, 100, 120, 200]
SGR = re.compile("\x1b\\[[0-9;?]*[A-Za-z]")
LONG_TITLE = "Planning the autumn trip to Lisbon with hotels restaurants and museums for the whole family"
LONG_AGENT = "Travel Planning Assistant For Families"
LONG_ID = "trip-planning-2026-lisbon-family-holiday-7f3a9c21"
LONG_TEXT = "User prefers window seats on long flights and aisle seats on short hops between European cities"


def on_a_terminal(args: list[str], cwd: Path, columns: int) -> tuple[int, list[str]]:
    """``python -m praisonmem ARGS`` with stdin, stdout and stderr on a pty ``columns`` wide; the exit code and
    the lines the terminal received, styling removed."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen([sys.executable, "-m", "praisonmem", *args], cwd=cwd, env=env, stdin=slave,
                            stdout=slave, stderr=slave)
    os.close(slave)
    text = SGR.sub("", read_pty(master, proc, args).decode("utf-8"))
    return proc.wait(timeout=30), text.replace("\r\n", "\n").split("\n")


@pytest.fixture
def world(tmp_path, cli) -> dict[str, Path]:
    """A home with a long-titled session and an unreadable file, a project with a long memory and learn entry,
    a backup dir and an Upsonic database; cwd for the commands is the project."""
    home = tmp_path / "home"
    shutil.copytree(PRAISONAI_FIXTURES / "home", home)
    project = tmp_path / "project"
    shutil.copytree(PRAISONAI_FIXTURES / "project", project)
    doc = json.loads((home / "sessions" / "my_chat.json").read_text(encoding="utf-8"))
    doc.update(session_id=LONG_ID, agent_name=LONG_AGENT)
    doc.setdefault("metadata", {})["title"] = LONG_TITLE
    (home / "sessions" / f"{LONG_ID}.json").write_text(json.dumps(doc), encoding="utf-8")
    (home / "sessions" / "unreadable-session-file-with-a-long-name.json").write_text("{not json", encoding="utf-8")
    long_term = project / ".praisonai" / "memory" / "alice" / "long_term.json"
    items = json.loads(long_term.read_text(encoding="utf-8"))
    items.append({"id": "feedfacecafebeef", "content": LONG_TEXT, "metadata": {}, "created_at": 1796050189.5,
                  "updated_at": 1796050189.5, "access_count": 0, "importance": 0.5})
    long_term.write_text(json.dumps(items), encoding="utf-8")
    assert cli("--home", home, "learn", "add", "persona", LONG_TEXT, "--user-id", "alice").exit_code == 0
    backups = tmp_path / "backups"
    assert cli("--home", home, "backup", "create", "-o", backups, "--json").exit_code == 0
    db = tmp_path / "store" / "data.db"
    db.parent.mkdir()
    shutil.copy(UPSONIC_DB, db)
    return {"home": home, "project": project, "backups": backups, "db": db}


def copyable(cli, world, command: str) -> tuple[list[str], list[str]]:
    """The command's arguments, and the values (from its --json) that must appear whole."""
    home = ["--home", str(world["home"])]
    if command == "session list":
        args = [*home, "session", "list"]
        rows = cli(*args, "--json").json()
        return args, [r["session_id"] or Path(r["file"]).stem for r in rows]
    if command == "workspace paths":
        args = [*home, "workspace", "paths"]
        return args, [r["path"] for r in cli(*args, "--json").json()]
    if command == "upsonic sessions":
        args = ["upsonic", "sessions", "--db", str(world["db"])]
        return args, [r["session_id"] for r in cli(*args, "--json").json()]
    if command == "backup list":  # the directory once, then each archive's name
        args = ["backup", "list", str(world["backups"])]
        files = [Path(r["file"]) for r in cli(*args, "--json").json()]
        return args, [f"{world['backups']}/", *(f.name for f in files)]
    if command == "memory list":
        args = ["memory", "list", "--user-id", "alice"]
        return args, [str(r["item"]["id"]) for r in cli(*args, "--json").json()]
    if command == "locate":  # each store's path and the command that reaches it
        args = [*home, "locate", str(world["home"])]
        stores = cli(*args, "--json").json()["stores"]
        return args, [r["path"] for r in stores] + [r["command"] for r in stores if r["command"]]
    args = [*home, "learn", "list"]
    return args, [r["id"] for r in cli(*args, "--json").json()]


COMMANDS = ["session list", "workspace paths", "upsonic sessions", "backup list", "memory list", "learn list",
            "locate"]


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("command", COMMANDS)
def test_no_line_is_wider_than_the_terminal_and_copyable_values_stay_whole(cli, world, monkeypatch, command,
                                                                           columns):
    monkeypatch.chdir(world["project"])
    args, values = copyable(cli, world, command)
    assert values
    code, lines = on_a_terminal(args, world["project"], columns)
    assert code == 0, lines
    # backup list's directory line is the one line that may be wider: a path is never broken
    too_wide = [line for line in lines if cell_len(line) > columns and line != f"{world['backups']}/"]
    assert not too_wide
    for value in values:
        if cell_len(value) <= columns:
            assert any(value in line for line in lines), (value, lines)
        else:  # wider than the terminal (a deep temp dir at 80): folded, every character kept, in order
            assert value in "".join(line.strip() for line in lines), (value, lines)


@pytest.mark.parametrize("columns", WIDTHS)
def test_text_columns_are_cut_at_a_word_boundary_with_an_ellipsis(cli, world, columns):
    code, lines = on_a_terminal(["--home", str(world["home"]), "session", "list"], world["project"], columns)
    assert code == 0
    row = next(line for line in lines if line.startswith(LONG_ID))
    if columns <= 100:  # a 50-cell id leaves room for MSGS, UPDATED (and SCOPE, AGENT) but not a title: said so
        assert "Planning" not in row and any(line.startswith("praisonmem: not shown in") and "TITLE" in line
                                             for line in lines), lines
        return
    cut = re.search(r"  (Planning[^…]*)…", row)  # the title cell, not the agent cell ("Travel Planning …")
    assert cut is not None, row
    shown = cut.group(1)
    assert LONG_TITLE.startswith(shown) and LONG_TITLE[len(shown)] == " ", row


@pytest.mark.parametrize("columns", WIDTHS)
def test_an_unreadable_row_fits_and_names_its_file_whole(world, columns):
    code, lines = on_a_terminal(["--home", str(world["home"]), "session", "list"], world["project"], columns)
    assert code == 0
    row = next(line for line in lines if line.startswith("unreadable-session-file-with-a-long-name"))
    assert " UNREADABLE" in row and cell_len(row) <= columns
    assert re.search(r"  (not valid JSON|Expecting|\S)", row)


def test_workspace_paths_is_key_value_on_a_terminal(cli, world):
    code, lines = on_a_terminal(["--home", str(world["home"]), "workspace", "paths"], world["project"], 100)
    assert code == 0
    assert lines[0] == f"data_dir           {world['home']}"
    assert lines[1] == "                   exists; chosen by --home"


def test_piped_output_is_every_column_uncut(cli, world):
    result = cli("--home", world["home"], "session", "list")
    row = next(line for line in result.stdout.splitlines() if line.startswith(LONG_ID))
    assert row.split("\t")[1:4] == [LONG_AGENT, "carol", LONG_TITLE]


# -- the layout rules themselves ---------------------------------------------------------------------------------


def test_shorten_cuts_at_the_last_space_when_that_keeps_half():
    assert fit.shorten("Fork of Main conversation", 12) == "Fork of…"
    assert fit.shorten("Fork of Main conversation", 25) == "Fork of Main conversation"
    assert fit.shorten("Compactor", 8) == "Compact…"  # one word: cut inside it
    assert fit.shorten("ab cdefghijkl", 8) == "ab cdef…"  # the space would keep less than half
    assert fit.shorten("日本語のタイトル", 7) == "日本語…"  # wide characters count 2 cells


def test_optional_columns_drop_only_when_the_rest_cannot_fit_and_then_rows_become_records():
    headers = ["ID", "A", "B", "TEXT"]
    rows = [["x" * 20, "a" * 10, "b" * 10, "some words here"]]

    def plan(width, **kw):
        return fit.lay_out(headers, rows, truncate=["TEXT"], optional=["B", "A"], width=width, **kw)

    assert plan(61) == fit.Layout([0, 1, 2, 3], [20, 10, 10, 15])  # all of it fits
    assert plan(60) == fit.Layout([0, 1, 2, 3], [20, 10, 10, 14])  # TEXT narrows first, nothing dropped
    assert plan(54) == fit.Layout([0, 1, 2, 3], [20, 10, 10, 8])  # down to MIN_TEXT cells
    assert plan(53) == fit.Layout([0, 1, 3], [20, 10, 15], dropped=("B",))  # then B, the first listed, goes
    assert plan(42) == fit.Layout([0, 1, 3], [20, 10, 8], dropped=("B",))
    assert plan(41) == fit.Layout([0, 3], [20, 15], dropped=("A", "B"))
    assert plan(30) == fit.Layout([0, 3], [20, 8], dropped=("A", "B"))
    assert plan(29).records  # not even that: one block of lines a row
    assert plan(29, wide=True) == fit.Layout([0, 1, 2, 3], [20, 10, 10, 15])  # --wide: every column whole
    lines = fit.record_lines(headers, rows[0], ["TEXT"], 20)
    assert lines[:2] == ["ID", "x" * 20]  # too wide after the key: on its own line, whole
    assert all(cell_len(line) <= 20 for line in lines)


def test_a_narrow_column_stays_where_a_wider_more_wanted_one_cannot():
    headers = ["ID", "N", "WIDE", "TEXT"]
    rows = [["x" * 20, "n", "w" * 30, "some words here"]]
    layout = fit.lay_out(headers, rows, truncate=["TEXT"], optional=["N", "WIDE"], width=40)
    assert layout == fit.Layout([0, 1, 3], [20, 1, 15], dropped=("WIDE",))


def test_comfort_columns_stay_only_while_the_text_keeps_room_to_be_read():
    headers = ["ID", "EXTRA", "TEXT"]
    rows = [["x" * 20, "e" * 8, "t" * 40]]

    def plan(width):
        return fit.lay_out(headers, rows, truncate=["TEXT"], optional=["EXTRA"], comfort=["EXTRA"], width=width)

    assert plan(55) == fit.Layout([0, 2], [20, 33], dropped=("EXTRA",))  # TEXT would get 23 < COMFORT
    assert plan(56) == fit.Layout([0, 1, 2], [20, 8, 24])
    assert fit.lay_out(headers, rows, truncate=["TEXT"], optional=["EXTRA"], width=40).keep == [0, 1, 2]


def test_comfort_columns_are_not_shown_once_a_text_column_is_gone():
    """A column shown only while the text keeps room to be read has no place once the text itself was left out
    (a session list beside long ids: USER must not take the place of the title)."""
    headers = ["ID", "EXTRA", "TEXT"]
    rows = [["x" * 20, "eee", "t" * 40]]
    layout = fit.lay_out(headers, rows, truncate=["TEXT"], optional=["EXTRA", "TEXT"], comfort=["EXTRA"], width=26)
    assert layout == fit.Layout([0], [20], dropped=("EXTRA", "TEXT"))
    assert fit.lay_out(headers, rows, truncate=["TEXT"], optional=["EXTRA", "TEXT"], comfort=["EXTRA"],
                       width=60) == fit.Layout([0, 1, 2], [20, 5, 31])
