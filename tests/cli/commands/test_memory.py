"""memory store / search / list / delete / reset / users / providers / extract, and each bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import PRAISONAI_FIXTURES
from tests.helpers import normalise_times, refused, snapshot

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


def test_search_gives_type_score_and_item_in_the_librarys_order(cli, project):
    hits = cli("memory", "search", "dark mode", "--user-id", "alice", "--json").json()
    assert [(h["type"], h["item"]["content"]) for h in hits] == [
        ("long_term", "User prefers dark mode in every editor"), ("short_term", "User prefers dark mode"),
        ("long_term", "Dark chocolate is a favourite snack")]
    assert all(list(h) == ["type", "score", "item"] for h in hits)


def test_search_filter_matches_the_items_metadata(cli, project):
    only = cli("memory", "search", "dark mode", "--user-id", "alice", "--filter", "type=preference", "--json").json()
    assert [h["item"]["content"] for h in only] == ["User prefers dark mode in every editor"]


def test_search_type_and_limit(cli, project):
    long = cli("memory", "search", "dark", "--type", "long", "--user-id", "alice", "--limit", "1", "--json").json()
    assert [(h["type"], h["item"]["content"]) for h in long] == [
        ("long_term", "User prefers dark mode in every editor")]


def test_search_without_hits_is_an_empty_array_and_exit_0(cli, project):
    result = cli("memory", "search", "zzz", "--user-id", "alice", "--json")
    assert (result.exit_code, result.json()) == (0, [])


MEMORY_LIST = """\
TYPE\tID\tIMPORTANCE\tWHEN\tTEXT
short_term\tb6405825f19f0274\t0.5\t<time>\tUser prefers dark mode
short_term\t7ad622c96037f39d\t0.6\t<time>\tAsked about the Lisbon trip
short_term\t46a8cf2cdb904075\t0.4\t<time>\tMentioned café culture ☕
long_term\t6b6dbe1fcbd0b17f\t0.95\t<time>\tUser's name is Alice
long_term\tb52d0dc68db39acb\t0.9\t<time>\tUser prefers dark mode in every editor
long_term\t20b68d5381eb6cf3\t0.8\t<time>\tDark chocolate is a favourite snack
entity\t857e6ca8c01ccb7a\t\t<time>\tJohn (person) [role=developer, team=core] {works_at → Acme}
entity\tb25aac7bc257f468\t\t<time>\tAcme (organization) [industry=software]
episodic\t1235d023dc691d0d\t0.5\t2026-03-05\tPlanned the Lisbon trip
episodic\td0ab7484d9b89955\t0.5\t2026-03-06\tBooked Hotel Alfama Patio
episodic\tbb51859c00dc1016\t0.5\t2026-11-30\tChatted today
"""


def test_list_shows_every_tier_in_file_order_entities_with_attributes_and_relations(cli, project):
    result = cli("memory", "list", "--user-id", "alice")
    assert (result.exit_code, normalise_times(result.stdout), result.stderr) == (0, MEMORY_LIST, "")


def test_list_json_gives_the_episodic_date(cli, project):
    rows = cli("memory", "list", "--type", "episodic", "--user-id", "alice", "--json").json()
    assert [(r["type"], r["date"], r["item"]["id"]) for r in rows] == [
        ("episodic", "2026-03-05", "1235d023dc691d0d"), ("episodic", "2026-03-06", "d0ab7484d9b89955"),
        ("episodic", "2026-11-30", "bb51859c00dc1016")]


def test_users_counts_each_tier(cli, project):
    users = cli("memory", "users", "--json").json()
    assert [(u["user_id"], u["short_term"], u["long_term"], u["entities"], u["summaries"], u["episodic"])
            for u in users] == [("alice", 3, 3, 2, 1, 3), ("bob", 4, 4, 1, 0, 1)]
    human = cli("memory", "users").stdout.splitlines()
    assert human == ["USER\tSHORT-TERM\tLONG-TERM\tENTITIES\tEPISODIC\tSUMMARIES", "alice\t3\t3\t2\t3\t1",
                     "bob\t4\t4\t1\t1\t0"]


def test_users_of_the_sqlite_provider(cli, project):
    assert cli("memory", "users", "--provider", "sqlite", "--json").json() == [
        {"user_id": "alice", "path": str(Path(".praisonai")), "short_term": 2, "long_term": 2}]
    assert cli("memory", "users", "--provider", "sqlite").stdout == "USER\tSHORT-TERM\tLONG-TERM\nalice\t2\t2\n"


def test_providers_lists_the_builtins_first(cli, project):
    infos = cli("memory", "providers", "--json").json()
    assert [(i["name"], i["source"], i["error"]) for i in infos[:2]] == [("file", "builtin", None),
                                                                          ("sqlite", "builtin", None)]


def test_reset_needs_yes_in_a_non_interactive_run(cli, project):
    before = snapshot(project)
    refused = cli("memory", "reset", "--user-id", "alice")
    assert refused.exit_code == 4 and "pass --yes" in refused.stderr
    assert snapshot(project) == before


def test_reset_dry_run_gives_the_counts_and_changes_nothing(cli, project):
    before = snapshot(project)
    dry = cli("memory", "reset", "--all", "--user-id", "alice", "--dry-run")
    assert dry.stdout == ("would remove 3 short term, 3 long term, 2 entities, 1 summaries, 3 episodic, "
                          "3 episodic files\n")
    [record] = cli("memory", "reset", "--all", "--user-id", "alice", "--dry-run", "--json").json()
    assert record["removed"] == {"short_term": 3, "long_term": 3, "entities": 2, "summaries": 1, "episodic": 3,
                                 "episodic_files": 3}
    assert snapshot(project) == before


def test_reset_long_clears_only_long_term(cli, project):
    assert cli("memory", "reset", "--long", "--user-id", "alice", "--yes").stdout == "removed 3 long term\n"
    assert [len(cli("memory", "list", "--type", t, "--user-id", "alice", "--json").json()) for t in ("short", "long")
            ] == [3, 0]


def test_delete_needs_yes_then_deletes_and_a_second_delete_is_not_found(cli, project):
    before = snapshot(project)
    assert cli("memory", "delete", "b6405825f19f0274", "--user-id", "alice").exit_code == 4
    assert snapshot(project) == before
    deleted = cli("memory", "delete", "b6405825f19f0274", "--user-id", "alice", "--yes")
    assert deleted.stdout == "deleted short_term memory b6405825f19f0274\n"
    again = cli("memory", "delete", "b6405825f19f0274", "--user-id", "alice", "--yes")
    assert (again.exit_code, again.stderr) == (
        3, "praisonmem: error: no memory 'b6405825f19f0274' for user 'alice' (file provider)\n")


EXTRACTED = "My name is Ann and I prefer Go for servers."


def test_extract_previews_without_writing(cli, project):
    preview = cli("memory", "extract", EXTRACTED, "--user-id", "ann")
    assert preview.stdout == ("would store entity: Ann (name, importance 0.95)\n"
                              "would store long_term: Go for servers (preference, importance 0.7)\n"
                              "would store long_term: Go (technology, importance 0.7)\n")
    assert [(p["type"], p["status"], p["dry_run"]) for p in cli("memory", "extract", EXTRACTED, "--user-id", "ann",
                                                                 "--json").json()] == [
        ("name", "preview", True), ("preference", "preview", True), ("technology", "preview", True)]
    assert not (project / ".praisonai/memory/ann").exists()


def test_extract_store_writes_then_skips_what_is_already_there(cli, project):
    stored = cli("memory", "extract", EXTRACTED, "--user-id", "ann", "--store", "--json").json()
    assert [(p["status"], p["action"]) for p in stored] == [("stored", "stored")] * 3
    again = cli("memory", "extract", EXTRACTED, "--user-id", "ann", "--store")
    assert again.stdout == ("skipped entity: Ann: already stored\nskipped long_term: Go for servers: already stored\n"
                            "skipped long_term: Go: already stored\n")


def test_extract_of_nothing_memorable_says_so(cli, project):
    result = cli("memory", "extract", "hello there")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "praisonmem: nothing memorable found\n")


@pytest.mark.parametrize("args, message", [
    (["memory", "store", "x", "--user-id", "../x"], "user_id must not contain path separators"),
    (["memory", "search", "x", "--user-id", "a/b"], "user_id must not contain path separators"),
    (["memory", "store", "x", "--provider", "nope"], "unknown provider 'nope'"),
    (["memory", "store", "x", "--importance", "2"], "--importance must be between 0 and 1, got 2"),
    (["memory", "store", "x", "--meta", "novalue"], "--meta must be KEY=VALUE, got 'novalue'"),
    (["memory", "search", "x", "--filter", "=v"], "--filter must be KEY=VALUE, got '=v'"),
    (["memory", "search", "x", "--type", "bogus"], "--type must be short, long, entity, episodic or summary, got 'bogus'"),
    (["memory", "reset", "--short", "--long"], "give one of --short, --long, --all"),
    (["episodic", "get", "--date", "2026-01-01", "--days-back", "3"], "give --date or --days-back, not both"),
])
def test_bad_inputs_exit_2_with_one_line(cli, project, args, message):
    assert message in refused(cli, project, *args, code=2)


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
