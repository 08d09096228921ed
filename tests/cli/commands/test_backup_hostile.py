"""Crafted archives: restore writes only praisonmem's own layout, never the modes an archive claims,
and a tiny archive claiming gigabytes is refused without memory going up."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import snapshot

SESSION = b'{"session_id": "s", "messages": []}'
ROOTS = {"sessions": "/h/sessions", "spill": "/h/state/session_spill", "learn": "/h/learn", "memory": "/p/memory"}


def manifest_entry(path: str, data: bytes, mode: str = "0600") -> dict:
    return {"path": path, "size": len(data), "mode": mode, "mtime": 1796000000.0,
            "sha256": hashlib.sha256(data).hexdigest()}


def crafted(path: Path, files: dict[str, bytes], *, member_mode: int = 0o600, manifest_mode: str = "0600",
            roots: dict | None = None, entries: list | None = None, members: list | None = None) -> Path:
    """An archive shaped like one ``backup create`` writes, each file listed with its true size and
    sha256 (so checksums pass), but with paths, modes or members chosen by an attacker."""
    manifest = {"format": "praisonmem-backup", "version": 1, "praisonmem_version": "0.1.0",
                "created_at": "2026-11-30T02:00:00+00:00", "include": ["sessions", "memory", "learn"],
                "roots": ROOTS if roots is None else roots,
                "files": entries if entries is not None else
                [manifest_entry(name, data, manifest_mode) for name, data in files.items()]}
    body = json.dumps(manifest).encode()
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), member_mode
            tar.addfile(info, io.BytesIO(data))
        for info in members or []:
            tar.addfile(info)
    return path


def test_restore_never_keeps_the_modes_an_archive_claims(cli, tmp_path):
    files = {"home/sessions/s.json": SESSION, "home/learn/private/u/persona.json": b"{}",
             "memory/u/short_term.json": b"[]", "memory/u/episodic/2026-11-30.json": b"[]"}
    archive = crafted(tmp_path / "a.tar.gz", files, member_mode=0o6777, manifest_mode="6777")
    assert cli("backup", "verify", archive).exit_code == 0
    target = tmp_path / "to"
    assert cli("backup", "restore", archive, "--to", target, "--yes").exit_code == 0
    home, memory = tmp_path / "home", tmp_path / "project" / "memory"
    assert cli("--home", home, "--memory-dir", memory, "backup", "restore", archive, "--yes").exit_code == 0
    for root in (target, home, memory):
        restored = [p for p in root.rglob("*") if p.is_file() and not p.name.endswith(".lock")]
        assert restored and {p.stat().st_mode & 0o7777 for p in restored} == {0o600}
        assert {p.stat().st_mode & 0o7777 for p in [root, *root.rglob("*")] if p.is_dir()} == {0o700}
    assert (target / "memory/u/short_term.json").read_bytes() == b"[]"
    assert (memory / "u/short_term.json").read_bytes() == b"[]" and (home / "sessions/s.json").read_bytes() == SESSION


OUTSIDE = "outside the backup layout (home/sessions/, home/state/session_spill/, home/learn/, memory/, project/)"
NOT_MEMORY = ("not a file FileMemory writes (config.json, short_term.json, long_term.json, entities.json, "
              "summaries.json, or a .json file in episodic/, sessions/ or checkpoints/, in a user directory at most "
              "4 levels deep)")
NOT_LEARN = ("not a learn store (<scope>/<user>/<store>.json of persona, insights, threads, patterns, decisions, "
             "feedback, improvements, or learn.db)")


@pytest.mark.parametrize("name, reason", [
    (".ssh/authorized_keys", OUTSIDE),
    ("etc/cron.d/x", OUTSIDE),
    ("home/.bashrc", OUTSIDE),
    ("home/state/x.json", OUTSIDE),
    ("manifest.json", OUTSIDE),
    ("home/sessions/sub/x.json", "in a sub-directory of home/sessions/, which backups never hold"),
    ("home/state/session_spill/d/x.json", "in a sub-directory of home/state/session_spill/, which backups never "
                                          "hold"),
    ("home/sessions/x.json.lock", "a lock or temp file, which backups never hold"),
    ("memory/u/.short_term.json.k2j3.tmp", "a lock or temp file, which backups never hold"),
    ("memory//x.json", "a path with an empty or '.' component"),
    ("memory/./u/x.json", "a path with an empty or '.' component"),
    ("memory/", "a path with an empty or '.' component"),
    ("memory/u/authorized_keys", NOT_MEMORY),
    ("memory/u/.bashrc", NOT_MEMORY),
    ("memory/u/episodic/notes.txt", NOT_MEMORY),
    ("memory/u/episodic/deeper/2026-11-30.json", NOT_MEMORY),
    ("memory/a/b/c/d/e/short_term.json", NOT_MEMORY),
    ("home/learn/private/u/notes.txt", NOT_LEARN),
    ("home/learn/persona.json", NOT_LEARN),
    ("home/learn/other/u/persona.json", NOT_LEARN),
    ("home/learn/private/u/sub/persona.json", NOT_LEARN),
    ("home/learn/private/u/mystore.json", NOT_LEARN),
])
@pytest.mark.parametrize("where", ["--to", "home"])
def test_restore_refuses_every_path_create_never_writes_and_writes_nothing(cli, tmp_path, name, reason, where):
    files = {"memory/u/short_term.json": b"[]", name: b"ssh-ed25519 AAAA attacker"}
    archive = crafted(tmp_path / "a.tar.gz", files)
    home, memory, target = tmp_path / "home", tmp_path / "memory", tmp_path / "to"
    home.mkdir()
    before = snapshot(tmp_path)
    args = ["--to", target] if where == "--to" else []
    result = cli("--home", home, "--memory-dir", memory, "backup", "restore", archive, *args, "--yes")
    assert (result.exit_code, result.stderr) == (
        4, f"praisonmem: error: refusing archive entry {name!r}: {reason}; nothing written\n")
    assert snapshot(tmp_path) == before
    report = cli("backup", "verify", archive, "--json")
    assert report.exit_code == 1
    assert report.json()["problems"] == [{"path": name, "problem": f"unsafe entry: {reason}"}]


def test_a_root_the_manifest_does_not_have_is_refused(cli, tmp_path):
    archive = crafted(tmp_path / "a.tar.gz", {"home/sessions/s.json": SESSION, "memory/u/short_term.json": b"[]"},
                      roots={"memory": "/p/memory"})
    result = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes")
    assert result.exit_code == 4 and not (tmp_path / "to").exists()
    assert "'home/sessions/s.json': under home/sessions/ but the manifest has no 'sessions' root" in result.stderr


def directory_member(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o7777
    return info


@pytest.mark.parametrize("case, reason", [
    ("directory", "a directory entry, which backups never hold"),
    ("twice", "in the archive twice"),
    ("extra", None),
])
def test_members_create_never_writes_are_refused(cli, tmp_path, case, reason):
    files = {"memory/u/short_term.json": b"[]"}
    if case == "directory":
        archive = crafted(tmp_path / "a.tar.gz", files, members=[directory_member("memory/u/episodic")])
        name = "memory/u/episodic"
    else:
        archive = crafted(tmp_path / "a.tar.gz", files)
        name = "memory/u/short_term.json" if case == "twice" else "memory/u/long_term.json"
        with tarfile.open(archive) as tar:
            members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
        extra = tarfile.TarInfo(name)
        extra.size = 2
        members.append((extra, b"{}"))
        with tarfile.open(archive, "w:gz") as tar:
            for member, data in members:
                tar.addfile(member, io.BytesIO(data))
    result = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes")
    if reason:
        assert (result.exit_code, result.stderr) == (
            4, f"praisonmem: error: refusing archive entry {name!r}: {reason}; nothing written\n")
    else:
        assert result.exit_code == 1 and f"{name!r} (not in the manifest)" in result.stderr
    assert not (tmp_path / "to").exists()


@pytest.mark.parametrize("entry, reason", [
    ({"path": "memory/u/x.json", "size": "2", "sha256": "0" * 64, "mtime": 1.0},
     "a manifest entry whose size is not a whole number of bytes"),
    ({"path": "memory/u/x.json", "size": -1, "sha256": "0" * 64, "mtime": 1.0},
     "a manifest entry whose size is not a whole number of bytes"),
    ({"path": "memory/u/x.json", "size": 2, "sha256": "abc", "mtime": 1.0}, "a manifest entry without a sha256"),
    ({"path": "memory/u/x.json", "size": 2, "sha256": "0" * 64, "mtime": 1e300},
     "a manifest entry whose mtime is not a time"),
    ({"path": "memory/u/x.json", "size": 2, "sha256": "0" * 64, "mtime": 1.0, "damaged": 3},
     "a manifest entry whose 'damaged' note is not text"),
])
def test_a_manifest_entry_create_never_writes_is_refused_in_one_line(cli, tmp_path, entry, reason):
    archive = crafted(tmp_path / "a.tar.gz", {"memory/u/x.json": b"[]"}, entries=[entry])
    result = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes")
    assert (result.exit_code, result.stderr) == (
        4, f"praisonmem: error: refusing archive entry 'memory/u/x.json': {reason}; nothing written\n")
    assert not (tmp_path / "to").exists()


def test_a_manifest_path_that_is_also_a_directory_is_refused(cli, tmp_path):
    # both in the layout: the base's own config.json, and a user directory of that name
    archive = crafted(tmp_path / "a.tar.gz", {"memory/config.json": b"{}", "memory/config.json/short_term.json": b"[]"})
    result = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes")
    assert result.exit_code == 4 and "its directory 'memory/config.json' is a file in the same archive" in result.stderr
    assert not (tmp_path / "to").exists()


# ---------------------------------------------------------------- a tiny archive claiming gigabytes

GIB = 1 << 30


def octal(number: int, width: int) -> bytes:
    return b"%0*o\0" % (width - 1, number)


def gnu_sparse_header(name: str, realsize: int) -> bytes:
    """A GNU sparse ('S') member that is all hole: no data blocks, ``realsize`` bytes of NUL when read."""
    block = bytearray(512)
    block[0:len(name)] = name.encode()
    block[100:108] = octal(0o600, 8)
    block[108:116] = block[116:124] = octal(0, 8)
    block[124:136] = block[136:148] = octal(0, 12)  # stored size 0, mtime 0
    block[156:157] = b"S"
    block[257:265] = b"ustar  \0"
    block[386:398], block[398:410] = octal(realsize, 12), octal(0, 12)  # one map entry: the hole's end
    block[483:495] = octal(realsize, 12)
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def tiny_archive(path: Path, member: bytes, name: str = "memory/u/short_term.json") -> Path:
    """manifest.json (listing ``name`` as the 2 bytes ``[]``) and then ``member``, gzipped."""
    body = json.dumps({"format": "praisonmem-backup", "version": 1, "created_at": "2026-11-30T02:00:00+00:00",
                       "roots": {"memory": "/p/memory"}, "include": ["memory"],
                       "files": [manifest_entry(name, b"[]")]}).encode()
    head = tarfile.TarInfo("manifest.json")
    head.size = len(body)
    blob = head.tobuf(tarfile.GNU_FORMAT) + body + b"\0" * (-len(body) % 512) + member + b"\0" * 1024
    path.write_bytes(gzip.compress(blob, 9, mtime=0))
    return path


def huge_header(name: str, size: int) -> bytes:
    """A plain member header claiming ``size`` bytes, with none of them in the archive."""
    info = tarfile.TarInfo(name)
    info.size = size
    return info.tobuf(tarfile.GNU_FORMAT)


PEAK = """
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # the old code's 3 GiB read fails fast
    from praisonmem.cli.app import run
    code = run(sys.argv[2:])
    with open(sys.argv[1], "w") as out:
        json.dump({"exit": code, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}, out)
"""


def peak_run(tmp_path: Path, *args: str | Path) -> tuple[int, float, str]:
    """Run praisonmem in a fresh process: its exit code, its peak RSS in MiB, its stderr."""
    report = tmp_path / "peak.json"
    report.unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(PEAK), report, *map(str, args)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert report.exists(), proc.stderr[-2000:]
    measured = json.loads(report.read_text())
    return measured["exit"], measured["peak_mib"], proc.stderr


def baseline_mib(tmp_path: Path) -> float:
    return peak_run(tmp_path, "--version")[1]


def flat_run(tmp_path: Path, base: float, *args: str | Path) -> tuple[int, str]:
    """:func:`peak_run`, which must stay within 50 MiB of ``base``: its exit code and stderr."""
    code, peak, stderr = peak_run(tmp_path, *args)
    assert peak < base + 50, (args, peak, base)
    return code, stderr


def test_a_300_byte_archive_with_a_3_gib_sparse_member_is_refused_in_constant_memory(tmp_path):
    archive = tiny_archive(tmp_path / "sparse.tar.gz", gnu_sparse_header("memory/u/short_term.json", 3 * GIB))
    assert archive.stat().st_size < 400
    base = baseline_mib(tmp_path)
    assert flat_run(tmp_path, base, "backup", "verify", archive, "--json")[0] == 1
    code, stderr = flat_run(tmp_path, base, "backup", "restore", archive, "--to", tmp_path / "to", "--yes")
    assert code == 4
    assert "'memory/u/short_term.json': a sparse file, which backups never hold; nothing written" in stderr
    assert not (tmp_path / "to").exists()


def test_a_member_larger_than_its_manifest_size_is_refused_unread(cli, tmp_path):
    archive = tiny_archive(tmp_path / "big.tar.gz", huge_header("memory/u/short_term.json", 3 * GIB))
    assert archive.stat().st_size < 400
    base = baseline_mib(tmp_path)
    assert flat_run(tmp_path, base, "backup", "verify", archive)[0] == 1
    report = cli("backup", "verify", archive, "--json").json()
    assert report["problems"][0] == {"path": "memory/u/short_term.json",
                                     "problem": f"larger than its manifest size ({3 * GIB} > 2 bytes); not read"}
    code, stderr = flat_run(tmp_path, base, "backup", "restore", archive, "--to", tmp_path / "to", "--yes")
    assert code == 1 and "larger than its manifest size" in stderr and not (tmp_path / "to").exists()


def zeros_archive(path: Path, size: int, sha256: str) -> Path:
    """A backup whose one member really is ``size`` bytes of NUL (gzip makes that small)."""
    body = json.dumps({"format": "praisonmem-backup", "version": 1, "created_at": "2026-11-30T02:00:00+00:00",
                       "roots": {"memory": "/p/memory"}, "include": ["memory"],
                       "files": [{"path": "memory/u/long_term.json", "size": size, "mode": "0600", "mtime": 1.0,
                                  "sha256": sha256}]}).encode()
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as gz, \
            tarfile.open(fileobj=gz, mode="w|") as tar, open("/dev/zero", "rb") as zeros:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
        info = tarfile.TarInfo("memory/u/long_term.json")
        info.size = size
        tar.addfile(info, zeros)
    return path


def test_members_are_hashed_while_streaming_so_memory_stays_flat(cli, tmp_path):
    size = 256 << 20
    digest = hashlib.sha256()
    chunk = bytes(1 << 20)
    for _ in range(size >> 20):
        digest.update(chunk)
    good = zeros_archive(tmp_path / "good.tar.gz", size, digest.hexdigest())
    bad = zeros_archive(tmp_path / "bad.tar.gz", size, "0" * 64)
    base = baseline_mib(tmp_path)
    assert flat_run(tmp_path, base, "backup", "verify", good)[0] == 0
    code, stderr = flat_run(tmp_path, base, "backup", "restore", bad, "--to", tmp_path / "to", "--yes")
    assert code == 1
    assert "'memory/u/long_term.json' (checksum mismatch); nothing written" in stderr
    assert not (tmp_path / "to").exists()


def test_an_oversized_pax_header_is_refused_before_tarfile_reads_it_whole(cli, tmp_path):
    archive = crafted(tmp_path / "pax.tar.gz", {"memory/u/short_term.json": b"[]"})
    with tarfile.open(archive) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    members[1][0].pax_headers = {"comment": "x" * (2 << 20)}
    with tarfile.open(archive, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for member, data in members:
            tar.addfile(member, io.BytesIO(data))
    report = cli("backup", "verify", archive, "--json")
    assert report.exit_code == 1
    problem = report.json()["problems"][0]["problem"]
    assert problem.startswith("archive damaged while reading this entry (a ") and "-byte extended header" in problem
    assert cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes").exit_code == 1
    assert not (tmp_path / "to").exists()


# ---------------------------------------------------------------- databases that are not their store

@pytest.mark.parametrize("marked", [True, False], ids=["snapshot", "unmarked"])
@pytest.mark.parametrize("kind, problem", [
    ("view", "'sessions' is a view, not a table: it would answer every read with its own query"),
    ("recursive view", "'sessions' is a view, not a table: it would answer every read with its own query"),
    ("trigger", "a trigger ('spy') on the table 'sessions', which would run its own SQL inside every change"),
    ("wrong columns", "the 'sessions' table lacks the store's columns (session_id, data, agent_name, "
                      "gateway_session_id, agent_id, updated_at)"),
    ("missing table", "no 'sessions' table"),
])
def test_restore_refuses_an_archive_whose_database_is_not_its_store(cli, tmp_path, kind, problem, marked):
    from tests.cli.commands.test_crafted_databases import craft, transcript

    db = transcript(tmp_path / "src")
    if kind == "missing table":
        conn = sqlite3.connect(db)
        conn.execute("ALTER TABLE sessions RENAME TO other")
        conn.commit()
        conn.close()
    else:
        craft(db, kind, "sessions", "data")
    name = "home/sessions/sessions.db"
    data = db.read_bytes()
    entry = {**manifest_entry(name, data), **({"sqlite": True} if marked else {})}
    archive = crafted(tmp_path / "a.tar.gz", {name: data, "home/sessions/s.json": SESSION},
                      entries=[entry, manifest_entry("home/sessions/s.json", SESSION)])
    home = tmp_path / "home"
    home.mkdir()
    before = snapshot(tmp_path)
    for where in (["--to", tmp_path / "to"], []):
        result = cli("--home", home, "--memory-dir", tmp_path / "memory", "backup", "restore", archive, *where, "--yes")
        assert (result.exit_code, result.stdout, result.stderr) == (
            4, "", f"praisonmem: error: refusing archive entry {name!r}: {problem}; not a store as its library "
                   "writes it; nothing written\n")
        assert snapshot(tmp_path) == before
    report = cli("backup", "verify", archive, "--json")
    assert report.exit_code == 1 and report.json()["problems"] == [
        {"path": name, "problem": f"unsafe entry: {problem}; not a store as its library writes it"}]


def test_a_file_named_sessions_db_that_is_not_a_database_is_not_restored(cli, tmp_path):
    name = "home/sessions/sessions.db"
    junk = b"SQLite format 3\x00" + b"\x00" * 84
    archive = crafted(tmp_path / "a.tar.gz", {name: junk, "home/sessions/s.json": SESSION})
    result = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes", "--json")
    assert result.exit_code == 1
    assert {c["path"]: c["action"] for c in result.json()} == {name: "failed", "home/sessions/s.json": "restored"}
    assert not (tmp_path / "to" / name).exists()



def test_restore_takes_every_name_the_stores_write(cli, tmp_path):
    names = ["memory/short_term.json", "memory/a/b/c/d/long_term.json", "memory/u/config.json",
             "memory/u/entities.json", "memory/u/summaries.json", "memory/u/episodic/2026-3-5.json",
             "memory/u/sessions/my saved.json", "memory/u/checkpoints/before-cleanup.json",
             "home/learn/private/u/persona.json", "home/learn/shared/CORP\\dom/insights.archive.json",
             "home/sessions/s.json", "home/sessions/.last_session", "home/state/session_spill/s.json"]
    archive = crafted(tmp_path / "a.tar.gz", {name: b"[]" for name in names})
    result = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.relative_to(tmp_path / "to").as_posix() for p in (tmp_path / "to").rglob("*")
                  if p.is_file() and not p.name.endswith(".lock")) == sorted(names)


# ---------------------------------------------------------------- links where a restore writes


def attack(tmp_path: Path) -> tuple[Path, Path]:
    """An archive whose files are all in the layout, and ~/.ssh (outside everything) holding a key."""
    ssh = tmp_path / "victim" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "authorized_keys").write_text("ssh-ed25519 AAAA mine\n")
    files = {"memory/alice/short_term.json": b"[]", "memory/alice/long_term.json": b"[]",
             "home/sessions/s.json": SESSION, "home/learn/private/u/persona.json": b"{}"}
    return crafted(tmp_path / "a.tar.gz", files), ssh


def refused_link(result, link: str, to: Path) -> None:
    assert (result.exit_code, result.stdout, result.stderr) == (
        4, "", f"praisonmem: error: {link}: is a symbolic link (to {to}); restore never writes through a link, so "
               "an archive cannot reach where it points (restore with --to DIR, or replace the link with the "
               "directory it points to); nothing written\n")


@pytest.mark.parametrize("link", [".praisonai", ".praisonai/memory", ".praisonai/memory/alice"])
def test_a_cloned_repositorys_links_never_lead_a_restore_out_of_the_project(cli, tmp_path, monkeypatch, link):
    archive, ssh = attack(tmp_path)
    repo = tmp_path / "repo"
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    (repo / link).symlink_to(ssh)
    monkeypatch.chdir(repo)
    home = tmp_path / "home"
    before = snapshot(tmp_path)
    refused_link(cli("--home", home, "backup", "restore", archive, "--yes"), link, ssh)
    assert snapshot(tmp_path) == before and sorted(p.name for p in ssh.iterdir()) == ["authorized_keys"]


@pytest.mark.parametrize("link", ["sessions", "learn", "learn/private", "learn/private/u", "state",
                                  "state/session_spill"])
def test_no_link_below_the_home_is_followed(cli, tmp_path, link):
    archive, ssh = attack(tmp_path)
    home = tmp_path / "home"
    (home / link).parent.mkdir(parents=True, exist_ok=True)
    (home / link).symlink_to(ssh)
    before = snapshot(tmp_path)
    result = cli("--home", home, "--memory-dir", tmp_path / "memory", "backup", "restore", archive, "--yes")
    if link.startswith("state"):  # the archive holds no spill file: nothing goes through that link
        assert result.exit_code == 0, result.stderr
        assert sorted(p.name for p in ssh.iterdir()) == ["authorized_keys"]
        return
    refused_link(result, str(home / link), ssh)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("link", ["home", "memory", "memory/alice", "home/learn/private"])
def test_no_link_below_the_to_directory_is_followed(cli, tmp_path, link):
    archive, ssh = attack(tmp_path)
    to = tmp_path / "to"
    (to / link).parent.mkdir(parents=True, exist_ok=True)
    (to / link).symlink_to(ssh)
    before = snapshot(tmp_path)
    refused_link(cli("backup", "restore", archive, "--to", to, "--yes"), str(to / link), ssh)
    assert snapshot(tmp_path) == before


def test_a_to_directory_that_is_a_link_is_refused(cli, tmp_path):
    archive, ssh = attack(tmp_path)
    (tmp_path / "to").symlink_to(ssh.parent)
    before = snapshot(tmp_path)
    result = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes")
    assert (result.exit_code, result.stdout, result.stderr) == (
        4, "", f"praisonmem: error: --to {tmp_path / 'to'}: is a symbolic link; restore writes nothing through a "
               "link (give the directory itself); nothing written\n")
    assert snapshot(tmp_path) == before


def test_a_link_that_appears_after_the_check_is_not_followed(tmp_path):
    from praisonmem.core.backup import plan_restore
    from praisonmem.core.paths import resolve

    archive, ssh = attack(tmp_path)
    to = tmp_path / "to"
    plan = plan_restore(archive, resolve(home=tmp_path / "home"), to=to)
    (to / "memory").mkdir(parents=True)
    (to / "memory" / "alice").symlink_to(ssh)  # swapped in between the look and the write
    outcome = plan.run()
    failed = {c.fields["path"]: c.detail for c in outcome.changes if c.failed}
    assert failed == dict.fromkeys(["memory/alice/short_term.json", "memory/alice/long_term.json"],
                                   f"{to / 'memory' / 'alice'}: is a symbolic link (to {ssh}); restore never "
                                   "writes through a link, so an archive cannot reach where it points (restore "
                                   "with --to DIR, or replace the link with the directory it points to); not "
                                   "restored")
    assert sorted(p.name for p in ssh.iterdir()) == ["authorized_keys"]
    assert (to / "home/sessions/s.json").read_bytes() == SESSION


# ---------------------------------------------------------------- an interrupted restore's temp files


def test_the_next_restore_removes_only_its_own_stale_leftovers(cli, tmp_path):
    from praisonmem.core.layout import is_restore_temp

    archive = crafted(tmp_path / "a.tar.gz", {"memory/u/short_term.json": b"[]"})
    user = tmp_path / "to" / "memory" / "u"
    user.mkdir(parents=True)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    old = 1796000000
    leftovers = {
        f".short_term.json.restore-{gone.pid}-0a1b2c3d.tmp": True,  # a killed restore's, a minute old: removed
        f".long_term.json.restore-{gone.pid}-0a1b2c3e.tmp": False,  # fresh: a restore may still be writing it
        f".config.json.restore-{os.getppid()}-0a1b2c3f.tmp": False,  # its process runs (a restore waiting on a lock)
        ".short_term.json.k2j3h4.tmp": False,  # another writer's temp file (FileMemory's): not ours
        f"short_term.json.restore-{gone.pid}-0a1b2c3d.tmp": False,  # not the pattern (no leading dot)
    }
    for name, stale in leftovers.items():
        (user / name).write_text("partial")
        if stale or "k2j3h4" in name or name[0] != "." or "config" in name:
            os.utime(user / name, (old, old))
    assert [is_restore_temp(n) for n in leftovers] == [True, True, True, False, False]
    result = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes")
    assert result.exit_code == 0, result.stderr
    removed = user / f".short_term.json.restore-{gone.pid}-0a1b2c3d.tmp"
    assert result.stderr == f"praisonmem: removed 1 temp file an interrupted restore left: {removed}\n"
    assert sorted(p.name for p in user.iterdir()) == sorted(
        [n for n, stale in leftovers.items() if not stale] + ["short_term.json", ".praisonmem.lock"])


def test_the_next_restore_removes_a_killed_chroma_restore_s_temp_directory(cli, tmp_path):
    archive = crafted(tmp_path / "a.tar.gz", {"memory/u/short_term.json": b"[]"})
    user = tmp_path / "to" / "memory" / "u"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale, fresh = (user / f".chroma_db.restore-{gone.pid}-0a1b2c3{c}.tmp" for c in "de")
    for temp in (stale, fresh):
        (temp / "0f8e2b1c-3d4a-4b5c-9d6e-7f8091a2b3c4").mkdir(parents=True)
        (temp / "chroma.sqlite3").write_text("partial")
    os.utime(stale, (1796000000, 1796000000))
    result = cli("backup", "restore", archive, "--to", tmp_path / "to", "--yes")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == f"praisonmem: removed 1 temp file an interrupted restore left: {stale}\n"
    assert sorted(p.name for p in user.iterdir()) == sorted([".praisonmem.lock", fresh.name, "short_term.json"])


def test_restore_temp_names_fit_and_match_the_pattern():
    from praisonmem.core.layout import is_restore_temp
    from praisonmem.core.backup.restore import temp_name

    for name in ("short_term.json", "é" * 127, "x" * 255):
        temp = temp_name(name)
        assert is_restore_temp(temp) and len(os.fsencode(temp)) <= 255 and temp.startswith(f".{name[:10]}")


# ---------------------------------------------------------------- links in what a backup reads


def linked_world(tmp_path: Path) -> dict[str, Path]:
    """A home and FileMemory dir with links in and out of them, and files no store writes."""
    home, memory, outside = tmp_path / "home", tmp_path / "project/.praisonai/memory", tmp_path / "outside"
    for d in (home / "sessions", home / "archive", memory / "alice/episodic", outside / "carol"):
        d.mkdir(parents=True)
    (home / "sessions/own.json").write_bytes(SESSION)
    (home / "archive/kept.json").write_bytes(b'{"session_id": "kept", "messages": []}')
    (home / "sessions/linked.json").symlink_to(home / "archive/kept.json")  # inside the home: archived
    (outside / "secret.json").write_text('{"session_id": "secret", "messages": []}')
    (home / "sessions/outside.json").symlink_to(outside / "secret.json")  # outside: left out, said so
    (home / "sessions/dangling.json").symlink_to(home / "nowhere.json")
    (memory / "alice/short_term.json").write_text("[]")
    (memory / "alice/episodic/2026-11-30.json").write_text("[]")
    (memory / "alice/notes.txt").write_text("not FileMemory's")
    (memory / "bob").symlink_to("alice")  # a user directory linked to another inside the memory dir
    (outside / "carol/short_term.json").write_text("[]")
    (memory / "carol").symlink_to(outside / "carol")
    (memory / "alice/sessions").symlink_to(memory / "alice")  # a loop
    return {"home": home, "memory": memory, "outside": outside}


def test_links_inside_the_home_are_archived_under_their_names_and_the_rest_is_named(cli, tmp_path):
    world = linked_world(tmp_path)
    home, memory, outside = world["home"], world["memory"], world["outside"]
    result = cli("--home", home, "--memory-dir", memory, "backup", "create", "-o", tmp_path / "b", "-v", "--json")
    assert result.exit_code == 0, result.stderr
    archive = Path(result.json()["path"])
    with tarfile.open(archive) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar if m.name != "manifest.json"}
        manifest = json.loads(tar.extractfile("manifest.json").read())
    assert sorted(members) == ["home/sessions/linked.json", "home/sessions/own.json",
                               "memory/alice/episodic/2026-11-30.json", "memory/alice/short_term.json",
                               "memory/bob/episodic/2026-11-30.json", "memory/bob/short_term.json"]
    assert members["home/sessions/linked.json"] == (home / "archive/kept.json").read_bytes()
    left = [
        ("home/sessions/dangling.json", f"a symbolic link to {home / 'nowhere.json'}, which does not exist"),
        ("home/sessions/outside.json", f"a symbolic link to {outside / 'secret.json'}, outside {home}"),
        ("memory/alice/notes.txt", NOT_MEMORY),
        ("memory/alice/sessions/", f"a symbolic link to {memory / 'alice'}, a directory it is inside"),
        ("memory/bob/notes.txt", NOT_MEMORY),
        ("memory/bob/sessions/", f"a symbolic link to {memory / 'alice'}, a directory it is inside"),
        ("memory/carol", f"a symbolic link to {outside / 'carol'}, outside {memory}"),
    ]
    assert manifest["left_out"] == [{"path": p, "reason": r} for p, r in left]
    on_disk = {"home/": home, "memory/": memory}
    shown = [f"praisonmem: not backed up: {next(d / p[len(k):] for k, d in on_disk.items() if p.startswith(k))}"
             f": {r}\n" for p, r in left]
    assert result.stderr == (f"praisonmem: not backed up, no such directory: learn ({home / 'learn'})\n"
                             f"praisonmem: not backed up, no such directory: chroma ({memory.parent / 'chroma_db*'}, "
                             f"{memory.parent / 'knowledge' / 'chroma'})\n" + "".join(shown))
    quiet = cli("--home", home, "--memory-dir", memory, "backup", "create", "-o", tmp_path / "b")
    assert (quiet.exit_code, quiet.stderr) == (0, "")  # said only with -v (and always in the manifest)
    assert cli("backup", "verify", archive).exit_code == 0
    to = tmp_path / "to"
    assert cli("backup", "restore", archive, "--to", to, "--yes").exit_code == 0
    restored = to / "home/sessions/linked.json"
    assert not restored.is_symlink() and restored.read_bytes() == (home / "archive/kept.json").read_bytes()
    assert not (to / "memory/bob").is_symlink() and (to / "memory/bob/short_term.json").read_text() == "[]"


def test_backup_create_into_a_link_to_a_directory_is_refused(cli, tmp_path):
    world = linked_world(tmp_path)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    before = snapshot(tmp_path)
    result = cli("--home", world["home"], "--memory-dir", world["memory"], "backup", "create", "-o", tmp_path / "link")
    assert (result.exit_code, result.stdout, result.stderr) == (
        4, "", f"praisonmem: error: {tmp_path / 'link'}: is a symbolic link to a directory; praisonmem writes nothing "
               "through a link (give the directory itself); nothing written\n")
    assert snapshot(tmp_path) == before
