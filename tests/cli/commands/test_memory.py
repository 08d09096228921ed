"""memory / episodic / learn commands, and each bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import PRAISONAI_FIXTURES
from tests.helpers import snapshot

VECTORS = json.loads((PRAISONAI_FIXTURES / "vectors.json").read_text(encoding="utf-8"))


def test_store_prints_the_id_and_json_is_the_item(cli, project):
    result = cli("memory", "store", "User likes tea", "--user-id", "carol")
    assert result.exit_code == 0 and len(result.stdout.strip()) == 16
    [record] = cli("memory", "store", "Fact", "--long", "--importance", "0.9", "--meta", "source=cli", "--meta",
                   "k=a=b", "--user-id", "carol", "--json").json()
    assert (record.pop("action"), record.pop("dry_run"), record.pop("detail")) == ("stored", False, None)
    assert record["importance"] == 0.9 and record["metadata"] == {"source": "cli", "k": "a=b"}
    stored = json.loads((project / ".praisonai/memory/carol/long_term.json").read_text())
    assert stored == [record]  # the record is the stored item, every key as FileMemory wrote it


def test_search_json_shape_and_filters(cli, project):
    hits = cli("memory", "search", "dark mode", "--user-id", "alice", "--json").json()
    assert [h["type"] for h in hits] == ["long_term", "short_term", "long_term"]
    assert all(list(h) == ["type", "score", "item"] for h in hits)
    only = cli("memory", "search", "dark mode", "--user-id", "alice", "--filter", "type=preference", "--json").json()
    assert [h["item"]["content"] for h in only] == ["User prefers dark mode in every editor"]
    long = cli("memory", "search", "dark", "--type", "long", "--user-id", "alice", "--limit", "1", "--json").json()
    assert len(long) == 1 and long[0]["type"] == "long_term"
    assert cli("memory", "search", "zzz", "--user-id", "alice", "--json").json() == []


def test_list_shows_entities_with_attributes_and_relations(cli, project):
    out = cli("memory", "list", "--type", "entity", "--user-id", "alice").stdout
    assert "John (person) [role=developer, team=core] {works_at → Acme}" in out
    rows = cli("memory", "list", "--type", "episodic", "--user-id", "alice", "--json").json()
    assert [r["date"] for r in rows] == ["2026-03-05", "2026-03-06", "2026-11-30"]


def test_users_and_providers(cli, project):
    users = cli("memory", "users", "--json").json()
    assert [(u["user_id"], u["short_term"], u["long_term"], u["entities"]) for u in users] == [
        ("alice", 3, 3, 2), ("bob", 4, 4, 1)]
    sqlite_users = cli("memory", "users", "--provider", "sqlite", "--json").json()
    assert sqlite_users == [{"user_id": "alice", "path": str(Path(".praisonai")), "short_term": 2, "long_term": 2}]
    names = [p["name"] for p in cli("memory", "providers", "--json").json()]
    assert names[:2] == ["file", "sqlite"]


def test_delete_and_reset_need_confirmation_and_dry_run_changes_nothing(cli, project):
    before = snapshot(project)
    refused = cli("memory", "reset", "--user-id", "alice")
    assert refused.exit_code == 4 and "pass --yes" in refused.stderr
    [dry] = cli("memory", "reset", "--all", "--user-id", "alice", "--dry-run", "--json").json()
    assert dry["removed"] == {"short_term": 3, "long_term": 3, "entities": 2, "summaries": 1, "episodic": 3,
                              "episodic_files": 3}
    assert cli("memory", "delete", "b6405825f19f0274", "--user-id", "alice").exit_code == 4
    assert snapshot(project) == before
    deleted = cli("memory", "delete", "b6405825f19f0274", "--user-id", "alice", "--yes")
    assert deleted.stdout == "deleted short_term memory b6405825f19f0274\n"
    assert cli("memory", "delete", "b6405825f19f0274", "--user-id", "alice", "--yes").exit_code == 3
    assert cli("memory", "reset", "--long", "--user-id", "alice", "--yes").stdout == "removed 3 long term\n"


def test_extract_preview_then_store(cli, project):
    preview = cli("memory", "extract", "My name is Ann and I prefer Go for servers.", "--user-id", "ann", "--json").json()
    assert [(p["type"], p["status"]) for p in preview] == [("name", "preview"), ("preference", "preview"),
                                                           ("technology", "preview")]
    assert not (project / ".praisonai/memory/ann").exists()
    stored = cli("memory", "extract", "My name is Ann and I prefer Go for servers.", "--user-id", "ann", "--store", "--json")
    assert [p["status"] for p in stored.json()] == ["stored"] * 3
    again = cli("memory", "extract", "My name is Ann and I prefer Go for servers.", "--user-id", "ann", "--store", "--json")
    assert [p["status"] for p in again.json()] == ["already stored"] * 3
    assert cli("memory", "extract", "hello there").stderr == "praisonmem: nothing memorable found\n"


def test_episodic_add_get_delete(cli, project):
    item_id = cli("episodic", "add", "Hiked Sintra", "--date", "2026-3-5", "--user-id", "alice").stdout.strip()
    rows = cli("episodic", "get", "--date", "2026-03-05", "--user-id", "alice", "--json").json()
    assert [r["item"]["content"] for r in rows] == ["Planned the Lisbon trip", "Hiked Sintra"]
    assert cli("episodic", "delete", item_id, "--user-id", "alice", "--yes").exit_code == 3  # 30-day scan
    gone = cli("episodic", "delete", item_id, "--date", "2026-03-05", "--user-id", "alice", "--yes")
    assert gone.stdout == f"deleted episode {item_id} of 2026-03-05\n"
    today = cli("episodic", "get", "--user-id", "alice", "--json").json()
    assert [r["item"]["content"] for r in today] == [] or all(r["date"] >= "2026-11-24" for r in today)


@pytest.mark.parametrize("case", [c for c in VECTORS["episodic_dates"] if isinstance(c["input"], str)],
                         ids=lambda c: repr(c["input"]))
def test_episodic_date_forms_through_the_cli(cli, project, case):
    result = cli("episodic", "add", "x", "--date", case["input"], "--user-id", "dates", "--json")
    if "error" in case:
        assert result.exit_code == 2
        assert result.stderr == json.dumps({"error": {"code": "usage", "message": case["message"],
                                                      "exit_code": 2}}) + "\n"
    else:
        assert result.exit_code == 0 and result.json()[0]["date"] == case["normalized"]
        assert (project / ".praisonai/memory/dates/episodic" / case["file"]).exists()


@pytest.mark.parametrize("args, message", [
    (["memory", "store", "x", "--user-id", "../x"], "user_id must not contain path separators"),
    (["memory", "search", "x", "--user-id", "a/b"], "user_id must not contain path separators"),
    (["memory", "store", "x", "--provider", "nope"], "unknown provider 'nope'"),
    (["memory", "store", "x", "--importance", "2"], "--importance must be between 0 and 1, got 2"),
    (["memory", "store", "x", "--meta", "novalue"], "--meta must be KEY=VALUE, got 'novalue'"),
    (["memory", "search", "x", "--filter", "=v"], "--filter must be KEY=VALUE, got '=v'"),
    (["memory", "search", "x", "--type", "bogus"], "--type must be short, long, entity or episodic"),
    (["memory", "reset", "--short", "--long"], "give one of --short, --long, --all"),
    (["episodic", "get", "--date", "2026-01-01", "--days-back", "3"], "give --date or --days-back, not both"),
    (["learn", "add", "nope", "x"], "unknown learn store 'nope'"),
])
def test_bad_inputs_exit_2_with_one_line(cli, project, args, message):
    before = snapshot(project)
    result = cli(*args)
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert snapshot(project) == before


def test_corrupt_short_term_is_reported_and_not_overwritten(cli, project):
    target = project / ".praisonai/memory/alice/short_term.json"
    target.write_bytes(b'[{"id": "a", "content": "trunc')
    for args in (["memory", "store", "x"], ["memory", "search", "x"], ["memory", "reset", "--yes"]):
        result = cli(*args, "--user-id", "alice")
        assert result.exit_code == 4
        assert "FileMemory would read it as empty and overwrite it; praisonmem leaves it alone" in result.stderr
    assert target.read_bytes() == b'[{"id": "a", "content": "trunc'


def test_reset_without_yes_in_a_non_interactive_run_changes_nothing(cli, project):
    before = snapshot(project)
    result = cli("memory", "reset", "--all", "--user-id", "bob")
    assert result.exit_code == 4 and "not confirmed, nothing changed" in result.stderr
    assert snapshot(project) == before


def test_learn_commands(cli, fixture_home):
    rows = cli("--home", fixture_home, "learn", "list", "--json").json()
    assert {r["store"] for r in rows} == {"persona", "insights", "threads", "patterns"}
    shown = cli("--home", fixture_home, "learn", "show", rows[0]["id"], "--json").json()
    assert shown["id"] == rows[0]["id"]
    new_id = cli("--home", fixture_home, "learn", "add", "persona", "Likes tea", "--user-id", "alice").stdout.strip()
    dup = cli("--home", fixture_home, "learn", "add", "persona", "likes TEA", "--user-id", "alice").stdout
    assert dup.startswith(new_id) and "not added again" in dup
    assert cli("--home", fixture_home, "learn", "delete", new_id).exit_code == 4
    assert cli("--home", fixture_home, "learn", "delete", new_id, "--yes").exit_code == 0
    assert cli("--home", fixture_home, "learn", "clear", "threads", "--user-id", "alice", "--yes").stdout.startswith(
        "removed 1 entries")
    assert cli("--home", fixture_home, "learn", "show", "nope").exit_code == 3


WRITER_LOCK = ".praisonmem.lock"  # a writer may create its empty lock sidecar


@pytest.mark.parametrize("key, value, flags, reason", [
    ("short_term_limit", -1, [], "is negative (-1): FileMemory deletes the oldest short-term items on every store"),
    ("short_term_limit", -1000, [], "is negative (-1000): FileMemory deletes the oldest short-term items on every "
                                    "store"),
    ("short_term_limit", True, [], "is true, not a whole number: FileMemory reads it as 1 and deletes the oldest "
                                   "short-term items on every store"),
    ("short_term_limit", 2.5, [], "is a number, not a whole number: FileMemory raises TypeError when it stores "
                                  "short-term memory"),
    ("short_term_limit", "lots", [], "is a string, not a whole number: FileMemory raises TypeError when it stores "
                                     "short-term memory"),
    ("importance_threshold", "lots", [], "is a string, not a number: FileMemory raises TypeError when it promotes "
                                         "short-term items"),
    ("long_term_limit", 0, ["--long"], "is 0: FileMemory deletes long-term items on every store"),
    ("long_term_limit", -1, ["--long"], "is -1: FileMemory deletes long-term items on every store"),
    ("long_term_limit", False, ["--long"], "is false, not a whole number: FileMemory reads it as 0 and deletes "
                                           "long-term items on every store"),
    ("long_term_limit", "1000", ["--long"], "is a string, not a whole number: FileMemory raises TypeError when it "
                                            "stores long-term memory"),
])
def test_store_refuses_a_config_limit_that_would_delete_items(cli, project, key, value, flags, reason):
    user = project / ".praisonai/memory/alice"
    config = user / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), key: value}, indent=2))
    before = snapshot(user)
    result = cli("memory", "store", "one more fact", "--user-id", "alice", *flags)
    assert (result.exit_code, result.stderr) == (
        4, f"praisonmem: error: .praisonai/memory/alice/config.json: '{key}' {reason}; nothing stored\n")
    after = snapshot(user)
    after.pop(WRITER_LOCK, None)
    assert after == before


def test_store_with_short_term_limit_0_keeps_every_item_as_the_library_does(cli, project):
    user = project / ".praisonai/memory/alice"
    config = user / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "short_term_limit": 0}, indent=2))
    before = json.loads((user / "short_term.json").read_text())
    assert cli("memory", "store", "one more fact", "--user-id", "alice").exit_code == 0
    after = json.loads((user / "short_term.json").read_text())
    assert after[:-1] == before and after[-1]["content"] == "one more fact"


def test_users_finds_a_user_whose_only_file_is_summaries_json_as_check_does(cli, project):
    carol = project / ".praisonai/memory/carol"
    carol.mkdir()
    (carol / "summaries.json").write_text('[{"summary": "talked about tea"}]')
    users = {u["user_id"]: u for u in cli("memory", "users", "--json").json()}
    assert sorted(users) == ["alice", "bob", "carol"]
    assert {k: users["carol"][k] for k in ("short_term", "long_term", "entities", "summaries", "episodic")} == {
        "short_term": 0, "long_term": 0, "entities": 0, "summaries": 1, "episodic": 0}
    report = cli("check", carol, "--json").json()
    assert (report["files_checked"], report["findings"]) == (1, [])  # check reads it as a FileMemory user too
