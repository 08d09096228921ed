"""Safety against the real libraries: the learn-store lock still excludes praisonaiagents' own
writers, a database praisonmem creates stays private while Upsonic writes it, and what the
library itself writes into a session is shown escaped."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time

import pytest

from praisonmem.core import learn
from tests.compat.conftest import last_json, run_library, start_library
from tests.conftest import FIXTURES

LIBRARY_HOLDS_LEARN_LOCK = """
    import sys, time
    from praisonaiagents.storage.base import FileLock
    with FileLock(sys.argv[1], timeout=10.0):
        print("locked", flush=True)
        time.sleep(1.0)
    print("released", flush=True)
"""

LIBRARY_TAKES_LEARN_LOCK = """
    import sys, time
    from praisonaiagents.storage.base import FileLock
    print("start", flush=True)
    started = time.monotonic()
    with FileLock(sys.argv[1], timeout=10.0):
        print(f"locked after {time.monotonic() - started:.2f}", flush=True)
"""


def test_the_learn_lock_excludes_the_librarys_both_ways(fixture_home):
    """praisonaiagents 1.7.17's learn stores load and save under two separate holds of this lock, so
    it cannot make their writes atomic; what it must do is exclude each hold, both ways."""
    store = fixture_home / "learn" / "private" / "alice" / "persona.json"
    holder = start_library(LIBRARY_HOLDS_LEARN_LOCK, str(store), home=fixture_home)
    assert holder.stdout.readline().strip() == "locked"
    started = time.monotonic()
    learn.add(store, "persona", "written after the library let go", timeout=5)
    waited = time.monotonic() - started
    holder.communicate(timeout=30)
    assert waited >= 0.5
    with learn.locked(store, timeout=5):
        taker = start_library(LIBRARY_TAKES_LEARN_LOCK, str(store), home=fixture_home)
        assert taker.stdout.readline().strip() == "start"
        time.sleep(1.0)
        assert taker.poll() is None, "the library took the learn lock while praisonmem held it"
    out, err = taker.communicate(timeout=30)
    assert out.startswith("locked after "), err
    assert float(out.split()[-1]) >= 0.8
    assert not os.path.lexists(f"{store}.lock")


def test_a_database_praisonmem_creates_stays_private_while_upsonic_writes_it(cli, tmp_path):
    pytest.importorskip("upsonic")
    source = tmp_path / "source.db"
    shutil.copy(FIXTURES / "upsonic-0.77.3" / "data.db", source)
    export = tmp_path / "export.json"
    assert cli("upsonic", "export", "--db", source, "-o", export).exit_code == 0
    db = tmp_path / "made" / "data.db"
    old = os.umask(0o022)
    try:
        assert cli("upsonic", "import", export, "--db", db).exit_code == 0
        seen = last_json(run_library("""
            import json, sys
            from upsonic.storage.schemas import UserMemory
            from upsonic.storage.sqlite import SqliteStorage
            storage = SqliteStorage(db_file=sys.argv[1])
            storage.upsert_user_memory(UserMemory(user_id="user_789", user_memory={"tone": "dry"}))
            users, count = storage.get_user_memories(deserialize=False)
            print(json.dumps({"users": count}))
        """, str(db), home=tmp_path, UPSONIC_TELEMETRY="false"))
    finally:
        os.umask(old)
    assert seen == {"users": 3}
    assert {p.name: f"{stat.S_IMODE(p.stat().st_mode):04o}" for p in db.parent.iterdir()} == {"data.db": "0600"}


def test_what_the_library_stores_is_shown_escaped_and_exact_in_json(cli, tmp_path):
    home = tmp_path / "home"
    content = "booked \x1b]0;pwned\x07 the \x9b2J hotel\nline two"
    run_library("""
        import sys
        from praisonaiagents.session.store import DefaultSessionStore
        from praisonaiagents.paths import get_sessions_dir
        store = DefaultSessionStore(session_dir=str(get_sessions_dir()))
        assert store.add_message("trip", "user", sys.argv[1])
    """, content, home=home)
    shown = cli("--home", home, "session", "show", "trip").stdout
    assert "booked \\x1b]0;pwned\\x07 the \\x9b2J hotel\nline two\n" in shown
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    as_json = cli("--home", home, "session", "show", "trip", "--json").stdout
    assert "\x9b" not in as_json
    assert json.loads(as_json)["messages"][0]["content"] == content
