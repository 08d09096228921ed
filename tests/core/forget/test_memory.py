"""The memory-like stores' part of forget, on a tree the real libraries wrote (:mod:`tests.core.forget.machine`):
plans read only, each subject kind picks what the libraries record of it, erasing twice is erasing once, and
deleted SQLite text leaves no byte behind even where an earlier writer freed it without zeroing it."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from praisonmem.core.forget.model import Action, Subject, SubjectKind
from tests.core.forget import helpers, machine

SUBJECTS = [Subject(SubjectKind.user, "alice"), Subject(SubjectKind.session, "sess-alice"),
            Subject(SubjectKind.agent, "helper"), Subject(SubjectKind.user, "alice",
                                                          before=datetime(2026, 12, 1, tzinfo=timezone.utc))]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("forget-memory-core") / "tree"
    machine.build(root)
    return root


@pytest.fixture
def root(template, tmp_path) -> Path:
    return helpers.copy(template, tmp_path / "tree")


def keys(planned) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for store, plan in planned:
        if plan.erasures:
            found.setdefault(store.store, set()).update(e.key.split("#")[0] for e in plan.erasures)
    return found


def item_ids(root: Path, user: str, name: str, pick) -> set[str]:
    doc = json.loads((root / "project/.praisonai/memory" / user / name).read_bytes())
    items = doc if isinstance(doc, list) else doc.get("long_term_snapshot", []) + doc.get("short_term", [])
    return {i["id"] for i in items if pick(i)}


@pytest.mark.parametrize("subject", SUBJECTS, ids=["user", "session", "agent", "user-before"])
def test_planning_changes_nothing(root, monkeypatch, subject):
    where = helpers.where(root, monkeypatch)
    before = helpers.snapshot(root)
    planned = helpers.plans(where, subject)
    assert any(plan.erasures for _, plan in planned)
    assert helpers.snapshot(root) == before


def test_session_is_every_item_stamped_with_it(root, monkeypatch):
    where = helpers.where(root, monkeypatch)
    planned = helpers.plans(where, Subject(SubjectKind.session, "sess-alice"))
    found = {e.key for store, plan in planned for e in plan.erasures}
    stamped = lambda i: i["metadata"].get("session_id") == "sess-alice"  # noqa: E731
    short = item_ids(root, "alice", "short_term.json", stamped)
    turn = item_ids(root, "bob", "long_term.json", stamped)
    assert len(short) == 1 and len(turn) == 1
    assert found == {f"alice/short_term.json#{i}" for i in short} | {f"bob/long_term.json#{i}" for i in turn} | {
        f"alice/sessions/alice-chat.json#{i}" for i in short} | {f"bob/sessions/bob-chat.json#{i}" for i in turn}
    assert {e.action for _, plan in planned for e in plan.erasures} == {Action.rewrite}

    for store, plan in planned:
        if plan.erasures:
            store.erase(plan)
    alice_long = json.loads((root / "project/.praisonai/memory/alice/long_term.json").read_bytes())
    assert [i["content"] for i in alice_long] == [machine.ALICE["long"]]  # not of that session: kept
    assert not any(p.erasures for _, p in helpers.plans(where, Subject(SubjectKind.session, "sess-alice")))


def test_agent_is_its_turns_saved_sessions_and_upsonic_sessions(root, monkeypatch):
    where = helpers.where(root, monkeypatch)
    planned = helpers.plans(where, Subject(SubjectKind.agent, "helper"))
    found = {e.key for _, plan in planned for e in plan.erasures}
    by_helper = lambda i: i["metadata"].get("agent_id") == "helper"  # noqa: E731
    short = item_ids(root, "alice", "short_term.json", by_helper)
    turn = item_ids(root, "bob", "long_term.json", by_helper)
    assert found == ({f"alice/short_term.json#{i}" for i in short} | {f"bob/long_term.json#{i}" for i in turn}
                     | {"alice/sessions/alice-chat.json"} | {f"bob/sessions/bob-chat.json#{i}" for i in turn}
                     | {"session#up-alice"})


def test_before_narrows_to_what_the_stores_date_older(root, monkeypatch):
    where = helpers.where(root, monkeypatch)
    planned = helpers.plans(where, SUBJECTS[3])
    # mem0's events of alice's memory are dated 2026-11-30 and her Upsonic usage entry 2026-11-29; everything else
    # was written today
    assert keys(planned) == {"mem0-history": {"history"}, "upsonic-sqlite": {"usage"}, "upsonic-json": {"usage"}}


def test_erasing_twice_is_erasing_once(root, monkeypatch):
    where = helpers.where(root, monkeypatch)
    planned = helpers.forget(where, helpers.user("alice"))
    files = {k: v[0] for k, v in helpers.snapshot(root).items() if not k.endswith((".db", ".db-wal", ".db-shm"))
             and "chroma" not in k}
    assert [store.erase(plan) for store, plan in planned if plan.erasures] == [0] * sum(
        1 for _, plan in planned if plan.erasures)
    assert {k: v[0] for k, v in helpers.snapshot(root).items() if k in files} == files
    assert not (root / "project/.praisonai/memory/alice").exists()


def test_sqlite_text_an_earlier_writer_freed_without_zeroing_is_gone_too(root, monkeypatch):
    """Text mem0 itself deleted earlier on a build without secure_delete sits in the free space of a live page,
    which no freelist count sees: only the VACUUM after forget's delete removes it."""
    old = "Alice once confided a burglary alarm code 771903"
    db = root / "home/.mem0/history.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA secure_delete=OFF")
    conn.execute("INSERT INTO history (id, memory_id, old_memory, new_memory, event, created_at, updated_at, "
                 "is_deleted, actor_id, role) VALUES ('h-old', 'mem-alice-0', NULL, ?, 'ADD', NULL, NULL, 0, NULL, "
                 "NULL)", (old,))
    conn.commit()
    conn.execute("DELETE FROM history WHERE id = 'h-old'")
    conn.commit()
    conn.close()
    assert old.encode() in db.read_bytes()
    helpers.forget(helpers.where(root, monkeypatch), helpers.user("alice"))
    assert helpers.residue(db.parent, [old]) == {}


def test_a_store_that_does_not_parse_is_reported_and_left_alone(root, monkeypatch):
    broken = root / "project/.praisonai/memory/bob/long_term.json"
    broken.write_bytes(b'[{"id": "x", "content": ')
    before = helpers.snapshot(root)
    where = helpers.where(root, monkeypatch)
    [plan] = [p for s, p in helpers.plans(where, helpers.user("alice")) if s.store == "filememory"]
    assert plan.erasures == [] and str(broken) in plan.unreachable
    assert helpers.snapshot(root) == before


def test_before_narrows_a_users_own_directory_item_by_item(root, monkeypatch):
    where = helpers.where(root, monkeypatch)
    later = Subject(SubjectKind.user, "alice", before=datetime(2100, 1, 1, tzinfo=timezone.utc))
    planned = helpers.forget(where, later)
    found = {e.key for store, plan in planned if store.store == "filememory" for e in plan.erasures}
    assert "alice/" not in found and "alice/config.json" not in found
    assert "alice/sessions/alice-chat.json" in found
    alice = root / "project/.praisonai/memory/alice"
    for name, empty in (("short_term.json", []), ("long_term.json", []), ("entities.json", {})):
        assert json.loads((alice / name).read_bytes()) == empty, name
    assert json.loads(next((alice / "episodic").glob("*.json")).read_bytes()) == []
    assert not (alice / "sessions/alice-chat.json").exists() and (alice / "config.json").is_file()
    assert helpers.residue(alice, helpers.alice_texts()) == {}


def test_a_user_locked_by_another_writer_is_waited_for_then_left_as_it_was(root, monkeypatch):
    from praisonmem.core.errors import LockTimeout
    from praisonmem.core.forget.memory import FileMemoryForget
    from praisonmem.core.memory import user_lock

    base = root / "project/.praisonai/memory"
    store = FileMemoryForget(base, timeout=0.3)
    plan = store.plan(helpers.user("alice"))
    before = helpers.snapshot(base / "alice")
    with user_lock(base / "alice"), pytest.raises(LockTimeout):
        store.erase(plan)
    after = helpers.snapshot(base / "alice")
    assert {k: v for k, v in after.items() if k != ".praisonmem.lock"} == before
    assert store.erase(plan) == 6 and not (base / "alice").exists()
