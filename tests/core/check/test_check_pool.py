"""``check`` reads a sessions dir's files in the fork pool and reports exactly what the
serial walk reported: the same findings, in the same order, the same count of files checked."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from praisonmem.core.check import walk
from praisonmem.core.io import parallel


class SerialChecker(walk.Checker):
    """The walk as it was before (bb94b9c): entry by entry, each session file read and checked in place."""

    def sessions_dir(self, root: Path) -> None:
        from praisonmem.core import layout

        for entry in walk._entries(root):
            name = entry.name
            if name.endswith(".json") and entry.is_file():
                self.session_file(entry)
            elif name == layout.TRANSCRIPT_DB and entry.is_file():
                self.transcript_db(entry)
            elif name.endswith(".json.lock"):
                if not (root / name[: -len(".lock")]).exists():
                    self.add("info", entry, "lock file without a session (left after a delete; harmless, and "
                                            "deleting it while agents run opens a race)", "leftover.lock")
            elif ".json.corrupt-" in name:
                self.add("warning", entry, "quarantined by the library: the bytes of a session file that did not "
                                           "parse; inspect it, then delete it", "leftover.quarantined")
            elif name.endswith(".tmp"):
                self.leftover_temp(entry)


def messy_sessions(root: Path, count: int) -> Path:
    rng = random.Random(11)
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    for i in range(count):
        sid = rng.choice([f"s{i:04d}", f"other/{i}", 5, None])
        doc = {"session_id": sid, "messages": [
            rng.choice([{"role": "user", "content": "hi"}, {"role": "bogus", "content": 3}, "text",
                        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {
                            "name": "f", "arguments": "{}"}}]},
                        {"role": "tool", "tool_call_id": "zz", "content": "x"}]) for _ in range(rng.randint(0, 5))],
               "updated_at": rng.choice(["2026-01-01T00:00:00", "yesterday", 7])}
        if rng.random() < 0.2:
            del doc["messages"]
        if rng.random() < 0.1:
            doc["metadata"] = "not an object"
        name = f"s{i:04d}.json" if rng.random() < 0.9 else f"S-{i}.json"
        text = json.dumps(doc) if rng.random() < 0.9 else rng.choice(['{"messages": [', "[1, 2]", "\ufeff{}", ""])
        (sessions / name).write_text(text, encoding="utf-8")
        if rng.random() < 0.5:
            (sessions / f"{name}.lock").write_text("")
    for extra in ("gone.json.lock", "x.json.corrupt-123", "y.json.tmp", "a.json.lock", "dir.json"):
        if extra == "dir.json":
            (sessions / extra).mkdir()
        else:
            (sessions / extra).write_text("")
    return sessions


@pytest.mark.parametrize("pool", [False, True], ids=["serial", "pool"])
def test_the_pooled_check_reports_what_the_serial_walk_reported(tmp_path, monkeypatch, pool):
    sessions = messy_sessions(tmp_path / "home", 150)
    if pool:
        monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
        monkeypatch.setattr(parallel, "workers_for", lambda count: 2)
    for target in (tmp_path / "home", sessions):
        new, old = walk.Checker(), SerialChecker()
        for checker in (new, old):
            checker.path(target)
        assert new.report.files_checked == old.report.files_checked > 120
        assert [f.to_json() for f in new.report.findings] == [f.to_json() for f in old.report.findings]
        codes = {f.code for f in new.report.findings}
        assert {"parse", "leftover.lock", "leftover.quarantined", "leftover.temp", "session.type"} <= codes


def test_a_file_seen_through_another_root_is_checked_once(tmp_path):
    sessions = messy_sessions(tmp_path / "home", 20)
    new, old = walk.Checker(), SerialChecker()
    for checker in (new, old):
        checker.path(next(sessions.glob("s*.json")))
        checker.path(sessions)
    assert new.report.files_checked == old.report.files_checked
    assert [f.to_json() for f in new.report.findings] == [f.to_json() for f in old.report.findings]


def test_the_pool_starts_where_it_pays():
    assert parallel.workers_for(1999) == 1 and parallel.MIN_ITEMS == 2000
