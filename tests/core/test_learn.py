"""Learn stores: the O_EXCL lock protocol, dedup on add, and read-only listing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from praisonmem.core import learn
from praisonmem.core.errors import CorruptFile, LockTimeout, NotFound, UsageError
from tests.conftest import PRAISONAI_FIXTURES


@pytest.fixture
def learn_dir(tmp_path) -> Path:
    dest = tmp_path / "learn"
    shutil.copytree(PRAISONAI_FIXTURES / "home/learn", dest)
    return dest


def test_entries_list_without_bumping_use_count(learn_dir):
    before = {p: p.read_bytes() for p in learn_dir.rglob("*.json")}
    found, unreadable = learn.entries(learn_dir)
    assert sorted(e.store for e in found) == ["insights", "patterns", "persona", "threads"]
    assert unreadable == []
    assert {p: p.read_bytes() for p in learn_dir.rglob("*.json")} == before
    assert [e.entry["content"] for e in learn.entries(learn_dir, store="persona", user_id="alice")[0]] == [
        "Prefers concise answers"]


def test_add_is_byte_compatible_and_dedups_like_the_library(learn_dir):
    path = learn_dir / "private" / "alice" / "persona.json"
    entry, new = learn.add(path, "persona", "Likes tea", {"category": "drinks"})
    assert new and entry["id"].startswith("persona_1_")
    assert list(entry) == ["id", "content", "metadata", "created_at", "updated_at", "use_count", "last_used"]
    again, new_again = learn.add(path, "persona", "  LIKES TEA ", {"source": "cli"})
    assert not new_again and again["id"] == entry["id"]
    stored = json.loads(path.read_text())[entry["id"]]
    assert stored["metadata"] == {"category": "drinks", "source": "cli"}
    assert path.read_bytes() == json.dumps(json.loads(path.read_text()), indent=2, ensure_ascii=False).encode()
    assert not Path(f"{path}.lock").exists()


def test_delete_and_clear(learn_dir):
    path = learn_dir / "private" / "alice" / "threads.json"
    [entry] = learn.entries(learn_dir, store="threads")[0]
    learn.delete(path, entry.entry["id"])
    assert json.loads(path.read_text()) == {}
    with pytest.raises(NotFound):
        learn.delete(path, entry.entry["id"])
    insights = learn_dir / "private" / "alice" / "insights.json"
    assert learn.clear(insights, dry_run=True) == 1 and learn.clear(insights) == 1
    assert json.loads(insights.read_text()) == {}


HOLD = textwrap.dedent("""
    import os, sys, time
    fd = os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    os.close(fd)
    os.unlink(sys.argv[1])
""")


def test_waits_for_a_live_lock_and_gives_up_after_the_timeout(learn_dir):
    path = learn_dir / "private" / "alice" / "persona.json"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, f"{path}.lock", "0.6"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    started = time.monotonic()
    learn.add(path, "persona", "waited", timeout=5)
    assert time.monotonic() - started >= 0.4
    holder.wait()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, f"{path}.lock", "5"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    try:
        with pytest.raises(LockTimeout):
            learn.add(path, "persona", "never", timeout=0.3)
    finally:
        holder.kill()
        holder.wait()


def test_a_stale_lock_is_taken_over(learn_dir):
    path = learn_dir / "private" / "alice" / "persona.json"
    lock = Path(f"{path}.lock")
    lock.write_text("")
    os.utime(lock, (time.time() - 30, time.time() - 30))
    learn.add(path, "persona", "after a crash", timeout=1)
    assert not lock.exists()


def test_unreadable_store_is_refused(learn_dir):
    path = learn_dir / "private" / "alice" / "persona.json"
    path.write_bytes(b"{")
    with pytest.raises(CorruptFile):
        learn.add(path, "persona", "x")
    assert path.read_bytes() == b"{"
    assert learn.entries(learn_dir)[1] and "persona.json" in learn.entries(learn_dir)[1][0]


@pytest.mark.parametrize("kwargs", [{"store": "nope"}, {"scope": "public"}, {"user_id": "../x"}])
def test_bad_names(learn_dir, kwargs):
    with pytest.raises(UsageError):
        learn.entries(learn_dir, **kwargs)


def test_release_never_deletes_a_lock_it_no_longer_owns(learn_dir):
    path = learn_dir / "private" / "alice" / "persona.json"
    lock = Path(f"{path}.lock")
    with learn.locked(path):
        lock.unlink()  # a peer judged it stale and took over with its own lock file
        lock.write_text("peer")
    assert lock.read_text() == "peer"


def test_a_stale_lock_refreshed_by_its_holder_is_not_broken(learn_dir, monkeypatch):
    path = learn_dir / "private" / "alice" / "persona.json"
    lock = Path(f"{path}.lock")
    lock.write_text("")
    os.utime(lock, (time.time() - 30, time.time() - 30))
    real_stat = Path.stat
    calls = []

    def stat_then_heartbeat(self, *args, **kwargs):
        result = real_stat(self, *args, **kwargs)
        if self == lock and not calls:
            calls.append(1)
            os.utime(lock, None)  # the holder heartbeats right after we judged it stale
        return result

    monkeypatch.setattr(Path, "stat", stat_then_heartbeat)
    with pytest.raises(LockTimeout):
        with learn.locked(path, timeout=0.3):
            pass
    assert lock.exists()
