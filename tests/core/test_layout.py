"""The one model of a home's layout: the kind of each file, the lock each kind is written under."""

from __future__ import annotations

import ast
import inspect

import pytest

from praisonmem.core import layout
from praisonmem.core.layout import Kind, Lock, archive_kind, classify, lock_of
from tests.conftest import REPO


@pytest.mark.parametrize("relative, kind", [
    ("sessions/my_chat.json", Kind.session),
    ("sessions/sessions.db", Kind.database),
    ("sessions/sessions_index.db", Kind.database),
    ("sessions/sessions.db-wal", Kind.database_sidecar),
    ("sessions/projects/0123abcd/x.json", Kind.session),
    ("sessions/projects/0123abcd/sessions_index.db", Kind.database),
    ("sessions/run_20240101_101010_abcdef/metadata.json", Kind.run_file),
    ("sessions/run_20240101_101010_abcdef/events.jsonl", Kind.run_file),
    ("sessions/.last_session", Kind.session_dir_file),
    ("sessions/my_chat.json.corrupt-1712345678901", Kind.session_dir_file),
    ("state/session_spill/my_chat.1712345678.json", Kind.spill),
    ("learn/private/alice/persona.json", Kind.learn_store),
    ("learn/shared/alice/persona.archive.json", Kind.learn_archive),
    ("memory/alice/short_term.json", Kind.memory_file),
    ("memory/team/alice/episodic/2026-01-02.json", Kind.memory_file),
    ("memory/config.json", Kind.memory_file),
    # what no store writes there: locks, temp files, foreign names and places
    ("sessions/my_chat.json.lock", None),
    ("sessions/.my_chat.json.k1ll3d_a.tmp", None),
    ("sessions/projects/x.json", None),
    ("sessions/projects/not-hex1/x.json", None),
    ("sessions/other/x.json", None),
    ("state/session_spill/sub/x.json", None),
    ("learn/private/alice/notes.json", None),
    ("learn/elsewhere/alice/persona.json", None),
    ("memory/alice/notes.txt", None),
    ("memory/a/b/c/d/e/short_term.json", None),
    ("memory/../short_term.json", None),
    (".ssh/authorized_keys", None),
])
def test_each_file_of_a_home_has_its_kind(relative, kind):
    assert classify(relative) is kind
    if relative.startswith(("sessions/", "state/", "learn/")):
        assert archive_kind(f"home/{relative}") is kind
    elif relative.startswith("memory/"):
        assert archive_kind(relative) is kind


def test_the_kinds_locks():
    assert {kind: layout.LOCKS.get(kind, Lock.none) for kind in Kind} == {
        Kind.session: Lock.session, Kind.database: Lock.sqlite, Kind.learn_store: Lock.learn,
        Kind.memory_file: Lock.filememory, Kind.database_sidecar: Lock.none, Kind.run_file: Lock.none,
        Kind.session_dir_file: Lock.none, Kind.spill: Lock.none, Kind.learn_archive: Lock.none,
        Kind.chroma_file: Lock.chroma}


@pytest.mark.parametrize("lock", [lock for lock in Lock if lock is not Lock.none])
def test_each_lock_is_its_owners_path_and_timeout_context_manager(lock):
    module, name = layout.LOCKERS[lock]
    locker = lock_of(lock)
    assert locker.__module__ == module and locker.__name__ == name
    assert len(inspect.signature(locker).parameters) == 2


def test_a_file_no_writer_locks_is_taken_as_it_is(tmp_path):
    with lock_of(Kind.spill)(tmp_path / "x.json", 0.1), lock_of(None)(tmp_path / "y", 0.1):
        pass


def test_layout_imports_nothing_of_praisonmem():
    tree = ast.parse((REPO / "praisonmem" / "core" / "layout.py").read_text(encoding="utf-8"))
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [name for name in imported if name.startswith("praisonmem")]


@pytest.mark.parametrize("held", ["learn", "memory"])
def test_restore_replaces_a_file_only_under_its_owners_lock(cli, tmp_path, held):
    """A learn store's lock file and a FileMemory user's flock, each held by another writer: the restore of that
    file waits, fails, and leaves it; the other store's file is replaced."""
    import fcntl
    import json
    import os

    home, memory = tmp_path / "home", tmp_path / "memory"
    store = home / "learn" / "private" / "alice" / "persona.json"
    items = memory / "alice" / "short_term.json"
    for path in (store, items):
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({} if path == store else []))
    made = cli("--home", home, "--memory-dir", memory, "backup", "create", "-o", tmp_path / "b", "--json")
    assert made.exit_code == 0, made.stderr
    for path in (store, items):
        path.write_text(json.dumps({"changed": {"id": "changed", "content": "x"}} if path == store else []) + " ")
    before = {path: path.read_bytes() for path in (store, items)}
    if held == "learn":
        (store.parent / "persona.json.lock").write_text("")  # fresh: the library's writer holds it
        fd = None
    else:
        fd = os.open(items.parent / ".praisonmem.lock", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        done = cli("--home", home, "--memory-dir", memory, "--lock-timeout", "0.2", "backup", "restore",
                   made.json()["path"], "--on-conflict", "replace", "--yes", "--json")
    finally:
        if fd is not None:
            os.close(fd)
    outcome = {c["path"]: c["action"] for c in done.json()}
    locked, other = ("home/learn/private/alice/persona.json", "memory/alice/short_term.json")[::1 if held == "learn"
                                                                                              else -1]
    assert outcome[locked] == "failed" and outcome[other] == "replaced"
    assert (store if held == "learn" else items).read_bytes() == before[store if held == "learn" else items]
