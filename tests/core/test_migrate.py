"""core.migrate: the finder interface the sessions.db finder plugs into, and how a fix becomes one change."""

from __future__ import annotations


import pytest

from praisonmem.core import migrate
from praisonmem.core.errors import CorruptFile
from praisonmem.core.paths import resolve
from praisonmem.core.result import Action, Change, Outcome, Plan


def plan_of(*changes: Change) -> Plan:
    return Plan(None, lambda dry_run, progress: Outcome([Change(c.action, c.target, c.detail, dry_run, c.where,
                                                                dict(c.fields), c.exit_code) for c in changes]))


def test_a_finder_is_kind_where_and_a_function_of_paths_and_timeout(monkeypatch, tmp_path):
    seen = []

    def sessions_db(paths, timeout):
        seen.append((paths.sessions_dir, timeout))
        return [migrate.Proposal("sessions_db.missing_json", str(paths.sessions_dir / "sessions.db"), "2 sessions",
                                 migrate.command(paths, "migrate"), plan_of(Change(Action.imported, "a.json")))]

    monkeypatch.setattr(migrate, "FINDERS", (migrate.Finder("sessions_db.missing_json", "home", sessions_db),))
    paths = resolve(tmp_path / "home", env={})
    assert migrate.find(paths, where="project") == [] and seen == []
    [proposal] = migrate.find(paths, timeout=2.5)
    assert seen == [(tmp_path / "home" / "sessions", 2.5)]
    assert proposal.fix_command == f"praisonmem --home {tmp_path / 'home'} migrate"
    change = migrate.apply(proposal, dry_run=True)
    assert change.to_json() == {"action": "imported", "kind": "sessions_db.missing_json",
                                "subject": str(tmp_path / "home/sessions/sessions.db"), "detail": "2 sessions",
                                "fix_command": proposal.fix_command, "error": None,
                                "changes": [{"action": "imported", "dry_run": True, "detail": None}],
                                "dry_run": True}


def test_a_finder_that_cannot_look_gives_a_fix_that_fails_with_its_reason(monkeypatch, tmp_path):
    def broken(paths, timeout):
        raise CorruptFile(str(paths.sessions_dir / "sessions.db"), "file is not a database")

    monkeypatch.setattr(migrate, "FINDERS", (migrate.Finder("sessions_db.missing_json", "home", broken),))
    paths = resolve(tmp_path / "home", env={})
    [proposal] = migrate.find(paths)
    assert (proposal.subject, proposal.fix_command) == (str(tmp_path / "home"), "")
    change = migrate.apply(proposal)
    assert change.failed and change.exit_code == 4
    assert change.to_json()["error"] == f"{tmp_path / 'home/sessions/sessions.db'}: file is not a database"


@pytest.mark.parametrize("changes, action, code", [
    ([Change(Action.skipped, "x", "already done")], Action.skipped, 0),
    ([Change(Action.skipped, "x"), Change(Action.adopt_moved, "y")], Action.adopt_moved, 0),
    ([Change(Action.adopt_moved, "x"), Change(Action.failed, "y", "locked", exit_code=4)], Action.failed, 1),
])
def test_one_change_per_fix_whatever_its_plan_did(changes, action, code):
    proposal = migrate.Proposal("k", "s", "d", "praisonmem migrate", plan_of(*changes))
    change = migrate.apply(proposal)
    assert (change.action, change.exit_code) == (action, code)
    assert len(change.to_json()["changes"]) == len(changes)


def test_fix_commands_quote_what_the_shell_would_split(tmp_path):
    paths = resolve(tmp_path / "my home", tmp_path / "mem dir", env={})
    assert migrate.command(paths, "session", "adopt", "Café ✓ 日本") == (
        f"praisonmem --home '{tmp_path}/my home' --memory-dir '{tmp_path}/mem dir' session adopt 'Café ✓ 日本'")
    assert migrate.command(resolve(None, env={"PRAISONAI_HOME": str(tmp_path)}), "migrate") == "praisonmem migrate"
