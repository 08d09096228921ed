"""SQLite memory: the adapter's files, rows and search SQL."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from praisonmem.core.errors import UsageError
from praisonmem.core.memory.sqlitememory import SqliteMemoryStore, user_suffix, users
from tests.conftest import PRAISONAI_FIXTURES

ORACLES = json.loads((PRAISONAI_FIXTURES / "expected/memory.json").read_text(encoding="utf-8"))
FIXTURE = PRAISONAI_FIXTURES / "project" / ".praisonai"


@pytest.fixture
def project(tmp_path) -> Path:
    dest = tmp_path / ".praisonai"
    dest.mkdir()
    for name in ("short_term_alice.db", "long_term_alice.db"):
        shutil.copy(FIXTURE / name, dest / name)
    return dest


def test_search_equals_the_adapter_oracle(project):
    store = SqliteMemoryStore(project, "alice")
    assert store.search("short_term", "dark mode", 5) == ORACLES["sqlite_adapter_search"]["short('dark mode')"]
    assert store.search("long_term", "Where does Alice live?", 5) == \
        ORACLES["sqlite_adapter_search"]["long('Where does Alice live?')"]


def test_store_writes_rows_like_the_adapter(project):
    row = SqliteMemoryStore(project, "alice").store("short_term", "Gruß ✓", {"source": "cli"})
    assert row["id"] == "4"  # AUTOINCREMENT: 2 was deleted, 3 is the last
    raw = sqlite3.connect(project / "short_term_alice.db").execute(
        "SELECT content, metadata FROM short_term_memory WHERE id = 4").fetchone()
    assert raw == ("Gruß ✓", '{"source": "cli", "user_id": "alice"}')


def test_user_suffix_is_the_librarys_and_a_blank_user_is_unsuffixed(tmp_path):
    assert SqliteMemoryStore(tmp_path, "default").files["short_term"].name == "short_term_default.db"
    store = SqliteMemoryStore(tmp_path, "")
    assert store.files["short_term"].name == "short_term.db" and not store.scoped
    assert store.search("short_term", "x") == [] and store.all("long_term") == []
    assert list(tmp_path.iterdir()) == []
    store.store("long_term", "x")
    ddl = sqlite3.connect(tmp_path / "long_term.db").execute("SELECT sql FROM sqlite_master WHERE name = "
                                                             "'long_term_memory'").fetchone()[0]
    assert ddl.startswith("CREATE TABLE long_term_memory (\n                        id INTEGER PRIMARY KEY")


def test_delete_and_reset(project):
    store = SqliteMemoryStore(project, "alice")
    assert store.delete("1") == ["short_term", "long_term"]
    assert store.delete("3", "short_term") == ["short_term"]
    store.reset("long_term")
    assert store.all("short_term") == [] and store.all("long_term") == []


def test_user_suffix_rules_and_users(project):
    assert user_suffix("a b:c") == "_a_b_c"
    with pytest.raises(UsageError):
        user_suffix("../x")
    assert users(project) == ["alice"]
