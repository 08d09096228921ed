"""rename / retitle / adopt / delete / prune in the core, against copies of real fixtures."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path

import pytest

from praisonmem.core import sessions
from praisonmem.core.errors import CorruptFile, NotFound, Refused, TargetExists, UsageError
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import ops as session_ops


@pytest.fixture
def paths(fixture_home):
    return resolve(fixture_home, env={})


def sessions_dir(paths) -> Path:
    return paths.sessions_dir


def test_rename_moves_and_changes_only_the_session_id(paths):
    src = sessions_dir(paths) / "history_8fe938c0.json"
    before = src.read_bytes()
    [change] = sessions.rename(paths, "history_8fe938c0", "legacy/archive #1").changes
    dst = sessions_dir(paths) / "legacy_archive__1.json"
    assert not src.exists() and dst.exists()
    assert dst.read_bytes() == before.replace(b'"session_id": "history_8fe938c0"',
                                              b'"session_id": "legacy/archive #1"')
    assert (sessions_dir(paths) / "history_8fe938c0.json.lock").exists()
    assert (sessions_dir(paths) / "legacy_archive__1.json.lock").exists()
    assert change.to_json() == {"action": "renamed", "session_id": "history_8fe938c0", "file": str(src),
                                "new_session_id": "legacy/archive #1", "target": str(dst), "dry_run": False,
                                "detail": None}


def test_rename_keeps_compact_hierarchical_files_compact(paths):
    sessions.rename(paths, "531bcd72-9714-4bca-8431-340003ceed28", "parent")
    raw = (sessions_dir(paths) / "parent.json").read_bytes()
    assert raw.startswith(b'{"session_id":"parent","messages":[') and b"\n" not in raw


def test_rename_refuses_an_existing_target(paths):
    before = {p.name: p.read_bytes() for p in sessions_dir(paths).iterdir()}
    with pytest.raises(TargetExists, match="my_chat.json already exists"):
        sessions.rename(paths, "history_8fe938c0", "my_chat")
    assert {p.name: p.read_bytes() for p in sessions_dir(paths).iterdir()} == before


def test_rename_onto_its_own_file_rewrites_the_id_in_place(paths):
    sessions.rename(paths, "my_chat", "my chat")  # sanitises to the same file
    assert json.loads((sessions_dir(paths) / "my_chat.json").read_text())["session_id"] == "my chat"


def test_rename_of_a_recently_written_session_needs_force(paths):
    target = sessions_dir(paths) / "my_chat.json"
    doc = json.loads(target.read_text())
    doc["updated_at"] = jsonfile_now()
    target.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(Refused, match="was updated 0 s ago: an agent may still be writing it"):
        sessions.rename(paths, "my_chat", "other")
    sessions.rename(paths, "my_chat", "other", force=True)
    assert (sessions_dir(paths) / "other.json").exists()


def jsonfile_now() -> str:
    from praisonmem.core.io.timeutil import now_iso

    return now_iso()


def test_rename_dry_run_changes_nothing(paths):
    before = {p.name: p.read_bytes() for p in sessions_dir(paths).iterdir()}
    [change] = sessions.rename(paths, "history_8fe938c0", "x", dry_run=True).changes
    assert change.dry_run and change.fields["target"].endswith("x.json")
    assert {p.name: p.read_bytes() for p in sessions_dir(paths).iterdir()} == before


def test_rename_carries_spilled_turns_to_the_new_id(paths):
    sdir = sessions_dir(paths)
    (sdir / "spilled-session.json").write_text(json.dumps({"session_id": "spilled-session", "messages": [],
                                                          "updated_at": "2026-01-01T00:00:00+00:00"}))
    spilled = next(paths.spill_dir.glob("spilled-session.*.json"))
    record = json.loads(spilled.read_text())
    [dry] = sessions.rename(paths, "spilled-session", "kept", dry_run=True).changes
    assert dry.detail == "1 spilled turn in 1 spill file move with it" and spilled.exists()
    sessions.rename(paths, "spilled-session", "kept")
    moved = paths.spill_dir / ("kept" + spilled.name[len("spilled-session"):])
    assert not spilled.exists()
    assert moved.read_text() == json.dumps({**record, "session_id": "kept"}, ensure_ascii=False)


def test_rename_onto_the_same_file_rewrites_the_spill_records_id(paths):
    spilled = paths.spill_dir / "my_chat.1796050189520.1.00000000.json"
    spilled.write_text(json.dumps({"session_id": "my_chat", "spilled_at": "x", "messages": []}))
    sessions.rename(paths, "my_chat", "my chat", force=True)  # the same file, another raw id
    assert json.loads(spilled.read_text()) == {"session_id": "my chat", "spilled_at": "x", "messages": []}


def test_rename_refuses_to_overwrite_a_different_spill_file_and_changes_nothing(paths):
    spilled = next(paths.spill_dir.glob("spilled-session.*.json"))
    clash = spilled.with_name("other" + spilled.name[len("spilled-session"):])
    clash.write_text('{"session_id": "other", "spilled_at": "x", "messages": []}')
    sdir = sessions_dir(paths)
    (sdir / "spilled-session.json").write_text(json.dumps({"session_id": "spilled-session", "messages": [],
                                                          "updated_at": "2026-01-01T00:00:00+00:00"}))
    before = {p.name: p.read_bytes() for d in (sdir, paths.spill_dir) for p in d.iterdir()}
    with pytest.raises(Refused, match="another spill file already has this name"):
        sessions.rename(paths, "spilled-session", "other")
    assert {p.name: p.read_bytes() for d in (sdir, paths.spill_dir) for p in d.iterdir()} == before


def test_rename_never_rewrites_a_file_that_does_not_parse(paths):
    bad = sessions_dir(paths) / "bad.json"
    bad.write_bytes(b'{"session_id": "bad", ')
    with pytest.raises(CorruptFile):
        sessions.rename(paths, "bad", "good")
    with pytest.raises(CorruptFile):
        sessions.retitle(paths, "bad", "x")
    assert bad.read_bytes() == b'{"session_id": "bad", ' and not (sessions_dir(paths) / "good.json").exists()


def test_retitle_sets_and_clears_metadata_title_and_keeps_unknown_keys(paths):
    target = sessions_dir(paths) / "7ca18a8d-7365-46f5-9df9-26d536f25633.json"
    sessions.retitle(paths, "7ca18a8d-7365-46f5-9df9-26d536f25633", "  Fork title  ")
    doc = json.loads(target.read_text())
    assert doc["metadata"]["title"] == "Fork title"
    assert doc["title"] == "Fork of Main conversation" and doc["children_ids"] == []  # unknown keys kept
    assert list(doc)[:3] == ["session_id", "messages", "created_at"]
    assert doc["updated_at"] != "2026-11-30T14:49:49.518741+00:00"
    sessions.retitle(paths, "7ca18a8d-7365-46f5-9df9-26d536f25633", "")
    assert "title" not in json.loads(target.read_text())["metadata"]


# ---------------------------------------------------------------- delete / prune


def test_delete_removes_under_lock_and_keeps_the_lock_file(paths):
    plan = sessions.plan_delete(paths, ["my_chat", "support/ticket #1234", "my_chat"])
    assert plan.question == "Delete 2 session files (my_chat.json, support_ticket__1234.json)?"
    changes = plan.run().changes
    assert [(c.action, c.fields["session_id"], Path(c.fields["file"]).name) for c in changes] == [
        ("deleted", "my_chat", "my_chat.json"), ("deleted", "support/ticket #1234", "support_ticket__1234.json")]
    assert not (sessions_dir(paths) / "my_chat.json").exists()
    assert (sessions_dir(paths) / "my_chat.json.lock").exists()


def test_delete_resolves_every_name_before_deleting(paths):
    with pytest.raises(NotFound):
        sessions.plan_delete(paths, ["my_chat", "no-such"])
    assert (sessions_dir(paths) / "my_chat.json").exists()


def test_delete_of_a_vanished_file_is_a_failure_record(paths):
    target = sessions_dir(paths) / "my_chat.json"
    plan = sessions.plan_delete(paths, ["my_chat"])
    target.unlink()
    outcome = plan.run()
    [change] = outcome.changes
    assert change.action == "failed" and "disappeared" in change.detail and outcome.exit_code == 3


def test_prune_plan_by_updated_at_with_keep(paths):
    now = time.time()
    sdir = sessions_dir(paths)
    for i, age_days in enumerate([1, 10, 40, 50, 60]):
        stamp = jsonfile_iso(now - age_days * 86400)
        (sdir / f"p{i}.json").write_text(json.dumps({"session_id": f"p{i}", "messages": [], "updated_at": stamp,
                                                    "agent_name": "Pruner"}))
    (sdir / "undated.json").write_text(json.dumps({"session_id": "undated", "messages": [], "agent_name": "Pruner"}))
    plan = sessions.plan_prune(paths, timedelta(days=30), agent="Pruner", now=now)
    assert plan.notes == ["kept undated: no parseable updated_at"]
    assert plan.question == "Delete 3 sessions not updated in 30 days, 0:00:00?"
    assert [c.fields["session_id"] for c in plan.run(dry_run=True).changes] == ["p2", "p3", "p4"]
    plan = sessions.plan_prune(paths, "30d", keep=3, agent="Pruner", now=now)
    assert [c.fields["session_id"] for c in plan.run(dry_run=True).changes] == ["p3", "p4"]
    assert plan.question == "Delete 2 sessions not updated in 30d?"
    assert sorted(p.name for p in sdir.glob("p*.json")) == [f"p{i}.json" for i in range(5)]


def jsonfile_iso(epoch: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(epoch, timezone.utc).isoformat()


def test_parse_duration_forms_and_errors():
    from praisonmem.core.io.timeutil import parse_duration

    assert parse_duration("30d") == timedelta(days=30)
    assert parse_duration("1d12h") == timedelta(hours=36)
    assert parse_duration("2W") == timedelta(weeks=2)
    for bad in ("", "30", "d30", "3 days", "1.5d", "-1d"):
        with pytest.raises(UsageError, match="--older-than must be a duration such as 30d"):
            parse_duration(bad)


def test_prune_rechecks_under_the_lock_and_keeps_a_session_written_meanwhile(paths):
    now = time.time()
    target = sessions_dir(paths) / "old.json"
    target.write_text(json.dumps({"session_id": "old", "messages": [], "updated_at": jsonfile_iso(now - 90 * 86400)}))
    plan = sessions.plan_prune(paths, "30d", now=now)
    assert "old" in [c.fields["session_id"] for c in plan.run(dry_run=True).changes]
    doc = json.loads(target.read_text())
    doc["updated_at"] = jsonfile_now()  # an agent writes while the user reads the prompt
    target.write_text(json.dumps(doc))
    changes = {c.fields["session_id"]: c for c in plan.run().changes}
    assert (changes["old"].action, target.exists()) == ("skipped", True)
    assert changes["old"].detail == "updated after it was chosen for pruning; kept"


def test_delete_rechecks_liveness_under_the_lock(paths):
    target = sessions_dir(paths) / "my_chat.json"
    doc = json.loads(target.read_text())
    doc["updated_at"] = jsonfile_now()
    target.write_text(json.dumps(doc))
    store = sessions.open_store(paths)
    ref = store.find("my_chat")
    [change] = session_ops.delete(store, [ref], recheck=session_ops.not_live).changes
    assert change.action == "skipped" and target.exists()
    assert change.detail.startswith("written 0 s ago, after it was chosen; kept")
    [change] = session_ops.delete(store, [ref]).changes
    assert change.action == "deleted" and not target.exists()
