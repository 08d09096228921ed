"""The session store interface stays small, and every store (and the home that holds them) implements all of it."""

from __future__ import annotations

import inspect

import pytest

from praisonmem.core.sessions import stores
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.stores import home, jsondir, runs, sqlite_transcript, unified

STORE = {"ref", "name", "session_id", "store_of", "refs", "exists", "absent", "find", "copies", "read", "read_bytes",
         "parse", "scan", "holds", "seconds_since_write", "spilled", "spill_note", "refuse_spill_clash", "refuse",
         "transaction"}
TRANSACTION = {"exists", "read", "write", "read_bytes", "write_raw", "delete", "carry_spill", "rewrite_spill", "drop_spill",
               "forget_replaced"}
IMPLEMENTATIONS = [(jsondir.JsonDirStore, jsondir.Transaction), (sqlite_transcript.TranscriptDbStore,
                                                                  sqlite_transcript.Transaction),
                   (unified.UnifiedStore, unified.UnifiedTransaction),
                   (runs.RunStore, runs.RunTransaction), (home.Home, home.HomeTransaction)]


def methods(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")}


def test_the_interface_is_what_the_session_commands_use():
    assert methods(stores.SessionStore) == STORE
    assert methods(stores.Transaction) == TRANSACTION
    assert set(stores.SessionStore.__annotations__) == {"label"}
    assert set(stores.Transaction.__annotations__) == {"notes"}


@pytest.mark.parametrize("store, transaction", IMPLEMENTATIONS, ids=lambda c: c.__module__.rsplit(".", 1)[-1])
def test_every_store_implements_every_method_with_the_same_parameters(store, transaction):
    for protocol, implementation in ((stores.SessionStore, store), (stores.Transaction, transaction)):
        for name in methods(protocol):
            wanted = list(inspect.signature(getattr(protocol, name)).parameters)
            assert list(inspect.signature(getattr(implementation, name)).parameters) == wanted, name


@pytest.mark.parametrize("store, transaction", IMPLEMENTATIONS, ids=lambda c: c.__module__.rsplit(".", 1)[-1])
def test_no_store_makes_public_anything_beyond_the_interface(store, transaction):
    # so no session module can come to lean on a method another store would not have
    assert methods(store) == STORE and isinstance(store.label, str)
    assert methods(transaction) == TRANSACTION


def test_open_store_gives_the_home_with_its_json_directory_first(fixture_home):
    from praisonmem.core.paths import resolve

    paths = resolve(fixture_home, env={})
    store = open_store(paths)
    assert list(store.stores) == ["json", "unified", "legacy-run"]  # no sessions.db nor project store in this home
    json_dir = store.stores["json"]
    assert (json_dir.directory, json_dir.spill_dir, json_dir.label) == (paths.sessions_dir, paths.spill_dir, "json")
    assert store.ref("support/ticket #1234") == home.Located("json", str(paths.sessions_dir / "support_ticket__1234.json"))
    assert store.name(store.find("support/ticket #1234")) == "support_ticket__1234"


def test_a_gateway_home_has_both_stores_and_a_store_label_narrows_it(gateway_home):
    from praisonmem.core.errors import NotFound, UsageError
    from praisonmem.core.paths import resolve

    paths = resolve(gateway_home.home, env={})
    assert list(open_store(paths).stores) == ["json", "sessions.db", "project:8ccfb8a2", "unified", "legacy-run"]
    assert list(open_store(paths, "sessions.db").stores) == ["sessions.db"]
    assert list(open_store(paths, "project:8ccfb8a2").stores) == ["project:8ccfb8a2"]
    with pytest.raises(UsageError, match="unknown store 'db'; this home has: json, sessions.db, project:8ccfb8a2, "
                                         "unified, legacy-run$"):
        open_store(paths, "db")
    gateway_home.db.unlink()
    with pytest.raises(NotFound, match="no sessions.db in "):
        open_store(paths, "sessions.db")


def test_a_prefix_naming_several_rows_of_a_database_store_names_the_store_and_the_first_ten(gateway_home):
    import sqlite3

    from praisonmem.core.errors import AmbiguousName

    db = gateway_home.db
    conn = sqlite3.connect(db)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(sessions)")]
    template = conn.execute("SELECT * FROM sessions LIMIT 1").fetchone()
    for i in range(12):
        row = dict(zip(columns, template), session_id=f"dup-{i:02d}")
        conn.execute(f"INSERT INTO sessions ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                     tuple(row.values()))
    conn.commit()
    conn.close()
    with pytest.raises(AmbiguousName) as caught:
        sqlite_transcript.TranscriptDbStore(db).find("dup-", allow_prefix=True)
    assert str(caught.value) == (f"'dup-' matches several sessions in {db}: "
                                 + ", ".join(f"dup-{i:02d}" for i in range(10)) + " and 2 more")
