"""A huge session is shown, exported, retitled and renamed in memory bounded by its size (at most 3 times it,
the process's own peak RSS, start-up included), with the output the whole-document path gives."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from praisonmem.core.paths import resolve
from tests.conftest import REPO

WORDS = "weather hotel lisbon paris agent memory session tool answer question café 日本".split()
SIZE = 40 << 20  # large enough that the interpreter's own ~25 MB is small beside 3 times it

PEAK = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
"""


@pytest.fixture(scope="module")
def huge(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("huge") / "home"
    (home / "sessions").mkdir(parents=True)
    rng = random.Random(27)
    messages = [{"role": "user" if i % 2 == 0 else "assistant",
                 "content": " ".join(rng.choice(WORDS) for _ in range(50)), "timestamp": 1796000000.0 + i,
                 "metadata": {}} for i in range(SIZE // 440)]
    messages[-3]["tool_calls"] = [{"id": "call-1", "type": "function",
                                   "function": {"name": "weather", "arguments": "{\"city\": \"Lisbon\"}"}}]
    messages[-2] = {"role": "tool", "content": "sunny", "tool_call_id": "call-1", "timestamp": 1.0, "metadata": {}}
    doc = {"session_id": "big", "messages": messages, "created_at": "2026-11-01T00:00:00+00:00",
           "updated_at": "2026-11-02T00:00:00+00:00", "agent_name": "Bench", "user_id": "u",
           "metadata": {"title": "bench"}}
    (home / "sessions" / "big.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    return home


def peak(home: Path, *args: str) -> int:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PRAISONMEM_CACHE": "false", "COLUMNS": "120"}
    done = subprocess.run([sys.executable, "-c", PEAK, sys.executable, "-m", "praisonmem", "--home", str(home), *args],
                          capture_output=True, text=True, env=env, timeout=600)
    code, rss = done.stdout.split()
    assert code == "0", done.stderr
    return int(rss)


@pytest.mark.parametrize("args", [
    ["session", "show", "big", "--tail", "5"],
    ["session", "show", "big", "--tail", "5", "--json"],
    ["session", "export", "big", "-o", "{out}/big.json"],
    ["session", "export", "big", "--format", "jsonl", "-o", "{out}/big.jsonl"],
    ["session", "export", "big", "--format", "markdown", "-o", "{out}/big.md"],
], ids=lambda a: " ".join(a[2:4]) + (" --json" if "--json" in a else ""))
def test_a_huge_session_is_read_in_memory_bounded_by_its_size(huge, tmp_path, args):
    size = (huge / "sessions" / "big.json").stat().st_size
    assert peak(huge, *[a.format(out=tmp_path) for a in args]) <= 3 * size


def test_a_huge_session_is_retitled_then_renamed_in_memory_bounded_by_its_size(huge, tmp_path):
    size = (huge / "sessions" / "big.json").stat().st_size
    stored = json.loads((huge / "sessions" / "big.json").read_text(encoding="utf-8"))
    assert peak(huge, "session", "rename", "big", "--title", "A huge one") <= 3 * size
    assert peak(huge, "session", "rename", "big", "huge-renamed", "--force") <= 3 * size
    assert not (huge / "sessions" / "big.json").exists()
    text = (huge / "sessions" / "huge-renamed.json").read_text(encoding="utf-8")
    renamed = json.loads(text)
    stamp = renamed["updated_at"]
    expected = {**stored, "session_id": "huge-renamed", "updated_at": stamp,
                "metadata": {"title": "A huge one"}}
    assert text == json.dumps(expected, indent=2, ensure_ascii=False)
    assert resolve(huge).sessions_dir.is_dir()
