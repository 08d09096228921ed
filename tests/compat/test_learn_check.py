"""``check HOME`` looks at the home's ``learn/learn.db`` (praisonaiagents' sqlite learn backend) without changing a
byte: the library's database is clean; a file SQLite cannot read, a row that does not parse, an entry the library
would fail on, and a scrub a killed praisonmem write left unfinished are each reported."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.compat.test_learn_sqlite import library_add, library_read
from tests.helpers import snapshot


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    library_add(home, home / "learn" / "learn.db", ("persona", "Prefers tea", None))
    return home


def findings(cli, home: Path) -> tuple[int, list[tuple[str, str, str]]]:
    result = cli("check", home, "--json")
    learn_db = str(home / "learn" / "learn.db")
    return result.exit_code, [(f["severity"], f["code"], f["message"]) for f in result.json()["findings"]
                              if f["file"] == learn_db]


def edit(db: Path, sql: str, *args: object) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(sql, args)
    conn.close()


def test_the_librarys_learn_db_is_clean_and_checking_it_changes_nothing(cli, home):
    before = snapshot(home)
    result = cli("check", home, "--json")
    assert result.exit_code == 0, result.stdout
    assert findings(cli, home) == (0, [])
    assert snapshot(home) == before


def test_a_learn_db_sqlite_cannot_read_is_an_error(cli, home):
    db = home / "learn" / "learn.db"
    db.write_bytes(b"not a database at all" * 100)
    before = snapshot(home)
    code, found = findings(cli, home)
    assert code == 1 and [(s, c) for s, c, _ in found] == [("error", "learn.unreadable_db")]
    assert found[0][2].endswith(": the library cannot load its learn stores from it")
    assert snapshot(home) == before


def test_a_row_that_does_not_parse_and_an_entry_without_content(cli, home):
    db = home / "learn" / "learn.db"
    edit(db, "INSERT INTO learn_store (key, data) VALUES ('insights', '{broken')")
    edit(db, "INSERT INTO learn_store (key, data) VALUES ('threads', ?)", json.dumps({"t1": {"id": "t1"}}))
    code, found = findings(cli, home)
    assert code == 1
    assert [(s, c) for s, c, _ in found] == [("error", "learn.corrupt_row"), ("error", "learn.missing_key")]
    assert found[0][2].startswith("the 'insights' row of learn_store: not the JSON")


def test_an_unfinished_scrub_is_reported_until_the_next_write_finishes_it(cli, home):
    db = home / "learn" / "learn.db"
    edit(db, "INSERT INTO learn_store (key, data) VALUES ('praisonmem:scrub_pending', '{}')")  # as a kill leaves it
    stores = library_read(home, db)
    code, found = findings(cli, home)
    assert (code, [(s, c) for s, c, _ in found]) == (0, [("warning", "learn.scrub_pending")])
    assert cli("--home", home, "learn", "add", "improvements", "Any write", "--db", db).exit_code == 0
    assert findings(cli, home) == (0, [])
    assert {k: v for k, v in library_read(home, db).items() if k != "improvements"} == stores
