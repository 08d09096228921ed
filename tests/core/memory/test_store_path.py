"""What ``memory store`` does for speed keeps the protocol: the same flock on the same sidecar,
taken without filelock; no cyclic collection over a large store while it is rewritten; and the cheaper
scan for an exponent in the proof finds exactly what the old search found."""

from __future__ import annotations

import fcntl
import gc
import json
import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from praisonmem.core.errors import LockTimeout
from praisonmem.core.io import fastjson, gcpolicy, jsonfile
from praisonmem.core.memory.filememory import FileMemoryStore, user_lock
from tests.conftest import REPO


def items(count: int) -> list[dict]:
    return [{"id": f"{i:016x}", "content": f"note {i} about dark mode", "metadata": {}, "created_at": 1.7e9 + i,
             "updated_at": 1.7e9 + i, "access_count": 0, "importance": 0.5} for i in range(count)]


@pytest.fixture
def store(tmp_path):
    user = tmp_path / "memory" / "bob"
    user.mkdir(parents=True)
    (user / "long_term.json").write_bytes(jsonfile.serialise(items(50)))
    return FileMemoryStore(tmp_path / "memory", "bob", timeout=0.2)


@pytest.mark.parametrize("holder", ["flock", "filelock"])
def test_a_held_user_lock_stops_the_write_whoever_holds_it(store, holder):
    """An older praisonmem holds the sidecar through filelock, a newer one through a bare flock: both exclude."""
    lock = store.user_dir / ".praisonmem.lock"
    before = (store.user_dir / "long_term.json").read_bytes()
    if holder == "flock":
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        release = lambda: os.close(fd)  # noqa: E731
    else:
        from filelock import UnixFileLock

        held = UnixFileLock(str(lock))
        held.acquire()
        release = held.release
    try:
        with pytest.raises(LockTimeout, match=r"could not lock .*\.praisonmem\.lock within 0\.2s"):
            store.add_long_term("blocked")
    finally:
        release()
    assert (store.user_dir / "long_term.json").read_bytes() == before
    store.add_long_term("after")  # released: it goes through
    assert json.loads((store.user_dir / "long_term.json").read_text())[-1]["content"] == "after"


def test_the_user_lock_excludes_a_filelock_holder_and_creates_a_missing_directory(tmp_path):
    from filelock import Timeout, UnixFileLock

    user = tmp_path / "new" / "user"
    with user_lock(user, 0.2):  # no directory yet: created, then locked
        assert (user / ".praisonmem.lock").is_file()
        with pytest.raises(Timeout):
            UnixFileLock(str(user / ".praisonmem.lock"), timeout=0.1).acquire()
    with user_lock(user, 0.2):  # there now: the quick lock, the same file
        with pytest.raises(Timeout):
            UnixFileLock(str(user / ".praisonmem.lock"), timeout=0.1).acquire()


def test_storing_into_an_existing_user_does_not_import_filelock(tmp_path):
    user = tmp_path / "memory" / "bob"
    user.mkdir(parents=True)
    code = textwrap.dedent(f"""
        import sys
        from praisonmem.core.memory.filememory import FileMemoryStore
        FileMemoryStore({str(tmp_path / "memory")!r}, "bob").add_long_term("x")
        print("filelock" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout == "False\n"


def test_rewriting_a_large_store_runs_no_cyclic_collection(tmp_path):
    user = tmp_path / "memory" / "bob"
    user.mkdir(parents=True)
    tagged = [{**item, "metadata": {"tags": ["ui"]}} for item in items(8000)]  # objects the collector tracks
    (user / "long_term.json").write_bytes(jsonfile.serialise(tagged))  # over gcpolicy.LARGE
    assert (user / "long_term.json").stat().st_size > gcpolicy.LARGE
    store = FileMemoryStore(tmp_path / "memory", "bob")
    gc.collect()
    passes: list[int] = []
    callback = lambda phase, info: phase == "start" and passes.append(gc.get_count()[0])  # noqa: E731
    gc.callbacks.append(callback)
    try:
        store.add_long_term("x")
    finally:
        gc.callbacks.remove(callback)
    assert gc.isenabled()
    # none while the 8,000 items were alive (24,000 tracked objects); a pass over the few left after is cheaper
    # than promoting them (gcpolicy.to_oldest)
    assert passes in ([], [passes[0]]) and all(young < gcpolicy.YOUNG_MANY for young in passes)


def test_no_gc_leaves_the_collector_as_it_found_it():
    gc.disable()
    try:
        with gcpolicy.no_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(KeyError):
        with gcpolicy.no_gc():
            raise KeyError
    assert gc.isenabled()


def digit_e_minus(raw: bytes) -> bool:
    """What the scan is for: a digit followed by ``e-``, anywhere (the search it replaced stopped at an
    ``e-`` at offset 0, which no JSON document has)."""
    import re

    return re.search(rb"[0-9]e-", raw) is not None


@settings(max_examples=1500, deadline=None)
@given(raw=st.binary(max_size=40) | st.lists(st.sampled_from([b"e", b"-", b"1", b"e-", b"1e-", b"x", b" ", b"--"]),
                                             max_size=30).map(b"".join), dashes=st.sampled_from([0, 3, 4096]))
def test_the_exponent_scan_finds_every_digit_followed_by_e_minus(raw, dashes):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(fastjson, "DASHES", dashes)  # both ways: each '-' looked at, or the two-byte search
        assert fastjson._exponent_minus(raw) == digit_e_minus(raw)


def test_no_gc_keeps_frozen_what_the_caller_froze_and_the_cli_promotes_its_young_objects():
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        many = 2 * gcpolicy.YOUNG_MANY
        with gcpolicy.no_gc():
            young = [[i] for i in range(many)]
        assert gc.get_freeze_count() == frozen  # a program's own frozen objects stay frozen
        gcpolicy.configure(frozen=True)  # as praisonmem's console script, which froze its imports for speed
        with gcpolicy.no_gc():
            young += [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen  # a few young objects: not worth a pass over the unfrozen at exit
        gc.collect()
        before = gc.get_count()[0]
        with gcpolicy.no_gc():
            young += [[i] for i in range(many)]
        assert gc.get_freeze_count() == 0 and gc.get_count()[0] < before + many  # gone to the oldest generation
    finally:
        gcpolicy.configure(frozen=False)
        gc.unfreeze()
