"""Closed and failing standard streams, really closed in the child process (a shell's ``>&-``): one line
and exit 5 (docs/exit-codes-and-json.md, "Exit codes"), no traceback, and a change that was made is said to be made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import snapshot

NOT_WRITTEN = "praisonmem: error: could not write the output: stdout is closed\n"


def _closing(*fds: int):
    def close() -> None:
        for fd in fds:
            os.close(fd)
    return close


def run_closed(*args: object, closed: tuple[int, ...], stdin: bytes | None = None, stdout=None,
               stderr=subprocess.PIPE) -> subprocess.CompletedProcess:
    """praisonmem with the descriptors in ``closed`` closed before Python starts (what ``>&-`` does); its
    stderr (unless closed) is captured."""
    return subprocess.run([sys.executable, "-m", "praisonmem", *map(str, args)], input=stdin,
                          stdout=subprocess.DEVNULL if stdout is None else stdout, stderr=stderr,
                          preexec_fn=_closing(*closed), timeout=60)


def title_of(home: Path, session: str) -> str | None:
    return json.loads((home / "sessions" / f"{session}.json").read_text(encoding="utf-8"))["metadata"].get("title")


def test_a_read_command_with_stdout_closed_is_one_line_exit_5(fixture_home):
    before = snapshot(fixture_home)
    for args in (["session", "list"], ["session", "list", "--json"], ["session", "show", "compacted-demo"],
                 ["session", "export", "compacted-demo", "-o", "-"]):
        result = run_closed("--home", fixture_home, *args, closed=(1,))
        if "--json" in args:
            assert json.loads(result.stderr) == {"error": {
                "code": "io_error", "message": "could not write the output: stdout is closed", "exit_code": 5}}
        else:
            assert result.stderr.decode() == NOT_WRITTEN, args
        assert result.returncode == 5
    assert snapshot(fixture_home) == before


def test_a_change_made_with_stdout_closed_is_reported_as_made(fixture_home):
    result = run_closed("--home", fixture_home, "session", "rename", "compacted-demo", "--title", "Lisbon",
                        closed=(1,))
    assert (result.returncode, result.stderr.decode()) == (
        5, "praisonmem: error: set the title of 'compacted-demo' to 'Lisbon', but could not write the result: "
           "stdout is closed\n")
    assert title_of(fixture_home, "compacted-demo") == "Lisbon"
    moved = run_closed("--home", fixture_home, "session", "rename", "compacted-demo", "lisbon", "--force",
                       "--json", closed=(1,))
    error = json.loads(moved.stderr)["error"]
    assert (moved.returncode, error["code"], error["exit_code"]) == (5, "io_error", 5)
    assert error["message"] == ("renamed 'compacted-demo' → 'lisbon' (compacted-demo.json → lisbon.json), but "
                                "could not write the result: stdout is closed")
    assert (fixture_home / "sessions" / "lisbon.json").exists()
    assert not (fixture_home / "sessions" / "compacted-demo.json").exists()


def test_a_full_stdout_is_one_line_exit_5(fixture_home):
    with open("/dev/full", "wb") as full:
        result = run_closed("--home", fixture_home, "session", "list", closed=(), stdout=full)
    assert (result.returncode, result.stderr.decode()) == (
        5, "praisonmem: error: could not write the output: stdout: no space left on device\n")


def test_closed_stdin_is_one_line_exit_5(fixture_home, tmp_path):
    before = snapshot(fixture_home)
    result = run_closed("--home", fixture_home, "session", "import", "-", closed=(0,))
    assert (result.returncode, result.stderr.decode()) == (5, "praisonmem: error: standard input is closed\n")
    with open(tmp_path / "w", "wb") as write_only:  # a stdin that cannot be read from
        result = subprocess.run([sys.executable, "-m", "praisonmem", "--home", str(fixture_home), "session",
                                 "import", "-"], stdin=write_only, capture_output=True, timeout=60)
    assert (result.returncode, result.stderr.decode()) == (5, "praisonmem: error: standard input is closed\n")
    assert snapshot(fixture_home) == before


@pytest.mark.parametrize("closed", [(2,), (1, 2)])
def test_closed_stderr_keeps_the_exit_code(fixture_home, closed):
    usage = run_closed("--home", fixture_home, "session", "list", "--bogus", closed=closed, stderr=None)
    assert usage.returncode == 2
    listing = run_closed("--home", fixture_home, "session", "list", closed=closed, stderr=None)
    assert listing.returncode == (5 if 1 in closed else 0)


def test_a_full_stderr_keeps_the_exit_code(fixture_home):
    with open("/dev/full", "wb") as full:
        usage = run_closed("--home", fixture_home, "session", "list", "--bogus", closed=(), stderr=full)
        missing = run_closed("--home", fixture_home, "session", "show", "nope", closed=(), stderr=full)
    assert (usage.returncode, missing.returncode) == (2, 3)


def test_no_file_praisonmem_opens_takes_the_closed_descriptor(fixture_home, tmp_path):
    """With fd 1 closed, the first file opened would be fd 1; /dev/null holds it instead, so nothing printed
    can land in a file being written."""
    probe = tmp_path / "probe.py"
    probe.write_text("import os, sys\nfrom praisonmem.cli import streams\nstreams.stand_in()\n"
                     "fd = os.open(os.devnull, os.O_RDONLY)\nprint(fd, os.path.realpath(f'/proc/self/fd/1'), "
                     "file=sys.stderr)\n", encoding="utf-8")
    result = subprocess.run([sys.executable, str(probe)], stderr=subprocess.PIPE, preexec_fn=_closing(0, 1),
                            timeout=60, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert result.returncode == 0, result.stderr
    fd, target = result.stderr.decode().split()
    assert int(fd) > 2 and target == "/dev/null"
