"""SIGKILL ``forget`` at its write system calls over three stores, then rerun it: the same end state as an
uninterrupted run, and none of the subject's text left in any byte.

The three stores are the real libraries' (written by them): a JSON session directory with its
``sessions_index.db`` (``SqliteSessionStore``), ``sessions.db`` beside it (``SqliteTranscriptStore``) and a
praisonai CLI project store. How the kill points are found and the run is killed is the session commands'
crash test's (:class:`tests.cli.commands.test_session_crash.Crash`): strace lists the write calls of one
uninterrupted run, then kills a fresh copy on entering each chosen call: every call on both sides of each
fsync, fdatasync, rename, unlink and truncate (each commit, scrub, checkpoint, replace and removal) and a
spread of the rest; with ``PRAISONMEM_CRASH_ALL=1``, every one of them (some 400: a quarter of an hour).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.cli.commands.test_session_crash import Crash, environment, transcript_rows, with_index
from tests.indexstate import rows

ALICE = {"a-1": ["alice's passport number is X1234567", "noted the zebracornish passport"],
         "a-2": ["alice lives at 17 Crooked Lane, Sheffield", "noted the Crooked Lane address"]}
BOB = {"b-1": ["bob prefers window seats on trains", "noted the window seats"]}
WRITE = """
import json, sys
from praisonaiagents.session import SqliteSessionStore, SqliteTranscriptStore
from praisonaiagents.session.store import DefaultSessionStore
sessions, project, texts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for make, where, prefix in ((SqliteSessionStore, sessions, ""), (SqliteTranscriptStore, sessions, "db-"),
                            (DefaultSessionStore, project, "p-")):
    store = make(session_dir=where)
    for sid, (user, lines) in texts.items():
        store.set_agent_info(prefix + sid, agent_name="Helper", user_id=user)
        for i, text in enumerate(lines):
            store.add_message(prefix + sid, "user" if i % 2 == 0 else "assistant", text)
    if make is SqliteSessionStore:
        store.search("words")  # the backfill: every session indexed
"""


def three_stores(home: Path, work: Path) -> None:
    sessions = home / "sessions"
    project = sessions / "projects" / "8ccfb8a2"
    project.mkdir(parents=True)
    texts = {**{k: ("alice", v) for k, v in ALICE.items()}, **{k: ("bob", v) for k, v in BOB.items()}}
    subprocess.run([sys.executable, "-c", WRITE, str(sessions), str(project), json.dumps(texts)], check=True,
                   env=environment(), cwd=work, capture_output=True)
    assert (sessions / "sessions_index.db").is_file() and (sessions / "sessions.db").is_file()


def state(home: Path) -> dict[str, object]:
    project = home / "sessions" / "projects" / "8ccfb8a2"
    return {**with_index(home), **transcript_rows(home),
            "project": {p.name: json.loads(p.read_text()) for p in sorted(project.glob("*.json"))}}


def test_forget_killed_at_any_write_over_three_stores_is_finished_by_the_rerun(tmp_path, cli, monkeypatch):
    outside = (tmp_path / "state", tmp_path / "cache")  # the journal's dir and praisonmem's cache: fresh each run
    monkeypatch.setenv("XDG_STATE_HOME", str(outside[0]))
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(outside[1]))

    def reset() -> None:
        for path in outside:
            shutil.rmtree(path, ignore_errors=True)

    crash = Crash(tmp_path, cli, monkeypatch, three_stores, ["forget", "--user", "alice", "--yes"], prepare=reset)
    removed = tuple(text[i:i + 12].encode() for texts in ALICE.values() for text in texts
                    for i in range(0, len(text) - 11, 6))
    limit = None if os.environ.get("PRAISONMEM_CRASH_ALL") else 160
    count = crash.run(state, limit=limit, done=(), removed=removed, terms_removed=("zebracornish", "crooked"))
    assert count >= 150
    reference = tmp_path / "reference"
    assert sorted(p.name for p in (reference / "sessions").glob("*.json")) == ["b-1.json"]
    assert [r[0] for r in rows(reference / "sessions" / "sessions_index.db")["meta"]] == ["b-1"]
    assert not (tmp_path / "state" / "praisonmem" / "forget" / "journal.json").exists()
