"""episodic add / get / delete on a copy of the fixture project, with today frozen at the fixtures' day."""

from __future__ import annotations

import json

import pytest

from tests.helpers import VECTORS, snapshot

ALICE = ["--user-id", "alice"]


def contents(rows: list[dict]) -> list[tuple[str, str]]:
    return [(r["date"], r["item"]["content"]) for r in rows]


def test_add_prints_the_new_id_and_stores_it_under_the_normalised_date(cli, project):
    item_id = cli("episodic", "add", "Hiked Sintra", "--date", "2026-3-5", *ALICE).stdout.strip()
    stored = json.loads((project / ".praisonai/memory/alice/episodic/2026-03-05.json").read_text())
    assert [(i["id"], i["content"]) for i in stored][-1] == (item_id, "Hiked Sintra") and len(item_id) == 16


def test_add_without_a_date_is_today(cli, project, today):
    [record] = cli("episodic", "add", "Swam at Cascais", *ALICE, "--json").json()
    assert record["date"] == "2026-11-30"
    assert contents(cli("episodic", "get", *ALICE, "--json").json()) == [
        ("2026-11-30", "Chatted today"), ("2026-11-30", "Swam at Cascais")]


def test_get_of_one_day(cli, project):
    assert contents(cli("episodic", "get", "--date", "2026-03-05", *ALICE, "--json").json()) == [
        ("2026-03-05", "Planned the Lisbon trip")]


def test_get_defaults_to_the_last_7_local_days(cli, project, today):
    assert contents(cli("episodic", "get", *ALICE, "--json").json()) == [("2026-11-30", "Chatted today")]


def test_get_days_back_is_newest_first(cli, project, today):
    assert contents(cli("episodic", "get", "--days-back", "300", *ALICE, "--json").json()) == [
        ("2026-11-30", "Chatted today"), ("2026-03-06", "Booked Hotel Alfama Patio"),
        ("2026-03-05", "Planned the Lisbon trip")]


def test_delete_without_a_date_scans_only_the_last_30_days(cli, project, today):
    before = snapshot(project)
    result = cli("episodic", "delete", "1235d023dc691d0d", *ALICE, "--yes")
    assert (result.exit_code, result.stderr) == (
        3, "praisonmem: error: no episode '1235d023dc691d0d' in the last 30 days for user 'alice'\n")
    assert snapshot(project) == before
    done = cli("episodic", "delete", "bb51859c00dc1016", *ALICE, "--yes")
    assert done.stdout == "deleted episode bb51859c00dc1016 of 2026-11-30\n"


def test_delete_of_a_date_asks_first_then_deletes(cli, project):
    refused = cli("episodic", "delete", "1235d023dc691d0d", "--date", "2026-03-05", *ALICE)
    assert refused.exit_code == 4 and "pass --yes" in refused.stderr
    dry = cli("episodic", "delete", "1235d023dc691d0d", "--date", "2026-03-05", *ALICE, "--dry-run")
    assert dry.stdout == "would delete episode 1235d023dc691d0d of 2026-03-05\n"
    gone = cli("episodic", "delete", "1235d023dc691d0d", "--date", "2026-03-05", *ALICE, "--yes")
    assert gone.stdout == "deleted episode 1235d023dc691d0d of 2026-03-05\n"
    assert json.loads((project / ".praisonai/memory/alice/episodic/2026-03-05.json").read_text()) == []


@pytest.mark.parametrize("case", [c for c in VECTORS["episodic_dates"] if isinstance(c["input"], str)],
                         ids=lambda c: repr(c["input"]))
def test_date_forms_through_the_cli(cli, project, case):
    result = cli("episodic", "add", "x", "--date", case["input"], "--user-id", "dates", "--json")
    if "error" in case:
        assert result.exit_code == 2
        assert result.stderr == json.dumps({"error": {"code": "usage", "message": case["message"],
                                                      "exit_code": 2}}) + "\n"
    else:
        assert result.exit_code == 0 and result.json()[0]["date"] == case["normalized"]
        assert (project / ".praisonai/memory/dates/episodic" / case["file"]).exists()
