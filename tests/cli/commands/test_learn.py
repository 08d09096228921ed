"""learn list / show / add / delete / clear on a copy of the fixture home."""

from __future__ import annotations

import json
from datetime import datetime

from tests.helpers import normalise_times, snapshot

PERSONA = "persona_0_1796050189.525609"


def learn(cli, home, *args: str):
    return cli("--home", home, "learn", *args)


def test_list_shows_every_entry_and_bumps_no_use_count(cli, fixture_home):
    before = snapshot(fixture_home)
    result = learn(cli, fixture_home, "list")
    assert normalise_times(result.stdout) == (
        "STORE\tSCOPE\tUSER\tID\tUPDATED\tUSES\tCONTENT\n"
        "insights\tprivate\talice\tinsights_0_1796050189.527669\t<time>\t0\tUser often asks about travel\n"
        "patterns\tprivate\talice\tpatterns_0_1796050189.529543\t<time>\t0\tCheck weather before booking\n"
        f"persona\tprivate\talice\t{PERSONA}\t<time>\t0\tPrefers concise answers\n"
        "threads\tprivate\talice\tthreads_0_1796050189.528607\t<time>\t0\tTrip planning to Lisbon\n")
    assert snapshot(fixture_home) == before


def test_list_filters_by_store(cli, fixture_home):
    rows = learn(cli, fixture_home, "list", "--store", "persona", "--json").json()
    assert [(r["store"], r["id"], r["content"]) for r in rows] == [("persona", PERSONA, "Prefers concise answers")]


def local(stamp: str) -> str:
    """A stored UTC time as every screen shows it: local, to the second when piped."""
    return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def test_show_prints_the_entry_with_where_it_lives(cli, fixture_home):
    shown = learn(cli, fixture_home, "show", PERSONA).stdout
    assert shown == (f"scope       private\nuser_id     alice\nstore       persona\n"
                     f"file        {fixture_home}/learn/private/alice/persona.json\nid          {PERSONA}\n"
                     "content     Prefers concise answers\n"
                     'metadata    {"category": "general", "type": "preference"}\n'
                     f"created_at  {local('2026-11-30T14:49:49.525642+00:00')}\n"
                     f"updated_at  {local('2026-11-30T14:49:49.526654+00:00')}\n"
                     "use_count   0\nlast_used   null\n")
    assert learn(cli, fixture_home, "show", PERSONA, "--json").json()["content"] == "Prefers concise answers"


def test_show_of_an_unknown_entry_exits_3(cli, fixture_home):
    result = learn(cli, fixture_home, "show", "nope")
    assert (result.exit_code, result.stderr) == (
        3, f"praisonmem: error: no learn entry 'nope' in {fixture_home / 'learn'}\n")


def test_add_prints_the_new_id_and_a_duplicate_is_not_added_again(cli, fixture_home):
    new_id = learn(cli, fixture_home, "add", "persona", "Likes tea", "--user-id", "alice").stdout.strip()
    dup = learn(cli, fixture_home, "add", "persona", "likes TEA", "--user-id", "alice")
    assert dup.stdout == f"{new_id} (already there; not added again)\n"
    stored = json.loads((fixture_home / "learn/private/alice/persona.json").read_text())
    assert [e["content"] for e in stored.values()] == ["Prefers concise answers", "Likes tea"]


def test_delete_needs_yes_then_deletes(cli, fixture_home):
    before = snapshot(fixture_home)
    assert learn(cli, fixture_home, "delete", PERSONA).exit_code == 4
    assert snapshot(fixture_home) == before
    done = learn(cli, fixture_home, "delete", PERSONA, "--yes")
    assert done.stdout == f"deleted {PERSONA} from {fixture_home}/learn/private/alice/persona.json\n"
    assert json.loads((fixture_home / "learn/private/alice/persona.json").read_text()) == {}


def test_clear_empties_one_store(cli, fixture_home):
    store = fixture_home / "learn/private/alice/threads.json"
    dry = learn(cli, fixture_home, "clear", "threads", "--user-id", "alice", "--dry-run")
    assert dry.stdout == f"would remove 1 entries from {store}\n" and json.loads(store.read_text()) != {}
    done = learn(cli, fixture_home, "clear", "threads", "--user-id", "alice", "--yes")
    assert done.stdout == f"removed 1 entries from {store}\n" and json.loads(store.read_text()) == {}


def test_an_unknown_store_is_a_usage_error_and_changes_nothing(cli, fixture_home):
    before = snapshot(fixture_home)
    result = learn(cli, fixture_home, "add", "nope", "x")
    assert (result.exit_code, result.stderr) == (
        2, "praisonmem: error: unknown learn store 'nope' (one of: persona, insights, threads, patterns, decisions, "
           "feedback, improvements)\n")
    assert snapshot(fixture_home) == before
