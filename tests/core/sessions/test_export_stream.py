"""``session export`` streams: one session at a time, byte for byte the document the
whole-payload export wrote, memory bounded by the largest session rather than the home, and an unreadable
session still stops the export with nothing written."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from praisonmem.core.io.safetext import json_safe
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import transfer
from tests.helpers import export_text, exported, snapshot


def whole_payload(text: str, docs: list[dict]) -> str:
    """What the export wrote before it streamed: the payload dumped in one piece (its own exported_at)."""
    head = json.loads(text)
    payload = {"version": head["version"], "format": head["format"], "praisonmem_version": head["praisonmem_version"],
               "exported_at": head["exported_at"], "sessions": docs}
    return json_safe(json.dumps(payload, indent=2, ensure_ascii=False)) + "\n"


def test_the_streamed_json_is_the_whole_payload_byte_for_byte(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "export", "--all")
    assert result.exit_code == 0
    docs = [doc for _, _, doc in exported(resolve(fixture_home), [], everything=True)]
    assert len(docs) > 5 and result.stdout == whole_payload(result.stdout, docs)


def test_no_sessions_is_an_empty_list(cli, tmp_path):
    (tmp_path / "h" / "sessions").mkdir(parents=True)
    result = cli("--home", tmp_path / "h", "session", "export", "--all")
    assert result.exit_code == 0 and result.stdout == whole_payload(result.stdout, [])
    assert '"sessions": []\n}\n' in result.stdout


def test_markdown_and_jsonl_stream_the_same_text(fixture_home):
    paths = resolve(fixture_home)
    docs = exported(paths, [], everything=True)
    lines = [line for file, sid, doc in docs for line in transfer.markdown_lines(file, sid, doc)]
    assert export_text("markdown", docs) == "\n".join(lines).rstrip("\n") + "\n"
    assert export_text("markdown", []) == "\n"
    records = [json.loads(line) for line in export_text("jsonl", docs).splitlines()]
    assert len(records) == sum(len(d.get("messages", [])) + len(d.get("archived_messages", []))
                               for _, _, d in docs)


@pytest.mark.parametrize("target", ["file", "stdout"])
def test_an_unreadable_session_still_stops_the_export_with_nothing_written(cli, fixture_home, tmp_path, target):
    (fixture_home / "sessions" / "zzz-cut.json").write_text('{"session_id": "zzz", "messages": [')
    out = tmp_path / "out.json"
    before = snapshot(fixture_home)
    result = cli("--home", fixture_home, "session", "export", "--all", *(["-o", out] if target == "file" else []))
    assert result.exit_code == 4 and result.stdout == "" and "zzz-cut.json" in result.stderr
    assert not out.exists() and list(tmp_path.glob(".out.json.*")) == []
    assert snapshot(fixture_home) == before


def peak_kb(args: list[str]) -> int:
    """The peak RSS of praisonmem's process as /usr/bin/time reports it (not inflated by this test's pages)."""
    report = Path(os.environ["HOME"]) / "time.txt"
    done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(report), sys.executable, "-m", "praisonmem",
                           *args], capture_output=True, text=True, env={**os.environ, "PRAISONMEM_CACHE": "false"})
    assert done.returncode == 0, done.stderr
    return int(report.read_text().split()[-1])


def test_export_all_memory_follows_the_largest_session_not_the_home(tmp_path):
    rng = random.Random(12)
    words = "lisbon paris café 日本 hotel weather".split()
    homes = {}
    for name, count in (("few", 10), ("many", 60)):  # ~1 MB sessions: a 10 MB home and a 60 MB one
        home = homes[name] = tmp_path / name
        (home / "sessions").mkdir(parents=True)
        for i in range(count):
            doc = {"session_id": f"s{i}", "messages": [{"role": "user", "content": " ".join(
                rng.choice(words) for _ in range(60)), "timestamp": 1.0 + j, "metadata": {}} for j in range(2500)]}
            (home / "sessions" / f"s{i}.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False))
    largest = max(p.stat().st_size for p in (homes["many"] / "sessions").glob("*.json"))
    for extra in (["-o", "{out}/all.json"], ["--format", "jsonl", "-o", "{out}/all.jsonl"],
                  ["--format", "markdown", "-o", "{out}/all.md"]):
        peaks = {name: peak_kb(["--home", str(home), "session", "export", "--all",
                                *[a.format(out=tmp_path) for a in extra]]) * 1024 for name, home in homes.items()}
        # Before streaming, 50 more sessions cost ~50 times one session's memory (~500 MB); now (almost) nothing.
        assert peaks["many"] - peaks["few"] < 5 * largest, (extra, peaks, largest)
    assert len(json.loads((tmp_path / "all.json").read_text())["sessions"]) == 60
    shutil.rmtree(homes["many"])


def test_characters_json_leaves_raw_are_escaped_as_before(cli, tmp_path):
    """DEL, C1, line separators and bidi controls become \\u escapes (the same data), in the fast path too."""
    sessions = tmp_path / "h" / "sessions"
    sessions.mkdir(parents=True)
    doc = {"session_id": "odd", "messages": [{"role": "user", "content": "a\x7f\x85\u2028\u202e\u2066 é 日本 \u2069"}]}
    (sessions / "odd.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False))
    result = cli("--home", tmp_path / "h", "session", "export", "--all")
    assert result.exit_code == 0 and result.stdout == whole_payload(result.stdout, [doc])
    assert "\\u2028\\u202e\\u2066" in result.stdout and json.loads(result.stdout)["sessions"] == [doc]
