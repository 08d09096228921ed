"""The session store interface stays small and the JSON directory implements all of it."""

from __future__ import annotations

import inspect

from praisonmem.core.sessions import stores
from praisonmem.core.sessions.stores.jsondir import JsonDirStore, Transaction

STORE = {"ref", "name", "session_id", "refs", "exists", "absent", "find", "read", "read_bytes", "parse", "scan", "holds",
         "seconds_since_write", "spilled", "spill_counts", "spill_note", "refuse_spill_clash", "transaction"}
TRANSACTION = {"exists", "read", "write", "delete", "carry_spill"}


def methods(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")}


def test_the_interface_is_what_the_session_commands_use_today():
    assert methods(stores.SessionStore) == STORE
    assert methods(stores.Transaction) == TRANSACTION


def test_the_json_directory_store_implements_every_method_with_the_same_parameters():
    for protocol, implementation in ((stores.SessionStore, JsonDirStore), (stores.Transaction, Transaction)):
        for name in methods(protocol):
            wanted = list(inspect.signature(getattr(protocol, name)).parameters)
            assert list(inspect.signature(getattr(implementation, name)).parameters) == wanted, name


def test_the_json_directory_store_makes_public_nothing_beyond_the_interface():
    # so no session module can come to lean on a method another store would not have
    assert methods(JsonDirStore) == STORE
    assert methods(Transaction) == TRANSACTION


def test_open_store_gives_the_homes_json_directory(fixture_home):
    from praisonmem.core.paths import resolve

    paths = resolve(fixture_home, env={})
    store = stores.open_store(paths)
    home = store.primary  # the first of the home's stores; the praisonai CLI's follow (test_cli_stores.py)
    assert (home.directory, home.spill_dir, home.label) == (paths.sessions_dir, paths.spill_dir, "json")
    assert store.ref("support/ticket #1234") == paths.sessions_dir / "support_ticket__1234.json"
    assert store.name(store.find("support/ticket #1234")) == "support_ticket__1234"
