"""``praisonmem locate``'s output, exactly: the JSON document, the table on an 80-column terminal and piped, and
what each bad input gets (one stderr line, the documented exit code, nothing on stdout)."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from tests.cli.test_table_fit import on_a_terminal
from tests.conftest import UPSONIC_DB

CONVERSATIONS = Path(__file__).resolve().parents[1] / "fixtures" / "praisonai-4.7.19-conversations" / \
    "praisonai_conversations.db"


@pytest.fixture
def tree(tmp_path) -> Path:
    """Two stores with fixed mtimes, and a decoy."""
    root = tmp_path / "stores"
    (root / "app").mkdir(parents=True)
    shutil.copy(UPSONIC_DB, root / "app" / "upsonic.db")
    shutil.copy(CONVERSATIONS, root / "chat.db")
    (root / "app" / "notes.json").write_text('{"title": "x"}', encoding="utf-8")
    os.utime(root / "app" / "upsonic.db", (1796050000, 1796050000))
    os.utime(root / "chat.db", (1796060000.5, 1796060000.5))
    return root


def test_json_shape(cli, tree):
    result = cli("locate", str(tree), "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == {
        "stores": [
            {"path": f"{tree}/app/upsonic.db", "kind": "upsonic-sqlite", "library": "upsonic",
             "size": UPSONIC_DB.stat().st_size, "modified": 1796050000.0, "holds": {"sessions": 4, "users": 2},
             "command": f"praisonmem upsonic sessions --db {tree}/app/upsonic.db", "flags": []},
            {"path": f"{tree}/chat.db", "kind": "conversation-sqlite", "library": "praisonai",
             "size": CONVERSATIONS.stat().st_size, "modified": 1796060000.5, "holds": {"sessions": 5, "messages": 17},
             "command": f"praisonmem session list --store {tree}/chat.db", "flags": []}],
        "servers": [],
        "skipped": []}


def test_piped_table_is_tab_separated_and_whole(cli, tree):
    result = cli("locate", str(tree))
    assert result.exit_code == 0
    when = datetime.fromtimestamp(1796050000).strftime("%Y-%m-%d %H:%M:%S")  # piped: to the second
    when2 = datetime.fromtimestamp(1796060000.5).strftime("%Y-%m-%d %H:%M:%S")
    assert result.stdout.splitlines() == [
        "PATH\tKIND\tLIBRARY\tHOLDS\tSIZE\tMODIFIED\tFLAGS\tCOMMAND",
        f"{tree}/app/upsonic.db\tupsonic-sqlite\tupsonic\tsessions=4 users=2\t{UPSONIC_DB.stat().st_size}\t{when}\t\t"
        f"praisonmem upsonic sessions --db {tree}/app/upsonic.db",
        f"{tree}/chat.db\tconversation-sqlite\tpraisonai\tsessions=5 messages=17\t{CONVERSATIONS.stat().st_size}\t"
        f"{when2}\t\tpraisonmem session list --store {tree}/chat.db"]
    assert result.stderr == "praisonmem: 2 stores, 0 flagged, 0 servers\n"  # the rows alone on stdout


def test_table_on_an_80_column_terminal(tmp_path):
    root = tmp_path / "s"
    root.mkdir()
    shutil.copy(UPSONIC_DB, root / "u.db")
    os.utime(root / "u.db", (1796050000, 1796050000))
    code, lines = on_a_terminal(["locate", "s"], tmp_path, 80)
    assert code == 0
    size = UPSONIC_DB.stat().st_size
    when = datetime.fromtimestamp(1796050000).strftime("%Y-%m-%d %H:%M")
    path = f"{root}/u.db"
    shown = [line for line in lines if line.strip()]
    assert all(len(line) <= 80 for line in lines)
    # A path and a command are never cut: too wide for one line, each store is a block of HEADER  value lines.
    command = f"praisonmem upsonic sessions --db {path}"
    expected = [f"PATH      {path}", "KIND      upsonic-sqlite", "LIBRARY   upsonic", "HOLDS     sessions=4 users=2",
                f"SIZE      {size / 1024:.1f} KiB", f"MODIFIED  {when}"]
    if len(command) + 10 <= 80:
        expected.append(f"COMMAND   {command}")
    else:
        expected += ["COMMAND", *[command[i:i + 80] for i in range(0, len(command), 80)]]
    expected.append("1 store, 0 flagged, 0 servers")
    assert shown == expected


def test_a_wide_terminal_shows_one_row_per_store(tmp_path):
    root = tmp_path / "s"
    root.mkdir()
    shutil.copy(UPSONIC_DB, root / "u.db")
    os.utime(root / "u.db", (1796050000, 1796050000))
    code, lines = on_a_terminal(["locate", "s"], tmp_path, 400)
    assert code == 0
    path, when = f"{root}/u.db", datetime.fromtimestamp(1796050000).strftime("%Y-%m-%d %H:%M")
    size = f"{UPSONIC_DB.stat().st_size / 1024:.1f} KiB"
    cells = [path, "upsonic-sqlite", "upsonic", "sessions=4 users=2", size, when,
             f"praisonmem upsonic sessions --db {path}"]
    heads = ["PATH", "KIND", "LIBRARY", "HOLDS", "SIZE", "MODIFIED", "COMMAND"]  # FLAGS: none has any
    widths = [max(len(h), len(c)) for h, c in zip(heads, cells)]
    shown = [line.rstrip() for line in lines if line.strip()]
    assert shown == ["  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip(), "─" * (sum(widths) + 12),
                     "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip(),
                     "1 store, 0 flagged, 0 servers"]


@pytest.mark.parametrize(("args", "code", "message"), [
    (["locate", "nope"], 3, "nope: no such directory"),
    (["locate", "afile"], 2, "afile: not a directory (locate walks directories)"),
    (["locate", "--depth", "-1"], 2, "--depth must be 0 or more, got -1"),
])
def test_bad_input(cli, args, code, message):
    Path("afile").write_text("x", encoding="utf-8")
    result = cli(*args)
    assert (result.exit_code, result.stdout) == (code, "")
    assert result.stderr == f"praisonmem: error: {message}\n"
    as_json = cli(*args, "--json")
    assert (as_json.exit_code, as_json.stdout) == (code, "")
    assert json.loads(as_json.stderr)["error"]["exit_code"] == code


def test_an_unreadable_directory_is_one_warning_line_and_exit_1(cli, tree, monkeypatch):
    real = os.scandir
    blocked = str(tree / "app")

    def scandir(path="."):
        if os.fspath(path) == blocked:
            raise PermissionError(13, "Permission denied", blocked)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = cli("locate", str(tree))
    assert result.exit_code == 1
    assert result.stderr == (f"praisonmem: warning: cannot read {blocked}: permission denied\n"
                             "praisonmem: 1 store, 0 flagged, 0 servers, 1 path not read\n")


def test_a_crafted_name_reaches_no_terminal_and_a_view_is_not_counted(cli, tmp_path):
    import sqlite3

    root = tmp_path / "t"
    odd = root / "evil\x1b[2Jname"
    odd.mkdir(parents=True)
    shutil.copy(UPSONIC_DB, odd / "u.db")
    conn = sqlite3.connect(root / "views.db")  # a view by the store's name would run its own query on every read
    conn.execute("CREATE TABLE t (session_id TEXT, session_type TEXT)")
    conn.execute("CREATE VIEW upsonic_sessions AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                 "SELECT n AS session_id, n AS session_type FROM r")
    conn.commit()
    conn.close()
    piped = cli("locate", str(root))
    assert piped.exit_code == 0
    assert "\x1b" not in piped.stdout and "\\x1b[2Jname" in piped.stdout
    document = json.loads(cli("locate", str(root), "--json").stdout)
    assert [(s["path"], s["kind"]) for s in document["stores"]] == [(f"{odd}/u.db", "upsonic-sqlite")]
