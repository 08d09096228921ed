"""``backup create`` written in one pass: gzip level 6, each session read under a raw flock on
its sidecar (the library's lock, without filelock), no uncompressed staging copy; the archive holds exactly the
tar stream the earlier writer produced (tarfile's, manifest first)."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from praisonmem.core.backup import create as createmod
from praisonmem.core.errors import LockTimeout
from praisonmem.core.io import jsonfile
from tests.conftest import PRAISONAI_FIXTURES


@pytest.fixture
def world(tmp_path, monkeypatch) -> dict[str, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    shutil.copytree(PRAISONAI_FIXTURES / "home", home)
    shutil.copytree(PRAISONAI_FIXTURES / "project", project)
    monkeypatch.chdir(project)
    (home / "sessions" / "unicode-é.json").write_text('{"session_id": "unicode-é", "messages": []}',
                                                      encoding="utf-8")  # a name tarfile writes a pax header for
    return {"home": home, "out": tmp_path / "backups", "tmp": tmp_path}


def make_backup(cli, world, *extra: str) -> Path:
    result = cli("--home", world["home"], "backup", "create", "-o", world["out"], "--json", *extra)
    assert result.exit_code == 0, result.stderr
    return Path(result.json()["path"])


def gzip_members(data: bytes) -> list[bytes]:
    """The headers (first 10 bytes) of each gzip member of ``data``."""
    headers = []
    while data:
        headers.append(data[:10])
        decomp = __import__("zlib").decompressobj(31)
        decomp.decompress(data)
        data = decomp.unused_data
    return headers


def test_the_archive_is_the_tar_stream_tarfile_writes_for_the_manifest_and_the_files(cli, world):
    archive = make_backup(cli, world)
    stream = gzip.decompress(archive.read_bytes())
    with tarfile.open(fileobj=io.BytesIO(stream)) as tar:
        members = [(member, tar.extractfile(member).read()) for member in tar]
    assert members[0][0].name == "manifest.json" and len(members) > 10
    assert any(m.name.endswith("unicode-é.json") for m, _ in members)
    rebuilt = io.BytesIO()  # the earlier writer: tarfile's addfile for each, then close
    with tarfile.open(fileobj=rebuilt, mode="w") as tar:
        for member, data in members:
            tar.addfile(member, io.BytesIO(data))
    assert stream == rebuilt.getvalue()
    for member, data in members[1:]:
        if member.name.startswith("home/sessions/") and member.name.endswith(".json"):
            assert data == (world["home"] / member.name.removeprefix("home/")).read_bytes()
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    assert os.listdir(world["out"]) == [archive.name]  # no temp file left
    assert subprocess.run(["gzip", "-t", str(archive)]).returncode == 0
    listed = subprocess.run(["tar", "tzf", str(archive)], capture_output=True, text=True, check=True).stdout
    assert listed.splitlines() == [m.name for m, _ in members]
    assert cli("backup", "verify", archive).exit_code == 0


def test_it_compresses_at_level_6(cli, world):
    headers = gzip_members(make_backup(cli, world).read_bytes())
    assert len(headers) >= 2
    assert {h[8] for h in headers} == {0}  # XFL: 2 at level 9, 4 at level 1, 0 between


def test_no_uncompressed_staging_copy_is_written(cli, world, monkeypatch):
    spools: list = []
    real = tempfile.TemporaryFile

    def recording(*args, **kwargs):
        spools.append(real(*args, **kwargs))
        return spools[-1]

    monkeypatch.setattr(createmod.tempfile, "TemporaryFile", recording)
    sizes: list[int] = []
    real_copy = shutil.copyfileobj

    def measuring(source, target, *args):
        sizes.append(os.fstat(source.fileno()).st_size)
        return real_copy(source, target, *args)

    monkeypatch.setattr(createmod.shutil, "copyfileobj", measuring)
    archive = make_backup(cli, world)
    payload = sum(p.stat().st_size for p in (world["home"] / "sessions").rglob("*.json"))
    assert len(spools) == 1 and len(sizes) == 1
    assert sizes[0] < archive.stat().st_size < payload  # the spool holds the compressed members only


HOLD = textwrap.dedent("""
    import sys, time
    from filelock import UnixFileLock
    lock = UnixFileLock(sys.argv[1] + ".lock")
    lock.acquire()
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
""")


def test_a_session_locked_by_the_library_s_filelock_waits_and_times_out_as_before(cli, world):
    session = world["home"] / "sessions" / "my_chat.json"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(session), "30"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        started = time.monotonic()
        result = cli("--lock-timeout", "0.3", "--home", world["home"], "backup", "create", "-o", world["out"])
        assert time.monotonic() - started >= 0.3
        assert result.exit_code == 4, result.stderr
        assert result.stderr == (f"praisonmem: error: {session}: could not lock {session}.lock within 0.3s "
                                 "(an agent may be writing it); nothing changed\n")
        assert not world["out"].exists() or os.listdir(world["out"]) == []
    finally:
        holder.kill()
        holder.wait()


def test_the_raw_lock_excludes_filelock_and_filelock_excludes_it(tmp_path):
    from filelock import Timeout, UnixFileLock

    path = tmp_path / "s.json"
    path.write_text("{}")
    with jsonfile.locked_quick(path, 1):
        with pytest.raises(Timeout):
            UnixFileLock(f"{path}.lock").acquire(timeout=0.1)
        with pytest.raises(LockTimeout):  # and itself, from another open file description
            with jsonfile.locked_quick(path, 0.1):
                pass
    lock = UnixFileLock(f"{path}.lock")
    lock.acquire(timeout=0)
    lock.release()
    assert path.with_name("s.json.lock").read_bytes() == b""
    os.unlink(path.with_name("s.json.lock"))
    os.symlink(tmp_path / "elsewhere", path.with_name("s.json.lock"))
    with pytest.raises(Exception) as raised:
        with jsonfile.locked_quick(path, 0.1):
            pass
    assert "is a symbolic link" in str(raised.value) and not (tmp_path / "elsewhere").exists()
