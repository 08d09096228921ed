"""``session watch``'s core: new turns in order and once, whatever the writer does to the file; no lock, no
write."""

from __future__ import annotations

import json
import os
import sys

import pytest

from praisonmem.core.errors import NotFound
from praisonmem.core.io import jsonfile
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import watch_session
from tests.helpers import hold_flock, snapshot


def message(i: int, role: str | None = None, content: str | None = None) -> dict:
    role = role or ("user" if i % 2 == 0 else "assistant")
    return {"role": role, "content": content if content is not None else f"turn-{i}", "timestamp": 1796050000.0 + i,
            "metadata": {}}


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    write(home, [message(0), message(1, "assistant")])
    return home


def write(home, messages, archived=(), **extra) -> None:
    """Replace the session file atomically, as the library does (a temp file renamed over it)."""
    doc = {"session_id": "w", "messages": list(messages), "archived_messages": list(archived),
           "created_at": "2026-11-30T14:00:00+00:00", "updated_at": "2026-11-30T14:00:00+00:00", **extra}
    path = home / "sessions" / "w.json"
    tmp = path.with_name("w.json.tmp")
    tmp.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def files_but_the_session(home) -> dict:
    """Every file but the one the test's writer replaces (the lock sidecar included), and its bytes."""
    return {k: v for k, v in snapshot(home).items() if not k.endswith("w.json") and k != "sessions"}


def contents(batch) -> list[str]:
    return [t.message["content"] for t in batch]


@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "polling"])
def test_new_turns_arrive_in_order_once_across_atomic_replaces(home, inotify):
    seen = []
    turns = watch_session(resolve(home, env={}), "w", tail=1, interval=0.05, use_inotify=inotify,
                          started=seen.append)
    assert contents(next(turns)) == ["turn-1"]
    expected_mode = "inotify" if inotify and sys.platform.startswith("linux") else "polling"
    assert (seen[0].session_id, seen[0].store, seen[0].mode, seen[0].turns) == ("w", "json", expected_mode, 2)
    write(home, [message(i) for i in range(4)])
    batch = next(turns)
    assert contents(batch) == ["turn-2", "turn-3"] and [t.index for t in batch] == [2, 3]
    # compaction: old turns archived, a summary first; only the summary is new
    summary = message(99, "system", "[Session Summary] turns 0-2")
    write(home, [summary, message(3), message(4)], archived=[message(0), message(1), message(2)])
    assert contents(next(turns)) == ["[Session Summary] turns 0-2", "turn-4"]
    # the same turn written twice on purpose is shown twice
    write(home, [summary, message(3), message(4), message(5), message(5)], archived=[message(i) for i in range(3)])
    assert contents(next(turns)) == ["turn-5", "turn-5"]


def test_a_torn_read_is_retried_and_a_vanished_file_is_waited_for(home):
    turns = watch_session(resolve(home, env={}), "w", tail=0, interval=0.05, use_inotify=False)
    assert next(turns) == []
    path = home / "sessions" / "w.json"
    path.write_text('{"session_id": "w", "messages": [', encoding="utf-8")  # a writer that does not rename
    path.unlink()
    write(home, [message(0), message(1, "assistant"), message(2)])
    assert contents(next(turns)) == ["turn-2"]
    assert sorted(p.name for p in (home / "sessions").iterdir()) == ["w.json"]  # not even a lock file


def test_a_watch_takes_no_lock_and_writes_nothing(home):
    lock = home / "sessions" / "w.json.lock"
    holder = hold_flock(lock, 30)  # an agent mid-write holds the session's lock: the watch must not wait
    try:
        before = files_but_the_session(home)
        turns = watch_session(resolve(home, env={}), "w", tail=2, interval=0.05)
        assert contents(next(turns)) == ["turn-0", "turn-1"]
        write(home, [message(0), message(1, "assistant"), message(2)])
        assert contents(next(turns)) == ["turn-2"]
        turns.close()
        assert files_but_the_session(home) == before
    finally:
        holder.kill()
        holder.wait()


def test_an_unknown_session_is_not_found_before_anything_is_watched(home):
    with pytest.raises(NotFound):
        next(watch_session(resolve(home, env={}), "nope"))


def test_watch_and_tail_print_what_session_show_prints(cli, home):
    args = ("--home", home, "session")
    tail = cli(*args, "tail", "w", "-n", "1", "--json")
    assert tail.exit_code == 0
    assert [json.loads(line) for line in tail.stdout.splitlines()] == [
        {"session_id": "w", "archived": False, "index": 1, **message(1, "assistant")}]
    human = cli(*args, "tail", "w", "-n", "2")
    assert human.exit_code == 0 and human.stdout.splitlines()[1::2] == ["turn-0", "turn-1"]
    missing = cli(*args, "watch", "nope")
    assert (missing.exit_code, missing.stdout) == (3, "")
    assert missing.stderr.startswith("praisonmem: error: no session 'nope'") and missing.stderr.count("\n") == 1
    assert jsonfile.read_object(home / "sessions" / "w.json")["session_id"] == "w"


def test_stop_ends_the_watch_at_the_next_tick_when_it_says_so(home):
    """A caller in another thread cannot close a running generator: ``stop`` asked at each tick ends it."""
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) >= 3  # the third tick

    watch = watch_session(resolve(str(home), None, env={}), "w", tail=5, interval=0.01, use_inotify=False, stop=stop)
    assert contents(next(watch)) == ["turn-0", "turn-1"]
    assert list(watch) == []  # no more turns came, and the watch ended instead of waiting for them
    assert len(asked) == 3
