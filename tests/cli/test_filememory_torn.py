"""FileMemory files are read under flock(LOCK_SH) on the file, as the library's readers do, so a
praisonaiagents ≤1.6.163 writer rewriting a file in place is never caught half-written by backups,
memory read commands or check; a file that still does not parse is reported, never passed off as
good."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

ITEMS = 40

# What praisonaiagents <=1.6.163 FileMemory._write_json does to a file, slowed down (its json.dump
# writes many small pieces while it holds the lock):
# * "r+": open r+, flock(LOCK_EX) on the file itself, truncate, write slowly, unlock;
# * "w": 1.6.157's exact order: open("w") truncates before the lock is taken, and the last buffered
#   piece is flushed by close() after the unlock (both gaps widened to a few ms so a test meets them).
WRITER = r"""
import fcntl, json, sys, time
path, mode, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])

def version(n):
    return [{"id": f"{n}-{i}", "content": f"version {n} item {i} " + "x" * 300, "metadata": {},
             "created_at": 1.0, "updated_at": 1.0, "access_count": 0, "importance": 0.5} for i in range(40)]

print("start", flush=True)
n, end = 0, time.monotonic() + seconds
while time.monotonic() < end:
    n += 1
    text = json.dumps(version(n), indent=2, ensure_ascii=False)
    pieces = [text[i:i + 1000] for i in range(0, len(text), 1000)]
    if mode == "r+":
        with open(path, "r+", encoding="utf-8") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            f.seek(0)
            f.truncate()
            for piece in pieces:
                f.write(piece)
                f.flush()
                time.sleep(0.004)
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    else:
        with open(path, "w", encoding="utf-8") as f:
            time.sleep(0.003)
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            for piece in pieces[:-1]:
                f.write(piece)
                f.flush()
                time.sleep(0.004)
            f.write(pieces[-1])
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
            time.sleep(0.003)
    time.sleep(0.02)
print("wrote", n, flush=True)
"""


def version(n: int) -> list[dict]:
    return [{"id": f"{n}-{i}", "content": f"version {n} item {i} " + "x" * 300, "metadata": {},
             "created_at": 1.0, "updated_at": 1.0, "access_count": 0, "importance": 0.5} for i in range(ITEMS)]


def assert_whole(raw: bytes, where: str) -> None:
    """One complete version the writer wrote: parses, 40 items, all of the same version."""
    items = json.loads(raw)
    assert len(items) == ITEMS and len({i["id"].split("-")[0] for i in items}) == 1, where


@pytest.fixture
def memory(tmp_path) -> Path:
    user = tmp_path / "memory" / "u"
    user.mkdir(parents=True)
    (user / "short_term.json").write_text(json.dumps(version(0), indent=2))
    (tmp_path / "home").mkdir()
    return tmp_path / "memory"


def start_writer(target: Path, mode: str, seconds: float) -> subprocess.Popen:
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), str(target), mode, str(seconds)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert writer.stdout.readline() == "start\n"
    return writer


@pytest.fixture(params=["r+", "w"])
def writer(request, memory):
    """An old-release writer rewriting short_term.json in place, for as long as the test runs."""
    proc = start_writer(memory / "u" / "short_term.json", request.param, 60)
    yield proc
    proc.terminate()
    proc.communicate(timeout=30)


def test_backups_during_an_in_place_writer_never_hold_a_torn_file(cli, memory, tmp_path, writer):
    archives = []
    for _ in range(10):
        made = cli("--home", tmp_path / "home", "--memory-dir", memory, "backup", "create", "-o", tmp_path / "out",
                   "--include", "memory", "--json")
        assert made.exit_code == 0, made.stderr
        archives.append(Path(made.json()["path"]))
    assert writer.poll() is None  # it was writing all along
    for archive in archives:
        assert cli("backup", "verify", archive).exit_code == 0
        with tarfile.open(archive) as tar:
            assert_whole(tar.extractfile("memory/u/short_term.json").read(), archive.name)


def test_memory_commands_during_an_in_place_writer_never_see_a_torn_file(cli, memory, writer):
    for _ in range(10):
        listed = cli("--memory-dir", memory, "memory", "list", "--type", "short", "--user-id", "u", "--json")
        assert listed.exit_code == 0, listed.stderr
        assert len(listed.json()) == ITEMS
        found = cli("--memory-dir", memory, "memory", "search", "item 39", "--user-id", "u", "--json")
        assert found.exit_code == 0, found.stderr
        assert found.json()[0]["item"]["id"].endswith("-39") and len(found.json()) == 10
    assert writer.poll() is None


def test_check_during_an_in_place_writer_never_reports_a_torn_file(cli, memory, writer):
    for _ in range(10):
        checked = cli("check", memory, "--json")
        assert (checked.exit_code, checked.json()["findings"]) == (0, [])
    assert writer.poll() is None


def test_a_file_that_never_parses_is_archived_as_damaged_and_never_passed_off_as_good(cli, memory, tmp_path):
    older = cli("--home", tmp_path / "home", "--memory-dir", memory, "backup", "create", "-o", tmp_path / "out",
                "--include", "memory", "--json").json()["path"]
    broken = memory / "u" / "long_term.json"
    broken.write_bytes(b'[{"id": "a", "content": "trunc')
    made = cli("--home", tmp_path / "home", "--memory-dir", memory, "backup", "create", "-o", tmp_path / "out",
               "--include", "memory", "--keep", "1", "--json")
    assert made.exit_code == 1
    result = made.json()
    reason = "invalid JSON: unterminated string starting at line 1 column 25"
    assert result["removed"] == [] and Path(older).exists()
    assert result["damaged"] == [{"path": "memory/u/long_term.json", "file": str(broken), "problem": reason}]
    assert made.stderr == (
        f"praisonmem: warning: {broken} did not parse even after re-reading it ({reason}): archived as it is "
        "and marked damaged\n"
        "praisonmem: warning: backup written but incomplete, so no old backup was deleted\n")
    archive = Path(result["path"])
    with tarfile.open(archive) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())
        assert tar.extractfile("memory/u/long_term.json").read() == broken.read_bytes()
    assert next(f for f in manifest["files"] if f["path"] == "memory/u/long_term.json")["damaged"] == reason
    verified = cli("backup", "verify", archive, "--json")
    assert verified.exit_code == 1 and verified.json()["problems"] == [
        {"path": "memory/u/long_term.json", "problem": f"did not parse when it was backed up: {reason}"}]
    restored = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes", "--json")
    assert restored.exit_code == 1
    rows = {r["path"]: r for r in restored.json()}
    assert rows["memory/u/long_term.json"]["action"] == "failed"
    assert rows["memory/u/long_term.json"]["detail"] == (
        f"did not parse when it was backed up: {reason}; not restored (tar -xzf the archive to see it)")
    assert rows["memory/u/short_term.json"]["action"] == "restored"
    assert not (tmp_path / "to" / "memory/u/long_term.json").exists()


def hold_exclusive(path: Path, seconds: float) -> subprocess.Popen:
    code = ("import fcntl, sys, time\nf = open(sys.argv[1], 'r+')\nfcntl.flock(f.fileno(), fcntl.LOCK_EX)\n"
            "print('locked', flush=True)\ntime.sleep(float(sys.argv[2]))\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(path), str(seconds)], stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout.readline() == "locked\n"
    return holder


def test_a_writer_that_holds_its_lock_too_long_is_waited_for_only_until_the_lock_timeout(cli, memory, tmp_path):
    target = memory / "u" / "short_term.json"
    holder = hold_exclusive(target, 30)
    try:
        started = time.monotonic()
        result = cli("--lock-timeout", "0.5", "--memory-dir", memory, "memory", "list", "--user-id", "u")
        waited = time.monotonic() - started
        backup = cli("--lock-timeout", "0.5", "--home", tmp_path / "home", "--memory-dir", memory, "backup",
                     "create", "-o", tmp_path / "out", "--include", "memory")
        report = cli("--lock-timeout", "0.5", "check", memory, "--json")
    finally:
        holder.kill()
        holder.wait()
    message = f"{target}: a writer has held it locked for over 0.5s; not read"
    assert (result.exit_code, result.stderr) == (4, f"praisonmem: error: {message}\n")
    assert 0.5 <= waited < 3
    assert (backup.exit_code, backup.stderr) == (4, f"praisonmem: error: {message}\n")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    assert report.exit_code == 1
    assert [(f["severity"], f["code"], f["message"]) for f in report.json()["findings"]] == [
        ("error", "memory.locked", "a writer has held it locked for over 0.5s; not read")]


def test_a_file_caught_mid_rewrite_is_read_again_until_it_parses(memory):
    from praisonmem.core.memory import filememory_io

    target = memory / "u" / "short_term.json"
    target.write_bytes(b"")  # as an old writer leaves it between open("w") and its lock

    def finish() -> None:
        time.sleep(0.12)
        target.write_text(json.dumps(version(7)))

    thread = threading.Thread(target=finish)
    thread.start()
    raw, doc = filememory_io.read_settled(target, 5)
    thread.join()
    assert doc == version(7) and raw == target.read_bytes()
