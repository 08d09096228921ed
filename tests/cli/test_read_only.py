"""Read commands change nothing: bytes, mtimes, modes and the file list stay identical."""

from __future__ import annotations

import pytest

from tests.helpers import snapshot


@pytest.fixture
def messy_home(fixture_home):
    sessions = fixture_home / "sessions"
    (sessions / "corrupt.json").write_bytes(b'{"session_id": "corrupt", "messages": [')
    (sessions / "latin1.json").write_bytes(b'{"session_id": "caf\xe9"}')
    (sessions / "array.json").write_bytes(b"[]")
    (sessions / "badmsgs.json").write_bytes(b'{"session_id": "badmsgs", "messages": 3}')
    (sessions / "nolock.json").write_bytes(b'{"session_id": "nolock", "messages": []}')
    return fixture_home


SHOWN = {"compacted-demo": 0, "history_ec9d38c8": 0, "531bcd72": 0, "café-日本": 0, "nolock": 0,
         "interrupted-stream": 0,
         "corrupt": 4, "latin1": 4, "array": 4, "badmsgs": 4,  # refused: they do not parse as sessions
         "missing": 3}
READ_COMMANDS = [
    (["workspace", "id"], 0), (["workspace", "id", "--json"], 0),
    (["workspace", "id", "--agent", "Legacy Bot", "--global"], 0),
    (["workspace", "paths"], 0), (["workspace", "paths", "--json"], 0),
    (["session", "list"], 0), (["session", "list", "--json"], 0), (["session", "list", "--ndjson"], 0),
    (["session", "list", "--scope", "legacy", "--sort", "messages"], 0),
    (["session", "search", "weather"], 0), (["session", "search", "a", "--json", "--limit", "0"], 0),
    (["session", "search", "  "], 2),
    (["usage"], 0), (["usage", "--by", "session", "--json"], 0), (["usage", "--csv", "--by", "week"], 0),
] + [
    (["session", "show", name, *flags], code)
    for name, code in SHOWN.items()
    for flags in ([], ["--json"], ["--archived"], ["--working", "--tail", "1"], ["--working", "--json"])
]


@pytest.mark.parametrize("args, code", READ_COMMANDS, ids=lambda v: " ".join(v) if isinstance(v, list) else str(v))
def test_a_read_command_exits_as_documented_and_leaves_the_home_identical(cli, messy_home, args, code):
    before = snapshot(messy_home)
    result = cli("--home", messy_home, *args)
    assert result.exit_code == code, result.stderr
    assert snapshot(messy_home) == before


# ---------------------------------------------------------------- a gateway home: the JSON files and sessions.db

GATEWAY_READS = [
    (["session", "list"], 0), (["session", "list", "--json", "--limit", "0"], 0), (["session", "list", "--ndjson"], 0),
    (["session", "list", "--store", "sessions.db"], 0), (["session", "list", "--store", "json", "--json"], 0),
    (["usage", "--by", "session", "--json"], 0), (["usage", "--store", "sessions.db", "--csv"], 0),
    (["session", "list", "--sort", "messages", "--agent", "Billing Bot"], 0),
    (["session", "show", "gw-1"], 0), (["session", "show", "gw-1", "--json"], 0),
    (["session", "show", "gw-1", "--tail", "1", "--json"], 0), (["session", "show", "agent-chat", "--working"], 0),
    (["session", "show", "gw-legacy"], 2), (["session", "show", "gw-legacy", "--store", "json"], 0),
    (["session", "show", "gw-legacy", "--store", "sessions.db", "--archived"], 0), (["session", "show", "nope"], 3),
    (["session", "search", "refund"], 0), (["session", "search", "PLANTED-TOKEN-DBONLY", "--json"], 0),
    (["session", "search", "refund", "--store", "sessions.db", "--ndjson"], 0),
    (["session", "export", "gw-1"], 0), (["session", "export", "--all", "--format", "markdown"], 0),
    (["session", "export", "--all", "--store", "sessions.db", "--format", "jsonl"], 0),
    (["session", "rename", "agent-chat-1", "--title", "x", "--dry-run"], 0),
    (["session", "rename", "agent-chat-1", "renamed", "--dry-run", "--force"], 0),
    (["session", "delete", "gw-1", "--dry-run"], 0), (["session", "prune", "--older-than", "1d", "--dry-run"], 4),
    (["session", "prune", "--older-than", "1d", "--keep", "1", "--dry-run"], 0),
    # exit 0: no error (enc-1's encrypted tool calls are known as such), the warnings are not --strict
    (["check", "--json"], 0), (["workspace", "id", "--agent", "Support Bot"], 0),
]
SIDECARS = ("sessions/sessions.db-wal", "sessions/sessions.db-shm")


def wal_state_of(gh, state):
    """Put the fixture's sessions.db into ``state``; a live writer is yielded as a context."""
    from contextlib import nullcontext

    from tests.sqlitestate import crashed_wal, live_wal

    change = ("UPDATE sessions SET data = replace(data, 'Done, your', 'Done WAL-ONLY-TOKEN, your') WHERE session_id = ?",
              "agent-chat-1")
    if state == "live":
        return live_wal(gh.db, *change)
    if state.startswith("crashed"):
        crashed_wal(gh.db, *change)
        if state == "crashed-without-shm":
            (gh.sessions / "sessions.db-shm").unlink()
    return nullcontext()


@pytest.mark.parametrize("state", ["closed", "crashed", "crashed-without-shm", "live"])
@pytest.mark.parametrize("args, code", GATEWAY_READS, ids=lambda v: " ".join(v) if isinstance(v, list) else str(v))
def test_a_read_command_leaves_a_gateway_home_and_its_database_sidecars_identical(cli, gateway_home, state, args,
                                                                                   code):
    with wal_state_of(gateway_home, state):
        before = snapshot(gateway_home.home)
        result = cli("--home", gateway_home.home, *args)
        after = snapshot(gateway_home.home)
    assert result.exit_code == code, result.stderr
    if state != "closed":  # the states under test are really there
        assert all(name in after for name in SIDECARS if not (state == "crashed-without-shm" and "shm" in name))
    if state == "live":  # a live reader writes its read marks into the mmap'd -shm (SQLite's WAL index)
        shm_after, shm_before = after.pop(SIDECARS[1]), before.pop(SIDECARS[1])
        assert (shm_after[0], shm_after[2]) == (shm_before[0], shm_before[2])  # its mode and size
    assert after == before


@pytest.mark.parametrize("state", ["crashed", "live"])
def test_reads_see_what_the_writer_committed_to_the_wal(cli, gateway_home, state):
    with wal_state_of(gateway_home, state):
        hits = cli("--home", gateway_home.home, "session", "search", "WAL-ONLY-TOKEN", "--json").json()
    assert [(h["session_id"], h["store"]) for h in hits] == [("agent-chat-1", "sessions.db")]
