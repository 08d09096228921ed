"""``-o FILE``: one rule for every command that writes an output file.

``-`` is stdout; character devices and FIFOs (and links to them) are written
through, never replaced; a regular file (or a new name) is replaced atomically,
0600; anything else (a directory, a socket, a link to a file or to nothing) is
refused with exit 4 and left as it is.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import socket
import stat
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest


@pytest.fixture
def exporters(fixture_home, db):
    """Each command that writes an export to ``-o``, as a function of the target."""
    return {
        "session export": lambda target: ["--home", fixture_home, "session", "export", "my_chat", "-o", target],
        "session export markdown": lambda target: ["--home", fixture_home, "session", "export", "my_chat",
                                                   "--format", "markdown", "-o", target],
        "upsonic export": lambda target: ["upsonic", "export", "--db", db, "--users", "-o", target],
    }


COMMANDS = ["session export", "session export markdown", "upsonic export"]


def _expected(cli, exporters, name: str) -> bytes:
    """What the export holds, written to stdout with ``-o -`` (``exported_at`` aside)."""
    result = cli(*exporters[name]("-"))
    assert result.exit_code == 0, result.stderr
    return result.stdout.encode("utf-8")


def _comparable(name: str, data: bytes):
    if name == "session export markdown":
        return data
    doc = json.loads(data)
    doc.pop("exported_at", None)
    return doc


@pytest.mark.parametrize("name", COMMANDS)
def test_dash_is_stdout_and_creates_no_file_named_dash(cli, exporters, name, tmp_path):
    result = cli(*exporters[name]("-"))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith("\n") and result.stderr == ""
    assert not Path("-").exists()
    file_result = cli(*exporters[name](tmp_path / "out"))
    assert file_result.exit_code == 0
    assert _comparable(name, (tmp_path / "out").read_bytes()) == _comparable(name, result.stdout.encode())


@pytest.mark.parametrize("name", COMMANDS)
def test_a_fifo_is_written_through_not_replaced(cli, exporters, name, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = cli(*exporters[name](fifo))
    reader.join(10)
    assert result.exit_code == 0, result.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert _comparable(name, received[0]) == _comparable(name, _expected(cli, exporters, name))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "home" and p.name != "store") == ["pipe"]


@pytest.fixture
def char_device(tmp_path) -> Path:
    """A character device: a private copy of /dev/null when root (so a bug cannot replace the real one),
    else /dev/null itself (which an ordinary user cannot replace)."""
    if os.geteuid() != 0:
        return Path("/dev/null")
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return node


@pytest.mark.parametrize("name", COMMANDS)
def test_a_character_device_is_written_through_not_replaced(cli, exporters, name, char_device):
    assert cli(*exporters[name](char_device)).exit_code == 0
    assert stat.S_ISCHR(char_device.lstat().st_mode)


@pytest.mark.parametrize("name", COMMANDS)
def test_a_link_to_a_device_is_written_through(cli, exporters, name, tmp_path, char_device):
    link = tmp_path / "to-null"
    link.symlink_to(char_device)
    assert cli(*exporters[name](link)).exit_code == 0
    assert link.is_symlink() and stat.S_ISCHR(char_device.lstat().st_mode)


def _refusal(kind: str, tmp_path: Path) -> tuple[Path, str]:
    if kind == "directory":
        target = tmp_path / "a-dir"
        target.mkdir()
        return target, "is a directory, not a file"
    if kind == "link to a file":
        (tmp_path / "victim.txt").write_text("keep me\n")
        target = tmp_path / "link"
        target.symlink_to(tmp_path / "victim.txt")
        return target, "is a symbolic link to a file"
    if kind == "dangling link":
        target = tmp_path / "link"
        target.symlink_to(tmp_path / "nowhere" / "x")
        return target, "is a symbolic link to a missing file"
    target = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(target))
    return target, "is a socket"


REFUSED = ["directory", "link to a file", "dangling link", "socket"]


@pytest.mark.parametrize("kind", REFUSED)
@pytest.mark.parametrize("name", COMMANDS)
def test_other_targets_are_refused_with_exit_4_and_left_alone(cli, exporters, name, kind, tmp_path):
    target, reason = _refusal(kind, tmp_path)
    before = target.lstat()
    result = cli(*exporters[name](target))
    assert result.exit_code == 4
    assert result.stdout == ""
    assert result.stderr.startswith(f"praisonmem: error: {target}: {reason}")
    assert result.stderr.endswith("; nothing written\n") and result.stderr.count("\n") == 1
    after = target.lstat()
    assert (after.st_ino, after.st_mode, after.st_mtime_ns) == (before.st_ino, before.st_mode, before.st_mtime_ns)
    if kind == "directory":
        assert list(target.iterdir()) == []
    if kind == "link to a file":
        assert (tmp_path / "victim.txt").read_text() == "keep me\n"
    if kind == "dangling link":
        assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("name", COMMANDS)
def test_an_empty_file_name_is_a_usage_error(cli, exporters, name):
    result = cli(*exporters[name](""))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "praisonmem: error: the output file name is empty (give a file name, or - for stdout)\n"


@pytest.mark.parametrize("name", COMMANDS)
def test_a_regular_file_is_replaced_atomically_and_private(cli, exporters, name, tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old contents\n")
    target.chmod(0o644)
    old_inode = target.stat().st_ino
    assert cli(*exporters[name](target)).exit_code == 0
    assert target.stat().st_ino != old_inode  # renamed over, not rewritten in place
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert _comparable(name, target.read_bytes()) == _comparable(name, _expected(cli, exporters, name))
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


# ---------------------------------------------------------------- backup create -o


def _members(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return tar.getnames()


def test_backup_to_dash_streams_the_archive_to_stdout(fixture_home, tmp_path, config):
    config.write_text("[backup]\nkeep = 3\n")  # rotates directories only: not an error for a stream
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    result = subprocess.run([sys.executable, "-m", "praisonmem", "--home", str(fixture_home), "backup", "create",
                             "-o", "-", "--include", "sessions"], capture_output=True, cwd=cwd, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout[:2] == b"\x1f\x8b" and result.stderr == b""
    names = _members(result.stdout)
    assert names[0] == "manifest.json" and "home/sessions/my_chat.json" in names
    assert list(cwd.iterdir()) == []


def test_backup_to_a_fifo_is_written_through(cli, fixture_home, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = cli("--home", fixture_home, "backup", "create", "-o", fifo, "--include", "sessions", "--json")
    reader.join(10)
    assert result.exit_code == 0, result.stderr
    assert result.json()["path"] == str(fifo) and result.json()["size"] == len(received[0])
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and _members(received[0])[0] == "manifest.json"


def test_backup_to_a_character_device_leaves_it_a_device(cli, fixture_home, char_device):
    result = cli("--home", fixture_home, "backup", "create", "-o", char_device, "--include", "sessions")
    assert result.exit_code == 0, result.stderr
    assert stat.S_ISCHR(char_device.lstat().st_mode)


@pytest.mark.parametrize("kind", ["link to a file", "dangling link", "socket"])
def test_backup_refuses_other_non_regular_targets(cli, fixture_home, tmp_path, kind):
    target, reason = _refusal(kind, tmp_path)
    if kind != "socket":  # a backup file name must end in .tar.gz
        named = tmp_path / "x.tar.gz"
        os.rename(target, named)
        target = named
    before = target.lstat()
    result = cli("--home", fixture_home, "backup", "create", "-o", target, "--include", "sessions")
    assert result.exit_code == 4
    assert result.stderr.startswith(f"praisonmem: error: {target}: {reason}")
    assert result.stderr.endswith("; nothing written\n") and result.stderr.count("\n") == 1
    assert target.lstat().st_ino == before.st_ino and target.lstat().st_mode == before.st_mode
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_backup_to_dash_refuses_a_terminal_and_keep(fixture_home):
    from praisonmem.core.backup import create as backup
    from praisonmem.core.errors import UsageError
    from praisonmem.core.paths import resolve

    class Terminal(io.BytesIO):
        def isatty(self) -> bool:
            return True

    paths = resolve(str(fixture_home), None)
    with pytest.raises(UsageError, match="not writing a compressed archive to a terminal"):
        backup.create(paths, output=Path("-"), include=("sessions",), stdout=Terminal())
    with pytest.raises(UsageError, match="--keep rotates the backups in a directory"):
        backup.create(paths, output=Path("-"), include=("sessions",), keep=2, stdout=io.BytesIO())
    sink = io.BytesIO()
    result = backup.create(paths, output=Path("-"), include=("sessions",), stdout=sink)
    assert result["path"] == "-" and result["size"] == len(sink.getvalue()) and gzip.decompress(sink.getvalue())


def test_backup_to_dash_refuses_json_and_keep_flags_on_the_command_line(cli, fixture_home):
    as_json = cli("--home", fixture_home, "backup", "create", "-o", "-", "--include", "sessions", "--json")
    assert (as_json.exit_code, as_json.stdout) == (2, "")
    assert json.loads(as_json.stderr)["error"]["message"] == "-o - writes the archive to stdout; --json cannot share it"
    keep = cli("--home", fixture_home, "backup", "create", "-o", "-", "--include", "sessions", "--keep", "2")
    assert (keep.exit_code, keep.stdout) == (2, "")
    assert keep.stderr == ("praisonmem: error: --keep rotates the backups in a directory; it does not apply to -, "
                           "a pipe or a device\n")
