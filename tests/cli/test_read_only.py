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
