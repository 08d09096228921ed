"""forget's session stores: plan finds exactly the subject's sessions, erase removes them with their spill
files and index rows through the session delete, a second plan finds nothing, the others stay byte-identical."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from praisonmem.core.forget import sessions as forget_sessions
from praisonmem.core.forget.model import Subject, SubjectKind, Where
from praisonmem.core.paths import resolve

ALICE = ["alice's passport number is X1234567", "alice lives at 17 Crooked Lane, Sheffield"]
BOB = ["bob prefers window seats on trains", "bob's cat is called Marmalade"]


def write_sessions(sessions_dir: Path) -> None:
    """Sessions written by praisonaiagents' own DefaultSessionStore, as an Agent writes them."""
    from praisonaiagents.session.store import DefaultSessionStore

    store = DefaultSessionStore(session_dir=str(sessions_dir))
    for sid, user, agent, texts in (("s-alice-1", "alice", "Helper", ALICE), ("s-bob-1", "bob", "Helper", BOB),
                                    ("s-alice-2", "alice", "Planner", ALICE[:1])):
        store.set_agent_info(sid, agent_name=agent, user_id=user)
        for text in texts:
            store.add_user_message(sid, text)
            store.add_assistant_message(sid, "noted: " + text)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    write_sessions(root / "sessions")
    return root


def stores(home: Path):
    paths = resolve(home, home / "memory", env={})
    return forget_sessions.forget_stores(Where(paths))


def json_store(home: Path):
    (store,) = [s for s in stores(home) if s.store == "session-dir"]
    return store


def snapshot(files) -> dict[str, bytes]:
    return {str(f): f.read_bytes() for f in files}


def test_plan_finds_exactly_the_users_sessions_with_their_texts(home: Path) -> None:
    plan = json_store(home).plan(Subject(SubjectKind.user, "alice"))
    assert [e.key for e in plan.erasures] == ["s-alice-1", "s-alice-2"]
    assert set(plan.erasures[0].texts) >= set(ALICE) | {"noted: " + t for t in ALICE}
    assert not any(t in e.texts for e in plan.erasures for t in BOB)
    assert plan.location == str(home / "sessions")
    assert home / "sessions" / "s-bob-1.json" in plan.files


def test_erase_removes_them_and_a_second_plan_finds_nothing_bob_byte_identical(home: Path) -> None:
    bob = home / "sessions" / "s-bob-1.json"
    before = bob.read_bytes(), bob.stat().st_mtime_ns
    store = json_store(home)
    subject = Subject(SubjectKind.user, "alice")
    assert store.erase(store.plan(subject)) == 2
    assert store.plan(subject).erasures == []
    assert (bob.read_bytes(), bob.stat().st_mtime_ns) == before
    assert sorted(p.name for p in (home / "sessions").glob("*.json")) == ["s-bob-1.json"]
    for path in (home / "sessions").iterdir():
        if path.is_file():
            assert b"Crooked Lane" not in path.read_bytes(), path


def test_erase_is_idempotent_a_rerun_counts_gone_as_done(home: Path) -> None:
    store = json_store(home)
    plan = store.plan(Subject(SubjectKind.user, "alice"))
    assert store.erase(plan) == 2
    assert json_store(home).erase(plan) == 2


def test_session_and_agent_subjects(home: Path) -> None:
    store = json_store(home)
    assert [e.key for e in store.plan(Subject(SubjectKind.session, "s-bob-1")).erasures] == ["s-bob-1"]
    assert [e.key for e in store.plan(Subject(SubjectKind.agent, "Planner")).erasures] == ["s-alice-2"]
    assert store.plan(Subject(SubjectKind.user, "carol")).erasures == []


def test_before_narrows_by_updated_at_and_keeps_undated_with_a_note(home: Path) -> None:
    path = home / "sessions" / "s-alice-2.json"
    doc = json.loads(path.read_text())
    doc.pop("updated_at"), doc.pop("created_at")
    path.write_text(json.dumps(doc))
    store = json_store(home)
    future = Subject(SubjectKind.user, "alice", datetime(2999, 1, 1, tzinfo=timezone.utc))
    plan = store.plan(future)
    assert [e.key for e in plan.erasures] == ["s-alice-1"]
    assert plan.notes == ["kept session s-alice-2: it has no updated_at or created_at to compare with --before"]
    past = Subject(SubjectKind.user, "alice", datetime(2000, 1, 1, tzinfo=timezone.utc))
    assert store.plan(past).erasures == []


def test_a_text_another_users_session_holds_too_is_not_a_needle(home: Path) -> None:
    from praisonaiagents.session.store import DefaultSessionStore

    shared = "You are a helpful assistant for the travel desk"
    store = DefaultSessionStore(session_dir=str(home / "sessions"))
    store.add_message("s-alice-1", "system", shared)
    store.add_message("s-bob-1", "system", shared)
    plan = json_store(home).plan(Subject(SubjectKind.user, "alice"))
    assert shared not in plan.erasures[0].texts
    assert ALICE[0] in plan.erasures[0].texts


def forget_everywhere(paths, subject: Subject, *, key: bytes | None = None) -> list:
    plans = []
    for store in forget_sessions.forget_stores(Where(paths, key=key)):
        plan = store.plan(subject)
        if plan.erasures:
            store.erase(plan)
            assert store.plan(subject).erasures == [], store.store
            plans.append(plan)
    return plans


@pytest.mark.parametrize("session, tokens", [
    ("bot_telegram_42", ["PLANTED-TOKEN-TELEGRAM", "PLANTED-TOKEN-JSONONLY"]),  # JSON, sessions.db, index
    ("gw-legacy", ["PLANTED-TOKEN-STALE"]),  # a diverged pair: JSON file and db row
    ("tui0001a", ["PLANTED-TOKEN-UNIFIED"]),  # the unified file, its db row, the index
    ("proj-sess-1", ["PLANTED-TOKEN-PROJECT"]),  # the project store and its own index
    ("gw-1", ["PLANTED-TOKEN-DBONLY"]),  # inside a gateway snapshot
])
def test_a_session_goes_from_every_store_of_a_real_home_with_its_index_text(gateway_home, session, tokens) -> None:
    from tests.indexstate import holding, terms

    paths = resolve(gateway_home.home, gateway_home.root / "memory", env={})
    others = {p: p.read_bytes() for p in (gateway_home.home / "sessions").glob("*.json")
              if not p.name.startswith((session + ".", "db5b5fab"))}  # the fork names its parent
    plans = forget_everywhere(paths, Subject(SubjectKind.session, session))
    assert plans, session
    for token in tokens:
        assert holding(gateway_home.home, token.encode()) == []
    for index in gateway_home.home.rglob("sessions_index.db"):
        assert not {t for t in terms(index) if t.startswith("planted")} & {t.lower() for t in tokens}
    for path, raw in others.items():
        assert path.read_bytes() == raw, path


def test_every_store_is_one_forget_store_of_the_home(gateway_home) -> None:
    paths = resolve(gateway_home.home, gateway_home.root / "memory", env={})
    kinds = sorted(s.store for s in forget_sessions.forget_stores(Where(paths)))
    assert kinds == ["gateway-transcripts", "legacy-run", "project-sessions", "session-dir", "unified-sessions"]


def test_an_encrypted_session_is_matched_by_its_clear_fields_and_unverifiable_without_the_key(gateway_home) -> None:
    paths = resolve(gateway_home.home, gateway_home.root / "memory", env={})
    subject = Subject(SubjectKind.session, "enc-1")
    (store,) = [s for s in forget_sessions.forget_stores(Where(paths)) if s.store == "session-dir"]
    plan = store.plan(subject)
    assert [e.key for e in plan.erasures] == ["enc-1"]
    assert plan.unverifiable == ("1 encrypted session: their text cannot be checked without the key "
                                 "(PRAISONAI_SESSION_KEY or --key-file)")
    assert not any("PLANTED-TOKEN-ENC" in t for t in plan.erasures[0].texts)
    (keyed,) = [s for s in forget_sessions.forget_stores(Where(paths, key=gateway_home.key.encode()))
                if s.store == "session-dir"]
    plan = keyed.plan(subject)
    assert plan.unverifiable is None
    assert any("PLANTED-TOKEN-ENC" in t for t in plan.erasures[0].texts)


def test_praisonais_sqlite_conversation_store_is_found_by_locate_and_erased_with_its_messages(conversations_db) -> None:
    from praisonmem.core.locate.model import Store

    paths = resolve(conversations_db.parent / "nohome", conversations_db.parent / "memory", env={})
    found = Store(str(conversations_db), "conversation-sqlite", "praisonai")
    (store,) = [s for s in forget_sessions.forget_stores(Where(paths, (found,))) if s.store == "conversation-sqlite"]
    assert store.location == str(conversations_db)
    subject = Subject(SubjectKind.user, "alice")
    plan = store.plan(subject)
    assert [e.key for e in plan.erasures] == ["2026113010-c3fa00-d1ba5c0f"]
    assert "Echo: Hello café ✓ 日本" in plan.erasures[0].texts
    assert store.erase(plan) == 1 and store.plan(subject).erasures == []
    conn = sqlite3.connect(conversations_db)
    assert [r[0] for r in conn.execute("SELECT session_id FROM praison_sessions ORDER BY session_id")] == [
        "agent-tools", "bare-1", "direct-1", "empty-1"]
    assert conn.execute("SELECT count(*) FROM praison_messages WHERE session_id LIKE '2026113010%'").fetchone() == (0,)
    conn.close()
    for path in conversations_db.parent.iterdir():  # the database, its -wal and journal
        assert "Hello café".encode() not in path.read_bytes(), path


def test_each_store_names_its_own_files_for_the_proof(gateway_home) -> None:
    paths = resolve(gateway_home.home, gateway_home.root / "memory", env={})
    sessions = gateway_home.home / "sessions"
    plans = {s.store: s.plan(Subject(SubjectKind.user, "nobody")) for s in forget_sessions.forget_stores(Where(paths))}
    names = {k: sorted(str(f.relative_to(sessions)) for f in p.files) for k, p in plans.items()}
    assert names["gateway-transcripts"] == ["sessions.db"]
    assert "sessions.db" not in names["session-dir"]
    assert {"bot_slack_7.json", "bot_slack_7.json.lock", "sessions_index.db", "enc-1.json"} <= set(names["session-dir"])
    assert names["unified-sessions"] == ["db5b5fab.json", "db5b5fab.json.lock", "sessions_index.db", "tui0001a.json",
                                         "tui0001a.json.lock", "tui0002b.json", "tui0002b.json.lock"]
    assert names["legacy-run"] == ["run_20261128_110000_ec9910/events.jsonl", "run_20261128_110000_ec9910/metadata.json"]
    assert names["project-sessions"][0].startswith("projects/8ccfb8a2/")


def test_a_sessions_index_rows_left_without_its_file_go_with_a_session_forget(gateway_home) -> None:
    from tests.indexstate import holding, matching, rows

    sessions = gateway_home.home / "sessions"
    assert matching(sessions / "sessions_index.db", '"PLANTED-TOKEN-SLACK"') == ["bot_slack_7"]
    (sessions / "bot_slack_7.json").unlink()  # a delete that left the index rows behind
    assert "bot_slack_7" in {r[0] for r in rows(sessions / "sessions_index.db")["meta"]}
    paths = resolve(gateway_home.home, gateway_home.root / "memory", env={})
    subject = Subject(SubjectKind.session, "bot_slack_7")
    (store,) = [s for s in forget_sessions.forget_stores(Where(paths)) if s.store == "session-dir"]
    plan = store.plan(subject)
    assert [(e.key, e.what) for e in plan.erasures] == [
        ("index:bot_slack_7", "rows of session bot_slack_7 in sessions_index.db (no file of it is left)")]
    assert any("PLANTED-TOKEN-SLACK" in t for t in plan.erasures[0].texts)
    assert store.erase(plan) == 1
    assert store.plan(subject).erasures == []
    index = rows(sessions / "sessions_index.db")
    assert "bot_slack_7" not in {r[0] for r in index["meta"]} | {r[0] for r in index["fts"]}
    assert holding(gateway_home.home, b"PLANTED-TOKEN-SLACK") == []
    assert matching(sessions / "sessions_index.db", '"PLANTED-TOKEN-SLACK"') == []
