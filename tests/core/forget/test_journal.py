"""The forget journal: written before the first erase (0600 in a 0700 dir, atomically, keys only), read back by
the rerun of the same subject, a refusal naming the finishing command for another subject's."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from praisonmem.core.errors import CorruptFile, Refused
from praisonmem.core.forget.journal import Journal, add_unfinished, finishing_command, journal_path, state_dir
from praisonmem.core.forget.model import Action, Erasure, StorePlan, Subject, SubjectKind

ALICE = Subject(SubjectKind.user, "alice")
SECRET = "alice's passport number is X1234567"


def plans() -> list[StorePlan]:
    return [StorePlan("session-dir", "/h/sessions", [Erasure("s-1", "session s-1", texts=(SECRET,))]),
            StorePlan("filememory", "/p/memory", [Erasure("bob/long_term.json#7d78", "item", Action.rewrite,
                                                          texts=(SECRET,))]),
            StorePlan("sqlite-memory", "/p/long_term_bob.db")]


def test_the_state_dir_is_xdg_state_home_else_home_local_state() -> None:
    assert state_dir({"XDG_STATE_HOME": "/x/state", "HOME": "/h"}) == Path("/x/state/praisonmem")
    assert state_dir({"XDG_STATE_HOME": "relative", "HOME": "/h"}) == Path("/h/.local/state/praisonmem")
    assert journal_path({"HOME": "/h"}) == Path("/h/.local/state/praisonmem/forget/journal.json")


def test_written_private_with_keys_and_never_a_text(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "state" / "forget" / "journal.json")
    journal.write(ALICE, plans(), ["/work/project"])
    assert oct(journal.path.stat().st_mode & 0o777) == "0o600"
    assert oct(journal.path.parent.stat().st_mode & 0o777) == "0o700"
    raw = journal.path.read_bytes()
    assert b"passport" not in raw
    assert json.loads(raw) == {
        "format": 1, "subject": {"kind": "user", "value": "alice", "before": None}, "dirs": ["/work/project"],
        "stores": [{"store": "session-dir", "location": "/h/sessions", "keys": ["s-1"], "rewrite": []},
                   {"store": "filememory", "location": "/p/memory", "keys": ["bob/long_term.json#7d78"],
                    "rewrite": ["bob/long_term.json#7d78"]}]}
    assert [p.name for p in journal.path.parent.iterdir()] == ["journal.json"]  # no temp file left
    journal.remove()
    assert not journal.path.exists()
    journal.remove()  # gone already: nothing to do


def test_the_same_subject_gets_its_record_another_is_refused_with_the_command(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.json")
    assert journal.refuse_other(ALICE) is None
    before = datetime(2026, 1, 1, tzinfo=timezone.utc)
    bob = Subject(SubjectKind.user, "bob", before)
    journal.write(bob, plans(), ["/w/a b"])
    assert journal.refuse_other(bob)["subject"]["value"] == "bob"
    with pytest.raises(Refused) as caught:
        journal.refuse_other(ALICE)
    assert caught.value.message == (
        f"an interrupted forget of --user bob is not finished ({journal.path}); finish it first: praisonmem forget "
        "--user bob --before 2026-01-01T00:00:00+00:00 --in '/w/a b' --yes (with the same --store/--db if it had "
        "them)")
    with pytest.raises(Refused):
        journal.refuse_other(Subject(SubjectKind.user, "bob"))  # another --before is another forget


def test_a_journal_that_does_not_parse_is_reported_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "journal.json"
    path.write_text("{not json")
    with pytest.raises(CorruptFile):
        Journal(path).refuse_other(ALICE)
    assert path.read_text() == "{not json"


def test_the_rerun_adds_the_keys_its_fresh_plan_no_longer_finds(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.json")
    journal.write(ALICE, plans(), [])
    fresh = [StorePlan("session-dir", "/h/sessions"), StorePlan("filememory", "/p/memory"),
             StorePlan("learn-files", "/h/learn", [Erasure("private/alice/persona", "learn")])]
    add_unfinished(fresh, journal.load())
    assert [(e.key, e.action) for e in fresh[0].erasures] == [("s-1", Action.remove)]
    assert [(e.key, e.action) for e in fresh[1].erasures] == [("bob/long_term.json#7d78", Action.rewrite)]
    assert [e.key for e in fresh[2].erasures] == ["private/alice/persona"]
    again = [StorePlan("session-dir", "/h/sessions", [Erasure("s-1", "session s-1")])]
    add_unfinished(again, journal.load())
    assert [e.key for e in again[0].erasures] == ["s-1"]  # found again: not added twice


def test_the_finishing_command_quotes_what_a_shell_would_split() -> None:
    assert finishing_command(Subject(SubjectKind.session, "a b;rm"), []) == "praisonmem forget --session 'a b;rm' --yes"
