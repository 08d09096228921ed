"""A backup taken while the real library appends to sessions holds only whole, parseable sessions."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from tests.compat.conftest import start_library

WRITER = """
    import time
    from praisonaiagents.session.store import DefaultSessionStore
    from praisonaiagents.paths import get_sessions_dir
    store = DefaultSessionStore(session_dir=str(get_sessions_dir()))
    print("start", flush=True)
    for i in range(400):
        for sid in ("live-a", "live-b", "my_chat"):
            store.add_message(sid, "user", f"turn {i} " + "x" * 2000)
    print("done", flush=True)
"""


def test_backups_during_live_writes_hold_only_parseable_sessions(cli, fixture_home, tmp_path):
    writer = start_library(WRITER, home=fixture_home)
    assert writer.stdout.readline().strip() == "start"
    archives = []
    while writer.poll() is None and len(archives) < 8:
        result = cli("--home", fixture_home, "backup", "create", "-o", tmp_path / "out", "--include", "sessions",
                     "--json")
        assert result.exit_code == 0, result.stderr
        archives.append(Path(result.json()["path"]))
    writer.communicate(timeout=120)
    assert len(archives) >= 2
    live_seen = 0
    for archive in archives:
        assert cli("backup", "verify", archive).exit_code == 0
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.name.startswith("home/sessions/") and member.name.endswith(".json"):
                    doc = json.loads(tar.extractfile(member).read())
                    live_seen += member.name.endswith(("live-a.json", "live-b.json"))
                    assert isinstance(doc["messages"], list)
    assert live_seen > 0
