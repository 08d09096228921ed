"""forget's orchestration: the subject from the options, --before, what makes a run ok."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from praisonmem.core.errors import UsageError
from praisonmem.core.forget.model import StorePlan, Subject, SubjectKind, Verdict, Verified
from praisonmem.core.forget.run import Planned, Result, _vouched, parse_before, subject_from


def test_exactly_one_subject() -> None:
    assert subject_from("alice", None, None, None) == Subject(SubjectKind.user, "alice")
    assert subject_from(None, "s-1", None, "2026-01-31") == Subject(
        SubjectKind.session, "s-1", datetime(2026, 1, 31, tzinfo=timezone.utc))
    for args in ((None, None, None), ("a", "s", None), ("a", "s", "g")):
        with pytest.raises(UsageError):
            subject_from(*args, None)


def test_before_takes_a_zone_and_defaults_to_utc() -> None:
    assert parse_before("2026-01-31T10:00+02:00") == datetime(2026, 1, 31, 8, 0, tzinfo=timezone.utc)
    assert parse_before("2026-01-31 10:00") == datetime(2026, 1, 31, 10, 0, tzinfo=timezone.utc)
    with pytest.raises(UsageError):
        parse_before("yesterday")


def result(*verdicts: Verified, allow: bool = False, backups=(), failures=()) -> Result:
    planned = Planned(Subject(SubjectKind.user, "a"), None, [], [], [], [], [], None)
    return Result(planned, [Verdict("s", str(i), 0, v) for i, v in enumerate(verdicts)], list(backups),
                  list(failures), allow)


def test_ok_only_when_every_store_is_absent_or_unverified_is_allowed() -> None:
    assert result(Verified.absent, Verified.absent).ok
    assert not result(Verified.absent, Verified.unverified).ok
    assert result(Verified.absent, Verified.unverified, allow=True).ok
    assert not result(Verified.residue, allow=True).ok
    assert not result(Verified.absent, backups=[{"holds": True}]).ok
    assert result(Verified.absent, backups=[{"holds": False}]).ok
    assert not result(Verified.absent, failures=[{"exit_code": 4}]).ok


def test_a_store_its_plan_cannot_vouch_for_is_unverified_even_when_nothing_was_found() -> None:
    plan = StorePlan("session-dir", "/s", unverifiable="1 encrypted session: ...")
    assert _vouched(Verdict("session-dir", "/s", 1, Verified.absent), [plan]) == Verdict(
        "session-dir", "/s", 1, Verified.unverified, "1 encrypted session: ...")
    residue = Verdict("session-dir", "/s", 1, Verified.residue, "x")
    assert _vouched(residue, [plan]) is residue


def test_store_and_db_values_split_into_servers_and_local_directories(tmp_path) -> None:
    from praisonmem.core.errors import NotFound
    from praisonmem.core.forget.run import split_locations

    db = tmp_path / "conv.db"
    db.write_bytes(b"")
    assert split_locations(["postgresql://u:p@h/db", "redis://localhost:6379/0", "mysql+pymysql://u@h/d",
                            str(db), f"sqlite:///{db}", str(tmp_path)]) == (
        ["postgresql://u:p@h/db", "redis://localhost:6379/0", "mysql+pymysql://u@h/d"],
        [str(tmp_path)] * 3)
    with pytest.raises(NotFound):
        split_locations([str(tmp_path / "missing.db")])
