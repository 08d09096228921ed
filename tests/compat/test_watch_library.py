"""``session watch`` against the real library: a praisonaiagents writer in another process appends 50 turns
while ``session watch --json`` runs; every turn arrives, in order, once. Then Ctrl-C ends it (exit 130)."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.compat.conftest import library_env

TURNS = 50
WRITER = """
    import random, sys, time
    from praisonaiagents.paths import get_sessions_dir
    kind, sid = sys.argv[1], sys.argv[2]
    if kind == "json":
        from praisonaiagents.session.store import DefaultSessionStore
        store = DefaultSessionStore(session_dir=str(get_sessions_dir()))
    else:
        from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
        store = SqliteTranscriptStore(session_dir=str(get_sessions_dir()))
    assert store.add_message(sid, "user", "seed")
    print("seeded", flush=True)
    sys.stdin.readline()
    rng = random.Random(7)
    for i in range(int(sys.argv[3])):
        assert store.add_message(sid, "user" if i % 2 == 0 else "assistant", f"turn-{i}")
        time.sleep(rng.choice([0, 0, 0.001, 0.005, 0.02]))  # bursts faster than a poll, and pauses
    print("done", flush=True)
"""


def read_lines(proc: subprocess.Popen, count: int, timeout: float) -> list[str]:
    """``count`` lines of ``proc``'s stdout, waiting at most ``timeout`` seconds in all."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    lines, buffer, deadline = [], b"", time.monotonic() + timeout
    while len(lines) < count and time.monotonic() < deadline:
        if sel.select(timeout=0.2):
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            *done, buffer = buffer.split(b"\n")
            lines += [line.decode("utf-8") for line in done]
    return lines


def start_writer(home, store: str) -> subprocess.Popen:
    """The library's own store appending turns in another process (stdin: go)."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), "json" if store == "json" else "db",
                             "live-watch", str(TURNS)], env=library_env(home), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def start_watch(home, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "praisonmem", "--home", str(home), "session", "watch", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=library_env(home))


@pytest.mark.parametrize("store", ["json", "sessions.db"])
def test_watch_json_streams_every_turn_a_library_writer_appends_in_order_once(tmp_path, store):
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    writer = start_writer(home, store)
    try:
        assert writer.stdout.readline().strip() == "seeded"
        watch = start_watch(home, "live-watch", "--store", store, "--tail", "1", "--json")
        try:
            [seed] = read_lines(watch, 1, 30)  # the watch has read the session: the writer may start
            writer.stdin.write("go\n")
            writer.stdin.flush()
            lines = read_lines(watch, TURNS, 60)
            assert writer.stdout.readline().strip() == "done"
            time.sleep(0.3)
            assert watch.poll() is None  # still following
            watch.send_signal(signal.SIGINT)
            out, err = watch.communicate(timeout=30)
        finally:
            watch.kill()
        # exit 130 and nothing more on stdout; no error object: Ctrl-C is how a watch ends
        assert (watch.returncode, out, err) == (130, b"", b"")
        records = [json.loads(line) for line in [seed] + lines]
        assert [r["content"] for r in records] == ["seed"] + [f"turn-{i}" for i in range(TURNS)]
        assert [r["index"] for r in records] == list(range(TURNS + 1))
        assert {r["session_id"] for r in records} == {"live-watch"} and not any(r["archived"] for r in records)
        assert [r["role"] for r in records[1:]] == ["user" if i % 2 == 0 else "assistant" for i in range(TURNS)]
    finally:
        writer.kill()
        writer.wait()
