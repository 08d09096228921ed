"""session list / show / search against the real fixture home, and every bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from praisonmem.core.io import jsonfile
from tests.conftest import PRAISONAI_FIXTURES
from tests.helpers import normalise_times

EXPECTED = json.loads((PRAISONAI_FIXTURES / "expected/sessions.json").read_text(encoding="utf-8"))
FIXTURE_IDS = {
    "531bcd72-9714-4bca-8431-340003ceed28", "7ca18a8d-7365-46f5-9df9-26d536f25633", "interrupted-stream",
    "café-日本", "compacted-demo", "history_d465a9b7", "history_ccc5e5d4", "history_8fe938c0",
    "support/ticket #1234", "my_chat", "history_ec9d38c8", "history_fea3173a",
}
LIST_KEYS = {
    "session_id", "file", "agent_name", "user_id", "title", "message_count", "archived_count", "created_at",
    "updated_at", "model", "total_tokens", "cost", "scope", "agent_id", "source", "parent_id",
    "spilled_count", "unreadable", "error", "store", "paired_with", "pair", "stale", "input_tokens", "output_tokens",
    "children_ids", "current_project", "last_session",
}


def test_list_json_names_exactly_the_fixture_sessions(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "list", "--json")
    assert result.exit_code == 0, result.stderr
    rows = result.json()
    assert {r["session_id"] for r in rows} == FIXTURE_IDS
    assert all(set(r) == LIST_KEYS for r in rows)
    assert result.stderr == ""


def test_list_matches_the_library_list_sessions(cli, fixture_home):
    rows = cli("--home", fixture_home, "session", "list", "--json").json()
    assert [r["session_id"] for r in rows] == [s["session_id"] for s in EXPECTED["list_sessions"]]
    for row, lib in zip(rows, EXPECTED["list_sessions"]):
        for key in ("agent_name", "created_at", "updated_at", "message_count", "model", "total_tokens", "cost",
                    "agent_id", "source", "parent_id"):
            assert row[key] == lib[key], (row["session_id"], key)
        doc = jsonfile.read_object(row["file"])
        if lib["title"] is not None or not doc.get("title"):
            assert row["title"] == lib["title"]
        else:  # hierarchical store: its own top-level title is shown
            assert row["title"] == doc["title"]


def test_list_counts_archived_messages_and_spilled_turns(cli, fixture_home):
    rows = {r["session_id"]: r for r in cli("--home", fixture_home, "session", "list", "--json").json()}
    assert rows["compacted-demo"]["message_count"] == 5
    assert rows["compacted-demo"]["archived_count"] == 5
    assert rows["café-日本"]["title"] == "Unicode test"
    assert rows["support/ticket #1234"]["file"].endswith("support_ticket__1234.json")


def test_list_scopes_relative_to_a_global_agent_and_legacy_files(cli, fixture_home):
    rows = {r["session_id"]: r for r in cli("--home", fixture_home, "session", "list", "--json").json()}
    assert rows["history_d465a9b7"]["scope"] == "global"
    assert rows["history_8fe938c0"]["scope"] == "legacy"
    assert rows["history_ccc5e5d4"]["scope"] == "legacy"
    assert rows["history_fea3173a"]["scope"] == "other"  # cwd is not the fixture's git workspace
    assert rows["my_chat"]["scope"] == "explicit"


def test_list_scope_workspace_inside_the_fixture_repo(cli, fixture_home, tmp_path, monkeypatch):
    from tests.helpers import make_fixture_repo

    monkeypatch.chdir(make_fixture_repo(tmp_path / "gitproj"))
    rows = cli("--home", fixture_home, "session", "list", "--scope", "workspace", "--json").json()
    assert [r["session_id"] for r in rows] == ["history_fea3173a"]


def test_list_filters_sort_and_limit(cli, fixture_home):
    by_agent = cli("--home", fixture_home, "session", "list", "--agent", "Stream Bot", "--json").json()
    assert [r["session_id"] for r in by_agent] == ["history_ec9d38c8"]
    by_user = cli("--home", fixture_home, "session", "list", "--user", "erin", "--sort", "id", "--json").json()
    assert [r["session_id"] for r in by_user] == ["history_8fe938c0", "history_ccc5e5d4", "history_d465a9b7"]
    legacy = cli("--home", fixture_home, "session", "list", "--scope", "legacy", "--json").json()
    assert {r["session_id"] for r in legacy} == {"history_8fe938c0", "history_ccc5e5d4"}
    top = cli("--home", fixture_home, "session", "list", "--sort", "messages", "--limit", "2", "--json").json()
    assert [r["message_count"] for r in top] == [5, 4]
    everything = cli("--home", fixture_home, "session", "list", "--limit", "0", "--json").json()
    assert len(everything) == 12


def test_list_limit_default_is_fifty(cli, tmp_path):
    sessions = tmp_path / "h" / "sessions"
    sessions.mkdir(parents=True)
    for i in range(60):
        (sessions / f"s{i:02}.json").write_text(json.dumps({"session_id": f"s{i:02}", "messages": []}))
    result = cli("--home", tmp_path / "h", "session", "list")
    assert len(result.stdout.splitlines()) == 51  # header + 50
    assert "showing 50 of 60 sessions" in result.stderr


def test_list_ndjson_is_one_object_a_line(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "list", "--ndjson")
    lines = result.stdout.splitlines()
    assert len(lines) == 12
    assert {json.loads(line)["session_id"] for line in lines} == FIXTURE_IDS


def test_list_human_output_is_tab_separated_when_piped(cli, fixture_home):
    lines = cli("--home", fixture_home, "session", "list").stdout.splitlines()
    assert lines[0].split("\t")[:4] == ["ID", "AGENT", "USER", "TITLE"]
    assert any(line.startswith("support/ticket #1234\tSupport\tdave\t") for line in lines)
    assert "\x1b[" not in "".join(lines)


def test_list_reports_unreadable_files_and_ignores_side_files(cli, fixture_home):
    sessions = fixture_home / "sessions"
    (sessions / "zz-bad.json").write_bytes(b'{"session_id": "zz-bad", ')
    (sessions / "arr.json").write_bytes(b"[]")
    (sessions / ".tmp1234.tmp").write_bytes(b"{}")
    (sessions / "x.json.corrupt-1-1").write_bytes(b"{")
    result = cli("--home", fixture_home, "session", "list", "--json")
    rows = result.json()
    bad = [r for r in rows if r["unreadable"]]
    assert [Path(r["file"]).name for r in bad] == ["arr.json", "zz-bad.json"]
    assert bad[0]["error"] == "top-level JSON value is an array, not an object"
    assert bad[1]["error"].startswith("invalid JSON at line 1 column 26")
    assert {r["session_id"] for r in rows if not r["unreadable"]} == FIXTURE_IDS
    assert "2 unreadable session files" in result.stderr
    human = cli("--home", fixture_home, "session", "list").stdout
    assert "UNREADABLE: top-level JSON value is an array" in human


def test_list_with_filters_says_unreadable_files_were_not_shown(cli, fixture_home):
    (fixture_home / "sessions" / "bad.json").write_bytes(b"{")
    result = cli("--home", fixture_home, "session", "list", "--agent", "Support", "--json")
    assert [r["session_id"] for r in result.json()] == ["support/ticket #1234"]
    assert "1 unreadable session file not shown" in result.stderr


def test_list_of_a_home_without_sessions_is_empty(cli, tmp_path):
    (tmp_path / "nothing-here").mkdir()
    result = cli("--home", tmp_path / "nothing-here", "session", "list", "--json")
    assert (result.exit_code, result.json()) == (0, [])


@pytest.mark.parametrize("name", sorted(FIXTURE_IDS))
def test_show_json_prints_the_stored_document_exactly(cli, fixture_home, name):
    result = cli("--home", fixture_home, "session", "show", name, "--json")
    assert result.exit_code == 0, result.stderr
    path = fixture_home / "sessions" / f"{''.join(c if c.isalnum() or c in '-_' else '_' for c in name)}.json"
    assert result.stdout == path.read_text(encoding="utf-8") + "\n"


def test_show_resolves_stems_paths_and_unique_prefixes(cli, fixture_home):
    by_stem = cli("--home", fixture_home, "session", "show", "support_ticket__1234", "--json").stdout
    by_path = cli("--home", fixture_home, "session", "show",
                  str(fixture_home / "sessions" / "support_ticket__1234.json"), "--json").stdout
    by_prefix = cli("--home", fixture_home, "session", "show", "support_t", "--json").stdout
    assert json.loads(by_stem)["session_id"] == "support/ticket #1234"
    assert by_stem == by_path == by_prefix


TOOL_EXCHANGE = """\
Session   history_ec9d38c8
File      {home}/sessions/history_ec9d38c8.json
Store     json
Agent     Stream Bot
User      bob
Title     -
Model     gpt-4o-mini
Tokens    0
Cost      $0
Created   <time>
Updated   <time>
Messages  4 active, 0 archived

#0 user · <time>
What is the weather in Paris?

#1 assistant · <time>
→ tool call weather({{"city": "Paris"}}) [call_abc123]

#2 tool · <time> [result of weather [call_abc123]]
Sunny in Paris, 21C

#3 assistant · <time>
The tool said: Sunny in Paris, 21C
"""

COMPACTED_HEADER = """\
Session     compacted-demo
File        {home}/sessions/compacted-demo.json
Store       json
Agent       Compactor
User        alice
Title       -
Model       gpt-4o-mini
Tokens      1380
Cost        $0.0021
Created     <time>
Updated     <time>
Messages    5 active, 5 archived
Checkpoint  resumes at message 3, 1200→180 tokens, <time>
"""

COMPACTED_ACTIVE = """
#0 system · <time> [summary of 5 compacted messages]
[Session Summary]
Previous conversation: 1 messages
Message breakdown: {{'user': 1, 'assistant': 0, 'tool': 0, 'system': 0}}
---
Previous conversation: 1 messages
Message breakdown: {{'user': 0, 'assistant': 1, 'tool': 0, 'system': 0}}
---
Previous conversation: 1 messages
Message breakdown: {{'user': 1, 'assistant': 0, 'tool': 0, 'system': 0}}
---
Previous conversation: 2 messages compacted.

#1 assistant · <time>
May looks sunny, around 24C.

#2 user · <time>
Book a hotel near Alfama

#3 assistant · <time>
Found Hotel Alfama Patio, €140/night.

#4 user · <time>
Great, book it
"""

COMPACTED_ARCHIVED = """
#a0 user · <time> [archived]
Plan a trip to Lisbon

#a1 assistant · <time> [archived]
Sure — when?

#a2 user · <time> [archived]
In May, check the weather too

#a3 assistant · <time> [archived]
→ tool call get_weather({{"city": "Lisbon"}}) [call_w1]

#a4 tool · <time> [archived] [result of get_weather [call_w1]]
Lisbon: 24C, sunny (forecast.csv)
"""


def shown(cli, home, *args: str) -> str:
    result = cli("--home", home, "session", "show", *args)
    assert result.exit_code == 0 and result.stderr == "", result.stderr
    return normalise_times(result.stdout)


def test_show_renders_a_tool_exchange_with_the_call_each_result_answers(cli, fixture_home):
    assert shown(cli, fixture_home, "history_ec9d38c8") == TOOL_EXCHANGE.format(home=fixture_home)


def test_show_of_a_compacted_session_marks_the_summary_and_checkpoint(cli, fixture_home):
    assert shown(cli, fixture_home, "compacted-demo") == (COMPACTED_HEADER + COMPACTED_ACTIVE).format(home=fixture_home)


def test_show_archived_puts_the_archived_turns_first(cli, fixture_home):
    assert shown(cli, fixture_home, "compacted-demo", "--archived") == (
        COMPACTED_HEADER + COMPACTED_ARCHIVED + COMPACTED_ACTIVE).format(home=fixture_home)


def test_show_tail_says_how_many_turns_it_left_out(cli, fixture_home):
    assert shown(cli, fixture_home, "compacted-demo", "--tail", "2") == (
        COMPACTED_HEADER + "\n… 3 earlier turns not shown (--tail)\n\n#3 assistant · <time>\n"
        "Found Hotel Alfama Patio, €140/night.\n\n#4 user · <time>\nGreat, book it\n").format(home=fixture_home)


def test_show_marks_a_partial_turn(cli, fixture_home):
    assert shown(cli, fixture_home, "interrupted-stream").endswith(
        "\n#1 assistant · <time> [partial: interrupted or still streaming]\nOnce upon a ti\n")


def test_show_working_equals_the_library_working_history(cli, fixture_home):
    for sid, expected in EXPECTED["working_history"].items():
        turns = cli("--home", fixture_home, "session", "show", sid, "--working", "--json").json()
        got = []
        for t in turns:
            msg = {"role": t["role"], "content": t["content"]}
            if t["tool_calls"]:
                msg["tool_calls"] = [{"id": c["id"], "type": "function",
                                      "function": {"name": c["name"], "arguments": c["arguments"]}}
                                     for c in t["tool_calls"]]
            if t["tool_call_id"]:
                msg["tool_call_id"] = t["tool_call_id"]
            got.append(msg)
        assert got == expected, sid


def test_show_marks_spilled_turns(cli, fixture_home):
    sessions = fixture_home / "sessions"
    doc = {"session_id": "spilled-session", "messages": [], "archived_messages": []}
    (sessions / "spilled-session.json").write_text(json.dumps(doc), encoding="utf-8")
    out = cli("--home", fixture_home, "session", "show", "spilled-session").stdout
    assert "1 spilled (waiting in the spill dir" in out
    assert "\n#s0 user" in out and "[spilled: not yet merged into the file]" in out
    assert "turn saved by the spill path" in out
    rows = {r["session_id"]: r for r in cli("--home", fixture_home, "session", "list", "--json").json()}
    assert rows["spilled-session"]["spilled_count"] == 1


def test_show_keeps_encrypted_values_opaque(cli, tmp_path):
    sessions = tmp_path / "h" / "sessions"
    sessions.mkdir(parents=True)
    doc = {"session_id": "enc", "messages": [
        {"role": "user", "content": "praisonai:enc:v1:gAAAAB-secret", "timestamp": 1.0,
         "metadata": {"__enc__": "praisonai:enc:v1:gAAAAB-meta"}}]}
    (sessions / "enc.json").write_text(json.dumps(doc), encoding="utf-8")
    out = cli("--home", tmp_path / "h", "session", "show", "enc").stdout
    assert "‹encrypted content›" in out and "[metadata encrypted]" in out
    assert "gAAAAB" not in out
    hits = cli("--home", tmp_path / "h", "session", "search", "gAAAAB", "--json").json()
    assert hits == []


def test_search_finds_active_and_archived_messages_ranked(cli, fixture_home):
    hits = cli("--home", fixture_home, "session", "search", "weather", "--json").json()
    assert [(h["session_id"], h["archived"], h["index"]) for h in hits] == [
        ("compacted-demo", True, 2), ("history_ec9d38c8", False, 0)]
    assert hits[0]["score"] == 3.0 and hits[0]["role"] == "user"
    assert hits[0]["snippet"] == "In May, check the weather too"
    assert hits[0]["highlights"] == [[18, 25]]


def test_search_is_case_insensitive_and_scores_terms(cli, fixture_home):
    hits = cli("--home", fixture_home, "session", "search", "HOTEL alfama", "--json").json()
    assert [(h["index"], h["score"]) for h in hits] == [(3, 4.0), (2, 2.0)]
    assert all(h["session_id"] == "compacted-demo" for h in hits)


def test_search_limit_and_no_hits(cli, fixture_home):
    assert len(cli("--home", fixture_home, "session", "search", "a", "--limit", "3", "--json").json()) == 3
    result = cli("--home", fixture_home, "session", "search", "zebra-unicorn", "--json")
    assert (result.exit_code, result.json()) == (0, [])


def test_search_warns_about_unreadable_files(cli, fixture_home):
    (fixture_home / "sessions" / "bad.json").write_bytes(b"{")
    result = cli("--home", fixture_home, "session", "search", "weather", "--json")
    assert result.exit_code == 0
    assert "skipped unreadable session file" in result.stderr and "bad.json" in result.stderr


def test_search_human_output_when_piped(cli, fixture_home):
    out = cli("--home", fixture_home, "session", "search", "Paris").stdout.splitlines()
    assert out[0] == "SESSION\tINDEX\tARCHIVED\tROLE\tSCORE\tSNIPPET\tSTORE\tSECTION"
    assert "history_ec9d38c8\t0\tno\tuser\t3\tWhat is the weather in Paris?\tjson\tactive" in out


# ---------------------------------------------------------------- bad inputs


def test_show_missing_session_exits_3(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "show", "no-such-session")
    assert result.exit_code == 3
    assert result.stderr == (f"praisonmem: error: no session 'no-such-session' in any store of {fixture_home / 'sessions'} "
                             "(json)\n")


def test_show_ambiguous_name_lists_the_candidates(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "show", "history_")
    assert result.exit_code == 2
    assert result.stderr.startswith("praisonmem: error: 'history_' matches several sessions: history_8fe938c0.json")
    assert result.stderr.count("\n") == 1


def test_show_ambiguous_between_raw_id_and_stem(cli, tmp_path):
    sessions = tmp_path / "h" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "a_b.json").write_text(json.dumps({"session_id": "other"}))
    (sessions / "a.b.json").write_text(json.dumps({"session_id": "another"}))
    result = cli("--home", tmp_path / "h", "session", "show", "a.b")
    assert result.exit_code == 2 and "matches several sessions: a_b.json, a.b.json" in result.stderr


@pytest.mark.parametrize("content, message", [
    (b'{"session_id": "x", "messages": [', "invalid JSON at line 1 column 34"),
    (b'{"session_id": "x\xff"}', "not valid UTF-8 (byte 17"),
    (b'[{"role": "user"}]', "top-level JSON value is an array, not an object"),
    (b'{"session_id": "x", "messages": {"0": {}}}', "'messages' is an object, not a list"),
])
def test_show_of_a_bad_file_exits_4_and_says_where(cli, tmp_path, content, message):
    sessions = tmp_path / "h" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "x.json").write_bytes(content)
    for extra in ([], ["--json"]):
        result = cli("--home", tmp_path / "h", "session", "show", "x", *extra)
        assert result.exit_code == 4
        assert result.stdout == ""
        if extra:
            error = json.loads(result.stderr)["error"]
            assert error["code"] == "corrupt" and error["exit_code"] == 4 and message in error["message"]
        else:
            assert result.stderr.startswith(f"praisonmem: error: {sessions / 'x.json'}: {message}")
    assert (sessions / "x.json").read_bytes() == content
    assert sorted(p.name for p in sessions.iterdir()) == ["x.json"]


def test_home_that_is_a_file_exits_2(cli, tmp_path):
    home = tmp_path / "home-file"
    home.write_text("not a dir")
    for args in (["session", "list"], ["session", "show", "x"], ["session", "search", "x"]):
        result = cli("--home", home, *args)
        assert result.exit_code == 2, args
        assert result.stderr == f"praisonmem: error: home {home} is not a directory (--home)\n"


def test_unreadable_session_file(cli, fixture_home, monkeypatch):
    target = fixture_home / "sessions" / "my_chat.json"
    if os.geteuid() == 0:  # root reads anything: simulate the permission error
        real_open = open

        def guarded(path, *args, **kwargs):
            if Path(path) == target:
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(jsonfile, "open", guarded, raising=False)
        real_os_open = os.open

        def guarded_fd(path, *args, **kwargs):  # the JSON store's own reader opens with os.open
            if Path(path) == target:
                raise PermissionError(13, "Permission denied", str(path))
            return real_os_open(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", guarded_fd)
    else:
        target.chmod(0)
    shown = cli("--home", fixture_home, "session", "show", "my_chat")
    assert shown.exit_code == 5
    assert shown.stderr == f"praisonmem: error: {target}: permission denied\n"
    rows = cli("--home", fixture_home, "session", "list", "--json").json()
    assert [r["error"] for r in rows if r["unreadable"]] == [f"{target}: permission denied"]


def test_archived_and_working_together_is_a_usage_error(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "show", "compacted-demo", "--archived", "--working")
    assert result.exit_code == 2 and "give one" in result.stderr


def test_empty_search_query_is_a_usage_error(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "search", "  ")
    assert (result.exit_code, result.stderr) == (2, "praisonmem: error: query must not be empty\n")


def test_the_end_of_a_session_is_show_tail_and_tail_prints_the_same_turns_in_watchs_format(cli, fixture_home):
    """``session show --tail N`` (``-n N``) prints the end of a session with its header; ``session tail``
    without -f prints what ``session watch`` starts with: the same last N turns, one block each, no header."""
    home = ("--home", fixture_home, "session")
    show = cli(*home, "show", "compacted-demo", "--tail", "2")
    assert show.exit_code == 0 and cli(*home, "show", "compacted-demo", "-n", "2").stdout == show.stdout
    turns = show.stdout.split("… 3 earlier turns not shown (--tail)\n", 1)[1]
    tail = cli(*home, "tail", "compacted-demo", "-n", "2")
    assert (tail.exit_code, tail.stdout) == (0, turns.replace("\n\n", "\n").lstrip("\n"))
    assert tail.stdout.startswith("#3 assistant · ")
    records = cli(*home, "tail", "compacted-demo", "-n", "2", "--json")
    assert [(r["session_id"], r["index"], r["role"]) for r in map(json.loads, records.stdout.splitlines())] == [
        ("compacted-demo", 3, "assistant"), ("compacted-demo", 4, "user")]
