"""rename / retitle / adopt / delete / prune in the core, against copies of real fixtures."""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta
from pathlib import Path

import pytest

from praisonmem.core.io import jsonfile
from praisonmem.core.sessions import ops as session_ops
from praisonmem.core.errors import CorruptFile, NotFound, Refused, TargetExists, UsageError
from praisonmem.core.paths import resolve


@pytest.fixture
def paths(fixture_home):
    return resolve(fixture_home, env={})


def sessions_dir(paths) -> Path:
    return paths.sessions_dir


def test_rename_moves_and_changes_only_the_session_id(paths):
    src = sessions_dir(paths) / "history_8fe938c0.json"
    before = src.read_bytes()
    change = session_ops.rename(paths, "history_8fe938c0", "legacy/archive #1")
    dst = sessions_dir(paths) / "legacy_archive__1.json"
    assert not src.exists() and dst.exists()
    assert dst.read_bytes() == before.replace(b'"session_id": "history_8fe938c0"',
                                              b'"session_id": "legacy/archive #1"')
    assert (sessions_dir(paths) / "history_8fe938c0.json.lock").exists()
    assert (sessions_dir(paths) / "legacy_archive__1.json.lock").exists()
    assert (change.action, change.session_id, change.new_session_id) == ("renamed", "history_8fe938c0",
                                                                         "legacy/archive #1")


def test_rename_keeps_compact_hierarchical_files_compact(paths):
    session_ops.rename(paths, "531bcd72-9714-4bca-8431-340003ceed28", "parent")
    raw = (sessions_dir(paths) / "parent.json").read_bytes()
    assert raw.startswith(b'{"session_id":"parent","messages":[') and b"\n" not in raw


def test_rename_refuses_an_existing_target(paths):
    before = {p.name: p.read_bytes() for p in sessions_dir(paths).iterdir()}
    with pytest.raises(TargetExists, match="my_chat.json already exists"):
        session_ops.rename(paths, "history_8fe938c0", "my_chat")
    assert {p.name: p.read_bytes() for p in sessions_dir(paths).iterdir()} == before


def test_rename_onto_its_own_file_rewrites_the_id_in_place(paths):
    session_ops.rename(paths, "my_chat", "my chat")  # sanitises to the same file
    assert json.loads((sessions_dir(paths) / "my_chat.json").read_text())["session_id"] == "my chat"


def test_rename_of_a_recently_written_session_needs_force(paths):
    target = sessions_dir(paths) / "my_chat.json"
    doc = json.loads(target.read_text())
    doc["updated_at"] = jsonfile_now()
    target.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(Refused, match="was updated 0 s ago: an agent may still be writing it"):
        session_ops.rename(paths, "my_chat", "other")
    session_ops.rename(paths, "my_chat", "other", force=True)
    assert (sessions_dir(paths) / "other.json").exists()


def jsonfile_now() -> str:
    from praisonmem.core.io.timeutil import now_iso

    return now_iso()


def test_rename_dry_run_changes_nothing(paths):
    before = {p.name: p.read_bytes() for p in sessions_dir(paths).iterdir()}
    change = session_ops.rename(paths, "history_8fe938c0", "x", dry_run=True)
    assert change.dry_run and change.target.endswith("x.json")
    assert {p.name: p.read_bytes() for p in sessions_dir(paths).iterdir()} == before


def test_rename_carries_spilled_turns_to_the_new_id(paths):
    sdir = sessions_dir(paths)
    (sdir / "spilled-session.json").write_text(json.dumps({"session_id": "spilled-session", "messages": [],
                                                          "updated_at": "2026-01-01T00:00:00+00:00"}))
    spilled = next(paths.spill_dir.glob("spilled-session.*.json"))
    record = json.loads(spilled.read_text())
    dry = session_ops.rename(paths, "spilled-session", "kept", dry_run=True)
    assert dry.detail == "1 spilled turn(s) in 1 spill file(s) move with it" and spilled.exists()
    session_ops.rename(paths, "spilled-session", "kept")
    moved = paths.spill_dir / ("kept" + spilled.name[len("spilled-session"):])
    assert not spilled.exists()
    assert moved.read_text() == json.dumps({**record, "session_id": "kept"}, ensure_ascii=False)


def test_rename_onto_the_same_file_rewrites_the_spill_records_id(paths):
    spilled = paths.spill_dir / "my_chat.1796050189520.1.00000000.json"
    spilled.write_text(json.dumps({"session_id": "my_chat", "spilled_at": "x", "messages": []}))
    session_ops.rename(paths, "my_chat", "my chat", force=True)  # the same file, another raw id
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
        session_ops.rename(paths, "spilled-session", "other")
    assert {p.name: p.read_bytes() for d in (sdir, paths.spill_dir) for p in d.iterdir()} == before


def test_rename_never_rewrites_a_file_that_does_not_parse(paths):
    bad = sessions_dir(paths) / "bad.json"
    bad.write_bytes(b'{"session_id": "bad", ')
    with pytest.raises(CorruptFile):
        session_ops.rename(paths, "bad", "good")
    with pytest.raises(CorruptFile):
        session_ops.retitle(paths, "bad", "x")
    assert bad.read_bytes() == b'{"session_id": "bad", ' and not (sessions_dir(paths) / "good.json").exists()


def test_retitle_sets_and_clears_metadata_title_and_keeps_unknown_keys(paths):
    target = sessions_dir(paths) / "7ca18a8d-7365-46f5-9df9-26d536f25633.json"
    session_ops.retitle(paths, "7ca18a8d-7365-46f5-9df9-26d536f25633", "  Fork title  ")
    doc = json.loads(target.read_text())
    assert doc["metadata"]["title"] == "Fork title"
    assert doc["title"] == "Fork of Main conversation" and doc["children_ids"] == []  # unknown keys kept
    assert list(doc)[:3] == ["session_id", "messages", "created_at"]
    assert doc["updated_at"] != "2026-11-30T14:49:49.518741+00:00"
    session_ops.retitle(paths, "7ca18a8d-7365-46f5-9df9-26d536f25633", "")
    assert "title" not in json.loads(target.read_text())["metadata"]


# ---------------------------------------------------------------- delete / prune


def test_delete_removes_under_lock_and_keeps_the_lock_file(paths):
    targets = session_ops.resolve_all(paths, ["my_chat", "support/ticket #1234", "my_chat"])
    assert [p.name for p in targets] == ["my_chat.json", "support_ticket__1234.json"]
    changes = session_ops.delete(targets)
    assert [c.action for c in changes] == ["deleted", "deleted"]
    assert [c.session_id for c in changes] == ["my_chat", "support/ticket #1234"]
    assert not (sessions_dir(paths) / "my_chat.json").exists()
    assert (sessions_dir(paths) / "my_chat.json.lock").exists()


def test_delete_resolves_every_name_before_deleting(paths):
    with pytest.raises(NotFound):
        session_ops.resolve_all(paths, ["my_chat", "no-such"])
    assert (sessions_dir(paths) / "my_chat.json").exists()


def test_delete_of_a_vanished_file_is_a_failure_record(paths):
    target = sessions_dir(paths) / "my_chat.json"
    target.unlink()
    [change] = session_ops.delete([target])
    assert change.action == "failed" and "disappeared" in change.detail


def test_prune_plan_by_updated_at_with_keep(paths):
    now = time.time()
    sdir = sessions_dir(paths)
    for i, age_days in enumerate([1, 10, 40, 50, 60]):
        stamp = jsonfile_iso(now - age_days * 86400)
        (sdir / f"p{i}.json").write_text(json.dumps({"session_id": f"p{i}", "messages": [], "updated_at": stamp,
                                                    "agent_name": "Pruner"}))
    (sdir / "undated.json").write_text(json.dumps({"session_id": "undated", "messages": [], "agent_name": "Pruner"}))
    plan = session_ops.plan_prune(paths, timedelta(days=30), agent="Pruner", now=now)
    assert [r["session_id"] for r in plan.delete] == ["p2", "p3", "p4"]
    assert [r["session_id"] for r in plan.undated] == ["undated"]
    plan = session_ops.plan_prune(paths, timedelta(days=30), keep=3, agent="Pruner", now=now)
    assert [r["session_id"] for r in plan.delete] == ["p3", "p4"] and plan.kept_by_keep == 1


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


def test_jsonfile_locked_many_takes_locks_in_sorted_order(tmp_path, monkeypatch):
    order = []
    real = jsonfile.locked

    def spy(path, timeout=5.0):
        order.append(os.path.basename(path))
        return real(path, timeout)

    monkeypatch.setattr(jsonfile, "locked", spy)
    with jsonfile.locked_many([tmp_path / "b.json", tmp_path / "a.json"]):
        pass
    assert order == ["a.json", "b.json"]


def test_prune_rechecks_under_the_lock_and_keeps_a_session_written_meanwhile(paths):
    now = time.time()
    target = sessions_dir(paths) / "old.json"
    target.write_text(json.dumps({"session_id": "old", "messages": [], "updated_at": jsonfile_iso(now - 90 * 86400)}))
    plan = session_ops.plan_prune(paths, timedelta(days=30), now=now)
    assert "old" in [r["session_id"] for r in plan.delete]
    doc = json.loads(target.read_text())
    doc["updated_at"] = jsonfile_now()  # an agent writes while the user reads the prompt
    target.write_text(json.dumps(doc))
    changes = session_ops.delete([target], recheck=session_ops.still_older_than(plan.cutoff))
    assert (changes[0].action, target.exists()) == ("skipped", True)
    assert "updated after it was chosen" in changes[0].detail


def test_delete_rechecks_liveness_under_the_lock(paths):
    target = sessions_dir(paths) / "my_chat.json"
    doc = json.loads(target.read_text())
    doc["updated_at"] = jsonfile_now()
    target.write_text(json.dumps(doc))
    [change] = session_ops.delete([target], recheck=session_ops.not_live)
    assert change.action == "skipped" and target.exists()
    [change] = session_ops.delete([target])
    assert change.action == "deleted" and not target.exists()
