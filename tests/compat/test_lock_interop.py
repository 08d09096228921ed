"""praisonmem's session lock and the library's FileLock exclude each other, both ways."""

from __future__ import annotations

import json
import time

import pytest

from praisonmem.core.errors import LockTimeout
from praisonmem.core.io import jsonfile
from tests.compat.conftest import start_library
from tests.helpers import rewrite


def test_library_add_message_waits_for_a_praisonmem_lock(fixture_home):
    target = fixture_home / "sessions" / "my_chat.json"
    with jsonfile.locked(target):
        locked_at = time.monotonic()
        writer = start_library("""
            import time
            from praisonaiagents.session.store import DefaultSessionStore
            from praisonaiagents.paths import get_sessions_dir
            store = DefaultSessionStore(session_dir=str(get_sessions_dir()))
            print("start", flush=True)
            ok = store.add_message("my_chat", "user", "written while praisonmem held the lock")
            print("done", ok, flush=True)
        """, home=fixture_home)
        assert writer.stdout.readline().strip() == "start"
        time.sleep(1.0)
        assert writer.poll() is None, "the library wrote while praisonmem held the lock"
        released_at = time.monotonic()
    out, err = writer.communicate(timeout=30)
    assert out.strip() == "done True", err
    assert released_at - locked_at >= 1.0
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert doc["messages"][-1]["content"] == "written while praisonmem held the lock"
    assert (fixture_home / "sessions" / "my_chat.json.lock").exists()


@pytest.fixture
def library_holds_lock(fixture_home):
    holder = start_library("""
        import sys, time
        from praisonaiagents.session.store import FileLock
        with FileLock(sys.argv[1]):
            print("locked", flush=True)
            time.sleep(1.5)
        print("released", flush=True)
    """, str(fixture_home / "sessions" / "my_chat.json"), home=fixture_home)
    assert holder.stdout.readline().strip() == "locked"
    yield holder
    holder.kill()
    holder.wait()


def test_praisonmem_waits_for_the_library_lock(fixture_home, library_holds_lock):
    target = fixture_home / "sessions" / "my_chat.json"
    started = time.monotonic()

    def retitle(doc):
        doc["metadata"]["title"] = "after the library released"
        return doc

    rewrite(target, retitle, timeout=10)
    assert time.monotonic() - started >= 1.0
    assert library_holds_lock.stdout.readline().strip() == "released"
    assert json.loads(target.read_text(encoding="utf-8"))["metadata"]["title"] == "after the library released"


def test_praisonmem_gives_up_on_a_library_lock_after_its_timeout(fixture_home, library_holds_lock):
    target = fixture_home / "sessions" / "my_chat.json"
    before = target.read_bytes()
    with pytest.raises(LockTimeout):
        rewrite(target, lambda doc: {**doc, "x": 1}, timeout=0.3)
    assert target.read_bytes() == before
