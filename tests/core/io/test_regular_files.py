"""Data files are read only when they are regular files: nothing blocks, nothing is read without end, and a link
to a device is looked through, never opened (opening some devices acts: a watchdog arms, a tape rewinds)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from praisonmem.core.errors import IOFailure, NotFound, NotRegularFile
from praisonmem.core.io import inputfile, jsonfile
from tests.conftest import REPO


CHILD = """
import json, os, sys
from praisonmem.core.errors import PraisonMemError
from praisonmem.core.io import jsonfile
opened = []
real = os.open

def recording(path, flags, *args, **kwargs):
    fd = real(path, flags, *args, **kwargs)
    opened.append(os.readlink(f"/proc/self/fd/{fd}"))
    return fd

os.open = recording
try:
    jsonfile.read_bytes(sys.argv[1])
    outcome = ["read"]
except PraisonMemError as exc:
    outcome = [type(exc).__name__, exc.exit_code, exc.message]
print(json.dumps({"outcome": outcome, "opened": opened}))
"""


def _capped() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def read_in_a_child(path: Path) -> dict:
    """``jsonfile.read_bytes(path)`` in a process of its own, with a deadline and a memory cap (a regression that
    blocks or reads without end fails, instead of hanging the suite or filling the machine), and what it opened."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=20,
                          preexec_fn=_capped, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_link_to_a_device_is_refused_without_opening_the_device(tmp_path):
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    assert read_in_a_child(link) == {"outcome": ["NotRegularFile", 4, f"{link}: is a device, not a regular file"],
                                     "opened": []}


def test_a_pipe_is_refused_without_waiting_for_a_writer(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "pipe-link.json").symlink_to("pipe.json")
    for path in (tmp_path / "pipe.json", tmp_path / "pipe-link.json"):
        assert read_in_a_child(path)["outcome"] == ["NotRegularFile", 4,
                                                    f"{path}: is a named pipe, not a regular file"]


def test_a_link_to_a_regular_file_is_read(tmp_path):
    (tmp_path / "real.json").write_bytes(b"{}")
    (tmp_path / "link.json").symlink_to("real.json")
    assert read_in_a_child(tmp_path / "link.json") == {"outcome": ["read"], "opened": [str(tmp_path / "real.json")]}


def test_a_socket_is_refused(tmp_path):
    path = tmp_path / "s.json"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        with pytest.raises(NotRegularFile, match="is a socket, not a regular file"):
            jsonfile.read_bytes(path)
    finally:
        server.close()


def test_a_name_no_file_can_have_is_not_found(tmp_path):
    for name in ("a\ud800.json", "a\x00b.json"):
        with pytest.raises(NotFound) as info:
            jsonfile.read_bytes(tmp_path / name)
        assert info.value.message.endswith(": no such file")


def test_input_files_keep_their_usage_error(tmp_path):
    (tmp_path / "zero").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "pipe")
    for path, kind in ((tmp_path / "zero", "a device"), (tmp_path / "pipe", "a named pipe"),
                       (tmp_path, "a directory")):
        with pytest.raises(Exception) as info:
            inputfile.read_regular(path)
        assert info.value.exit_code == 2 and f"is {kind}, not a regular file" in info.value.message
    with pytest.raises(IOFailure, match="is a directory, not a file"):
        jsonfile.read_bytes(tmp_path)
    assert Path("/dev/zero").is_char_device()
