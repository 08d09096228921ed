"""Read commands change nothing: bytes, mtimes, modes and the file list stay identical."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def snapshot(root: Path) -> dict[str, tuple]:
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            content = path.read_bytes() if path.is_file() else None
            state[str(path.relative_to(root))] = (st.st_mode, st.st_mtime_ns, st.st_size, content)
    return state


@pytest.fixture
def messy_home(fixture_home):
    sessions = fixture_home / "sessions"
    (sessions / "corrupt.json").write_bytes(b'{"session_id": "corrupt", "messages": [')
    (sessions / "latin1.json").write_bytes(b'{"session_id": "caf\xe9"}')
    (sessions / "array.json").write_bytes(b"[]")
    (sessions / "badmsgs.json").write_bytes(b'{"session_id": "badmsgs", "messages": 3}')
    (sessions / "nolock.json").write_bytes(b'{"session_id": "nolock", "messages": []}')
    return fixture_home


READ_COMMANDS = [
    ["workspace", "id"], ["workspace", "id", "--json"], ["workspace", "id", "--agent", "Legacy Bot", "--global"],
    ["workspace", "paths"], ["workspace", "paths", "--json"],
    ["session", "list"], ["session", "list", "--json"], ["session", "list", "--ndjson"],
    ["session", "list", "--scope", "legacy", "--sort", "messages"],
    ["session", "search", "weather"], ["session", "search", "a", "--json", "--limit", "0"],
] + [
    ["session", "show", name, *flags]
    for name in ("compacted-demo", "history_ec9d38c8", "531bcd72", "café-日本", "corrupt", "latin1", "array",
                 "badmsgs", "nolock", "interrupted-stream", "missing")
    for flags in ([], ["--json"], ["--archived"], ["--working", "--tail", "1"], ["--working", "--json"])
]


def test_read_commands_leave_the_home_identical(cli, messy_home):
    before = snapshot(messy_home)
    codes = set()
    for args in READ_COMMANDS:
        codes.add(cli("--home", messy_home, *args).exit_code)
    assert codes == {0, 3, 4}  # the corrupt and missing sessions were refused, the rest shown
    assert snapshot(messy_home) == before
