"""The server stores' shared rules, without a server: which stores a URL (or a located server) becomes, the
needles a plan hands the proof, ``--before``, and the state store's choice of keys."""

from __future__ import annotations

from datetime import datetime, timezone

from praisonmem.core.forget.model import Subject, SubjectKind, Where
from praisonmem.core.forget.match import distinctive, epoch_of, older, variants
from praisonmem.core.forget.servers import StateRedis, forget_stores
from praisonmem.core.locate.model import Server, Store


def kinds(where: Where) -> list[tuple[str, str]]:
    return [(s.store, s.location) for s in forget_stores(where)]


def test_each_url_becomes_the_stores_it_can_hold_once_with_its_password_masked():
    where = Where(paths=None, urls=("postgresql://u:s3cret-pw@db:5432/app", "mysql://u:s3cret-pw@db/app",
                                    "redis://:s3cret-pw@cache:6379/0", "postgresql://u:s3cret-pw@db:5432/app"))
    assert kinds(where) == [
        ("conversation-postgresql", "postgresql://u:***@db:5432/app"),
        ("upsonic-postgresql", "postgresql://u:***@db:5432/app"),
        ("conversation-mysql", "mysql://u:***@db/app"),
        ("upsonic-redis", "redis://:***@cache:6379/0"),
        ("learn-redis", "redis://:***@cache:6379/0"),
        ("state-redis", "redis://:***@cache:6379/0")]


def test_the_session_key_goes_to_the_conversation_stores():
    stores = forget_stores(Where(paths=None, urls=("postgresql://u@db/app", "mysql://u@db/app"), key=b"the-key"))
    assert [(s.store, getattr(s, "key", "-")) for s in stores] == [
        ("conversation-postgresql", b"the-key"), ("upsonic-postgresql", "-"), ("conversation-mysql", b"the-key")]


def test_a_located_server_becomes_the_store_of_its_role_only_and_a_located_chroma_dir_its_collection(tmp_path):
    located = (Server("postgresql://u:***@db/app", "upsonic-postgresql", "upsonic", "config upsonic.db",
                      _url="postgresql://u:pw-one@db/app"),
               Server("redis://:***@cache/0", "state-redis", "praisonai", "env PRAISONAI_STATE_URL",
                      _url="redis://:pw-two@cache/0"),
               Store(str(tmp_path / "chroma_db_alice"), "chroma-memory", "praisonaiagents",
                     holds={"collection": "memory_store_alice", "items": 2}),
               Store(str(tmp_path / "sessions"), "session-dir", "praisonaiagents"))
    assert kinds(Where(paths=None, located=located)) == [
        ("upsonic-postgresql", "postgresql://u:***@db/app"),
        ("learn-redis", "redis://:***@cache/0"), ("state-redis", "redis://:***@cache/0"),
        ("chroma-memory", f"{tmp_path / 'chroma_db_alice'} (memory_store_alice)")]


def test_needles_are_long_distinct_and_nobody_elses():
    assert distinctive(["ok", "Alice lives in Lisbon", "Alice lives in Lisbon", None, 42, "a shared greeting!"],
                       kept=["bob said: a shared greeting! too"]) == ("Alice lives in Lisbon",)
    assert distinctive(["x" * 11, "y" * 12]) == ("y" * 12,)


def test_variants_are_the_needle_and_its_json_string_forms():
    assert variants(['say "café"\n']) == ['say "café"\n', 'say \\"caf\\u00e9\\"\\n', 'say \\"café\\"\\n']
    assert variants(["plain text here"]) == ["plain text here"]


def test_before_takes_older_records_and_leaves_undated_ones():
    cut = datetime(2026, 1, 1, tzinfo=timezone.utc)
    subject = Subject(SubjectKind.user, "alice", before=cut)
    assert older(subject, cut.timestamp() - 1) is True
    assert older(subject, cut.timestamp()) is False
    assert older(subject, None) is None
    assert older(Subject(SubjectKind.user, "alice"), None) is True
    assert epoch_of("2025-12-31T23:59:59") == cut.timestamp() - 1
    assert epoch_of(True) is None


def test_before_reads_a_time_as_every_store_keeps_it():
    from decimal import Decimal

    cut = datetime(2026, 3, 1, tzinfo=timezone.utc)
    subject = Subject(SubjectKind.user, "alice", before=cut)
    assert older(subject, "2026-02-28T23:59:59") is True  # FileMemory's naive ISO text: UTC, as the library writes it
    assert older(subject, "2026-03-01T00:00:00+00:00") is False
    assert older(subject, "2026-03-01T01:00:00+02:00") is True
    assert older(subject, Decimal(str(cut.timestamp() - 0.5))) is True  # a MySQL DECIMAL column
    assert older(subject, Decimal(str(cut.timestamp()))) is False
    for undated in ("", "not a time", True, [], {}):
        assert older(subject, undated) is None


def values(**keys: dict) -> dict:
    return {name.replace("__", ":"): (None, value) for name, value in keys.items()}


def test_state_keys_of_a_user_are_her_traces_their_spans_and_her_sessions_runs():
    found = values(
        trace__t1={"trace_id": "t1", "session_id": "s1", "user_id": "alice", "agent_name": "helper"},
        trace__t2={"trace_id": "t2", "session_id": "s2", "user_id": "bob", "agent_name": "helper"},
        trace__t3={"trace_id": "t3", "session_id": "shared", "user_id": "alice"},
        trace__t4={"trace_id": "t4", "session_id": "shared", "user_id": "bob"},
        span__p1={"span_id": "p1", "trace_id": "t1"}, span__p2={"span_id": "p2", "trace_id": "t2"},
        run__s1__r1={"session_id": "s1"}, run__s2__r1={"session_id": "s2"}, run__shared__r1={"session_id": "shared"},
        agent__s1={"agent_name": "helper"}, agent__s2={"agent_name": "other"},
        note={"metadata": {"user_id": "alice"}}, other={"x": 1})
    assert StateRedis.matching(found, Subject(SubjectKind.user, "alice")) == {
        "trace:t1", "trace:t3", "span:p1", "run:s1:r1", "agent:s1", "note"}  # the shared session stays
    assert StateRedis.matching(found, Subject(SubjectKind.session, "s2")) == {"trace:t2", "span:p2", "run:s2:r1",
                                                                               "agent:s2"}
    assert StateRedis.matching(found, Subject(SubjectKind.agent, "other")) == {"agent:s2", "run:s2:r1"}
