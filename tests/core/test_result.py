"""Change and Outcome: the record every mutating command prints, and the exit code it knows."""

from __future__ import annotations

from praisonmem.core.errors import LockTimeout, NotFound
from praisonmem.core.result import Action, Change, Outcome, Plan


def change(target: str = "x", **kw) -> Change:
    return Change(Action.deleted, target, **kw)


def test_nothing_failed_exits_0_even_when_nothing_changed():
    assert Outcome().exit_code == 0
    assert Outcome([change(), Change(Action.skipped, "y", "kept")]).exit_code == 0


def test_everything_failed_for_one_reason_exits_with_that_reasons_code():
    outcome = Outcome([change("a").fail(LockTimeout("busy")), change("b").fail(LockTimeout("busy too"))])
    assert outcome.exit_code == 4


def test_failures_for_different_reasons_or_some_successes_exit_1():
    assert Outcome([change("a").fail(LockTimeout("busy")), change("b").fail(NotFound("gone"))]).exit_code == 1
    assert Outcome([change("a").fail(NotFound("gone")), change("b")]).exit_code == 1


def test_the_json_record_is_action_then_its_fields_then_dry_run_and_detail():
    record = Change(Action.adopt_moved, "a.json → b.json", "note", True, "a.json", {"session_id": "a"}).to_json()
    assert list(record.items()) == [("action", "adopt-moved"), ("session_id", "a"), ("dry_run", True),
                                    ("detail", "note")]


def test_a_field_may_give_the_record_another_detail_than_the_line():
    assert Change(Action.retitled, "'a' to 'T'", fields={"detail": "T"}).to_json()["detail"] == "T"


def test_a_failed_change_keeps_its_reason_and_code():
    failed = change().fail(NotFound("x: gone"))
    assert (failed.action, failed.detail, failed.exit_code, failed.failed) == (Action.failed, "x: gone", 3, True)


def test_a_plan_runs_its_change_or_says_what_it_would_do():
    seen = []
    plan = Plan("Delete x?", lambda dry_run, progress: seen.append(dry_run) or Outcome([change(dry_run=dry_run)]))
    assert plan.run(dry_run=True).changes[0].dry_run is True and plan.run().changes[0].dry_run is False
    assert seen == [True, False] and plan.notes == []
