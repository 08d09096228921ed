"""backup create / verify / list / restore: byte-for-byte round trips, damage, tar slip, --keep."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from tests.conftest import PRAISONAI_FIXTURES


@pytest.fixture
def world(tmp_path, monkeypatch) -> dict[str, Path]:
    """A home and a project with FileMemory, both copies of the real fixtures; cwd = the project."""
    home = tmp_path / "home"
    project = tmp_path / "project"
    shutil.copytree(PRAISONAI_FIXTURES / "home", home)
    shutil.copytree(PRAISONAI_FIXTURES / "project", project)
    monkeypatch.chdir(project)
    return {"home": home, "memory": project / ".praisonai" / "memory", "out": tmp_path / "backups",
            "tmp": tmp_path}


def payload_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not p.name.endswith(".lock")}


def make_backup(cli, world, *extra: str) -> Path:
    result = cli("--home", world["home"], "backup", "create", "-o", world["out"], "--json", *extra)
    assert result.exit_code == 0, result.stderr
    return Path(result.json()["path"])


def test_backup_verify_restore_reproduces_every_file_byte_for_byte(cli, world):
    archive = make_backup(cli, world)
    assert archive.name.startswith("praisonmem-backup-") and archive.name.endswith("Z.tar.gz")
    assert cli("backup", "verify", archive).exit_code == 0
    restored = world["tmp"] / "restored"
    assert cli("backup", "restore", archive, "--to", restored, "--yes").exit_code == 0
    assert payload_files(restored / "home" / "sessions") == payload_files(world["home"] / "sessions")
    assert payload_files(restored / "home" / "learn") == payload_files(world["home"] / "learn")
    assert payload_files(restored / "home" / "state" / "session_spill") == \
        payload_files(world["home"] / "state" / "session_spill")
    assert payload_files(restored / "memory") == payload_files(world["memory"])
    original = world["memory"] / "alice" / "short_term.json"
    assert original.stat().st_mode & 0o777 == 0o644  # the fixture copy: restore does not keep it
    modes = {p.stat().st_mode & 0o7777 for p in [restored, *restored.rglob("*")] if not p.name.endswith(".lock")}
    assert modes == {0o600, 0o700}
    assert {p.stat().st_mode & 0o7777 for p in restored.rglob("*") if p.is_dir()} == {0o700}


def test_manifest_records_roots_and_checksums(cli, world):
    archive = make_backup(cli, world)
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile("manifest.json").read())
    assert names[0] == "manifest.json"
    assert manifest["format"] == "praisonmem-backup" and manifest["roots"]["sessions"] == str(world["home"] / "sessions")
    entry = next(f for f in manifest["files"] if f["path"] == "home/sessions/my_chat.json")
    assert set(entry) == {"path", "size", "mode", "mtime", "sha256"} and len(entry["sha256"]) == 64
    assert not any(n.endswith((".lock", ".tmp")) for n in names)


def test_create_is_silent_when_not_a_terminal_and_writes_no_temp_leftovers(cli, world):
    result = cli("--home", world["home"], "backup", "create", "-o", world["out"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert [p.name for p in world["out"].iterdir()][0].startswith("praisonmem-backup-")
    assert len(list(world["out"].iterdir())) == 1


def test_keep_2_after_four_backups_leaves_the_two_newest(cli, world):
    made = [make_backup(cli, world, "--keep", "2") for _ in range(4)]
    assert sorted(world["out"].iterdir()) == sorted(made[2:])
    listed = cli("backup", "list", world["out"], "--json").json()
    assert [Path(r["file"]) for r in listed] == made[2:] and all(r["files"] for r in listed)


def test_include_subset_and_bad_include(cli, world):
    archive = make_backup(cli, world, "--include", "learn")
    with tarfile.open(archive) as tar:
        assert {n.split("/")[1] for n in tar.getnames() if n != "manifest.json"} == {"learn"}
    bad = cli("--home", world["home"], "backup", "create", "-o", world["out"], "--include", "everything")
    assert bad.exit_code == 2 and "--include takes a comma list of sessions, memory, learn" in bad.stderr


def rewrite_member(archive: Path, name: str, data: bytes) -> None:
    """Re-pack an archive with one member's content changed (its manifest untouched)."""
    with tarfile.open(archive) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    with tarfile.open(archive, "w:gz") as tar:
        for member, content in members:
            if member.name == name:
                content = data
                member.size = len(data)
            tar.addfile(member, io.BytesIO(content))


def test_a_tampered_file_fails_verify_naming_it(cli, world):
    archive = make_backup(cli, world)
    rewrite_member(archive, "home/sessions/my_chat.json", b'{"session_id": "my_chat", "messages": []}')
    result = cli("backup", "verify", archive)
    assert result.exit_code == 1
    assert "home/sessions/my_chat.json: checksum mismatch" in result.stdout
    report = cli("backup", "verify", archive, "--json").json()
    assert report["problems"] == [{"path": "home/sessions/my_chat.json", "problem": "checksum mismatch"}]
    restore = cli("backup", "restore", archive, "--to", world["tmp"] / "r", "--yes")
    assert restore.exit_code == 1 and not (world["tmp"] / "r").exists()


def test_a_truncated_archive_fails_verify(cli, world):
    archive = make_backup(cli, world)
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) * 2 // 3])
    result = cli("backup", "verify", archive, "--json")
    assert result.exit_code == 1
    problem = result.json()["problems"][0]
    assert problem["problem"].startswith("archive damaged while reading this entry")
    assert problem["path"].startswith(("home/", "memory/"))


def evil_archive(path: Path, kind: str) -> Path:
    manifest = {"format": "praisonmem-backup", "version": 1, "files": []}
    with tarfile.open(path, "w:gz") as tar:
        body = json.dumps(manifest).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
        if kind == "symlink":
            link = tarfile.TarInfo("home/sessions/link.json")
            link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(link)
        else:
            name = {"dotdot": "../evil", "absolute": "/etc/x"}[kind]
            info = tarfile.TarInfo(name)
            info.size = 4
            tar.addfile(info, io.BytesIO(b"evil"))
    return path


@pytest.mark.parametrize("kind, reason", [("dotdot", "a path with '..'"), ("absolute", "an absolute path"),
                                          ("symlink", "a link")])
def test_tar_slip_entries_are_refused_with_nothing_written(cli, world, kind, reason):
    archive = evil_archive(world["tmp"] / f"{kind}.tar.gz", kind)
    target = world["tmp"] / "target"
    result = cli("backup", "restore", archive, "--to", target, "--yes")
    assert result.exit_code == 4
    assert "refusing archive entry" in result.stderr and reason in result.stderr and "nothing written" in result.stderr
    assert not target.exists() and not (world["tmp"] / "evil").exists()
    assert cli("backup", "verify", archive).exit_code == 1


def test_restore_in_place_skips_existing_files_and_replace_needs_confirmation(cli, world):
    archive = make_backup(cli, world)
    (world["home"] / "sessions" / "my_chat.json").unlink()
    refused = cli("--home", world["home"], "backup", "restore", archive)
    assert refused.exit_code == 4 and "pass --yes" in refused.stderr
    done = cli("--home", world["home"], "backup", "restore", archive, "--yes", "--json").json()
    restored = [r for r in done if r["action"] == "restored"]
    assert [Path(r["target"]).name for r in restored] == ["my_chat.json"]
    assert all(r["action"] == "skipped" for r in done if r not in restored)
    dry = cli("--home", world["home"], "backup", "restore", archive, "--on-conflict", "replace", "--dry-run")
    assert dry.exit_code == 0 and dry.stdout.startswith("would replace")


def test_restore_never_replaces_a_session_that_does_not_parse(cli, world):
    archive = make_backup(cli, world)
    bad = world["home"] / "sessions" / "my_chat.json"
    bad.write_bytes(b"{")
    result = cli("--home", world["home"], "backup", "restore", archive, "--on-conflict", "replace", "--yes", "--json")
    assert result.exit_code == 1
    failed = [r for r in result.json() if r["action"] == "failed"]
    assert [Path(r["target"]).name for r in failed] == ["my_chat.json"] and "invalid JSON" in failed[0]["detail"]
    assert bad.read_bytes() == b"{"


def test_failure_is_one_stderr_line_and_non_zero(cli, world):
    blocker = world["tmp"] / "file"
    blocker.write_text("x")
    result = cli("--home", world["home"], "backup", "create", "-o", blocker / "sub")
    assert result.exit_code == 5 and result.stderr.count("\n") == 1 and result.stdout == ""
    exists = make_backup(cli, world)
    again = cli("--home", world["home"], "backup", "create", "-o", exists)
    assert again.exit_code == 4 and "already exists" in again.stderr


def test_verify_of_something_that_is_not_a_backup(cli, world):
    junk = world["tmp"] / "junk.tar.gz"
    junk.write_bytes(gzip.compress(b"not a tar"))
    result = cli("backup", "verify", junk)
    assert result.exit_code == 1 and "cannot read the archive" in result.stdout
    assert cli("backup", "verify", world["tmp"] / "missing.tar.gz").exit_code == 3


def test_nothing_to_back_up_and_missing_sources(cli, world, tmp_path):
    (tmp_path / "nohome").mkdir()
    empty = cli("--home", tmp_path / "nohome", "--memory-dir", tmp_path / "nomem", "backup", "create", "-o",
                world["out"])
    assert empty.exit_code == 3 and "nothing to back up" in empty.stderr
    assert not world["out"].exists() or not list(world["out"].iterdir())
    partial = cli("--home", world["home"], "--memory-dir", tmp_path / "nomem", "backup", "create", "-o",
                  world["out"])
    assert (partial.exit_code, partial.stderr) == (0, "")  # most homes lack a source: not news for cron
    told = cli("--home", world["home"], "--memory-dir", tmp_path / "nomem", "backup", "create", "-o", world["out"],
               "-v")
    assert told.exit_code == 0
    assert told.stderr == (f"praisonmem: not backed up, no such directory: memory ({tmp_path / 'nomem'})\n"
                           f"praisonmem: not backed up, no such directory: chroma ({tmp_path / 'chroma_db*'}, "
                           f"{tmp_path / 'knowledge' / 'chroma'})\n")
    asked = cli("--home", world["home"], "--memory-dir", tmp_path / "nomem", "backup", "create", "-o", world["out"],
                "--include", "sessions,memory")
    assert asked.exit_code == 0
    assert asked.stderr == f"praisonmem: warning: not backed up, no such directory: memory ({tmp_path / 'nomem'})\n"


def test_backup_list_of_a_missing_or_non_directory_path(cli, world):
    assert cli("backup", "list", world["tmp"] / "nowhere").exit_code == 3
    (world["tmp"] / "afile").write_text("x")
    assert cli("backup", "list", world["tmp"] / "afile").exit_code == 2


@pytest.mark.parametrize("name", ["x.zip", "x.tgz"])
def test_an_archive_name_that_is_not_tar_gz_is_refused(cli, world, name):
    result = cli("--home", world["home"], "backup", "create", "-o", world["tmp"] / name)
    assert result.exit_code == 2 and "must end in .tar.gz" in result.stderr
    assert not (world["tmp"] / name).exists()


def test_empty_include_is_a_usage_error(cli, world):
    assert cli("--home", world["home"], "backup", "create", "-o", world["out"], "--include", "").exit_code == 2


def test_backup_dir_and_keep_come_from_config(cli, world, monkeypatch):
    config = Path(os.environ["PRAISONMEM_CONFIG"])
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[backup]\ndir = "{world["out"]}"\nkeep = 1\n')
    for _ in range(2):
        assert cli("--home", world["home"], "backup", "create").exit_code == 0
    assert len(list(world["out"].iterdir())) == 1
    assert len(cli("backup", "list", "--json").json()) == 1


def test_a_file_that_appears_after_planning_is_not_overwritten(cli, world):
    from praisonmem.core import backup
    from praisonmem.core.paths import resolve

    archive = make_backup(cli, world)
    paths = resolve(world["tmp"] / "fresh-home", env={})
    plan = backup.plan_restore(archive, paths, on_conflict="skip")
    target = paths.sessions_dir / "my_chat.json"
    target.parent.mkdir(parents=True)
    target.write_text('{"session_id": "my_chat", "messages": [{"role": "user", "content": "new turn"}]}')
    mine = next(c for c in plan.run().changes if c.fields["target"] == str(target))
    assert (mine.action, mine.detail) == ("skipped", "appeared while restoring; left as it is")
    assert "new turn" in target.read_text()


def with_created_at(archive: Path, dest: Path, created_at: str) -> Path:
    """A copy of a backup under another name whose manifest says it was made at ``created_at``
    (a backup copied from a machine whose clock differs)."""
    with tarfile.open(archive) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())
    manifest["created_at"] = created_at
    shutil.copy(archive, dest)
    rewrite_member(dest, "manifest.json", json.dumps(manifest).encode())
    return dest


def test_keep_never_deletes_the_backup_just_written_even_when_the_others_are_later(cli, world):
    first = make_backup(cli, world)
    ahead = [with_created_at(first, world["out"] / f"praisonmem-backup-2099010{i}T000000Z.tar.gz",
                             f"2099-01-0{i}T00:00:00+00:00") for i in (1, 2)]
    first.unlink()
    new = make_backup(cli, world, "--keep", "2")
    assert sorted(world["out"].iterdir()) == sorted([new, ahead[1]])


def test_keep_orders_by_the_manifest_creation_time_not_the_name(cli, world):
    first = make_backup(cli, world)
    old_by_manifest = with_created_at(first, world["out"] / "praisonmem-backup-20981231T235959Z.tar.gz",
                                      "2001-01-01T00:00:00+00:00")
    new_by_manifest = with_created_at(first, world["out"] / "praisonmem-backup-20010101T000000Z.tar.gz",
                                      "2098-01-01T00:00:00+00:00")
    first.unlink()
    result = cli("--home", world["home"], "backup", "create", "-o", world["out"], "--keep", "2", "--json").json()
    assert result["removed"] == [str(old_by_manifest)]
    assert sorted(world["out"].iterdir()) == sorted([Path(result["path"]), new_by_manifest])


def test_keep_never_counts_or_deletes_a_hand_named_archive(cli, world):
    first = make_backup(cli, world)
    world["out"].mkdir(exist_ok=True)
    hand = [shutil.copy(first, world["out"] / name) and world["out"] / name
            for name in ("praisonmem-backup-before-upgrade.tar.gz", "praisonmem-backup-20260101T000000Z.tar.gz.bak",
                         "my-praisonmem-backup-20260101T000000Z.tar.gz")]
    first.unlink()
    made = [make_backup(cli, world, "--keep", "2") for _ in range(3)]
    assert sorted(world["out"].iterdir()) == sorted(hand + made[1:])
    assert cli("--home", world["home"], "backup", "create", "-o", world["out"], "--keep", "1").exit_code == 0
    assert set(hand) < set(world["out"].iterdir()) and len(list(world["out"].iterdir())) == len(hand) + 1


def test_keep_leaves_a_praisonmem_named_archive_whose_manifest_cannot_be_read(cli, world):
    world["out"].mkdir()
    broken = world["out"] / "praisonmem-backup-20000101T000000Z.tar.gz"
    broken.write_bytes(gzip.compress(b"not a tar"))
    made = [make_backup(cli, world, "--keep", "1") for _ in range(2)]
    assert sorted(world["out"].iterdir()) == sorted([broken, made[1]])


def test_list_is_oldest_first_by_manifest_time(cli, world):
    first = make_backup(cli, world)
    late = with_created_at(first, world["out"] / "praisonmem-backup-20000101T000000Z.tar.gz",
                           "2099-01-01T00:00:00+00:00")
    broken = world["out"] / "praisonmem-backup-19990101T000000Z.tar.gz"
    broken.write_bytes(b"junk")
    rows = cli("backup", "list", world["out"], "--json").json()
    assert [Path(r["file"]) for r in rows] == [first, late, broken]
    assert rows[2]["error"] is not None and rows[2]["created_at"] is None


def test_restore_in_place_finds_a_missing_file_behind_many_that_are_skipped(cli, world):
    sessions = world["home"] / "sessions"
    for i in range(150):
        (sessions / f"bulk-{i:03d}.json").write_text(json.dumps({"session_id": f"bulk-{i:03d}", "messages": []}))
    archive = make_backup(cli, world)
    (sessions / "bulk-149.json").unlink()
    done = cli("--home", world["home"], "backup", "restore", archive, "--yes", "--json").json()
    assert [r["path"] for r in done if r["action"] != "skipped"] == ["home/sessions/bulk-149.json"]
    assert json.loads((sessions / "bulk-149.json").read_text())["session_id"] == "bulk-149"


def test_a_learn_user_with_a_backslash_in_its_name_round_trips(cli, world):
    store = world["home"] / "learn" / "private" / "CORP\\dom" / "persona.json"
    store.parent.mkdir(parents=True)
    store.write_text("{}")
    archive = make_backup(cli, world)
    restored = world["tmp"] / "restored"
    assert cli("backup", "restore", archive, "--to", restored, "--yes").exit_code == 0
    assert (restored / "home/learn/private/CORP\\dom/persona.json").read_text() == "{}"


def test_file_names_that_are_not_utf8_are_backed_up_and_restored_byte_for_byte(cli, world):
    """A name made by hand or under another locale (Latin-1 ``café``, a lone 0xff) is data too."""
    sessions = os.fsencode(world["home"] / "sessions")
    odd = {b"caf\xe9.json": (world["home"] / "sessions" / "my_chat.json").read_bytes(), b"\xff.json": b""}
    for name, data in odd.items():
        with open(os.path.join(sessions, name), "wb") as f:
            f.write(data)
    user = os.path.join(os.fsencode(world["memory"]), b"\xe9ric")
    os.mkdir(user)
    short_term = (world["memory"] / "alice" / "short_term.json").read_bytes()
    with open(os.path.join(user, b"short_term.json"), "wb") as f:
        f.write(short_term)

    archive = make_backup(cli, world)
    with tarfile.open(archive) as tar:
        body = tar.extractfile("manifest.json").read()
    paths = {f["path"] for f in json.loads(body.decode("utf-8"))["files"]}  # valid UTF-8, escapes inside
    assert {"home/sessions/caf\udce9.json", "home/sessions/\udcff.json", "memory/\udce9ric/short_term.json"} <= paths
    assert b'"home/sessions/caf\\udce9.json"' in body
    verified = cli("backup", "verify", archive)
    assert verified.exit_code == 0 and verified.stdout.endswith(": OK (%d files)\n" % len(paths))

    restored = world["tmp"] / "restored"
    done = cli("backup", "restore", archive, "--to", restored, "--yes")
    assert done.exit_code == 0, done.stderr
    assert f"restored {restored}/home/sessions/caf\\udce9.json\n" in done.stdout  # shown escaped
    back = os.fsencode(restored / "home" / "sessions")
    for name, data in odd.items():
        with open(os.path.join(back, name), "rb") as f:
            assert f.read() == data
        assert os.stat(os.path.join(back, name)).st_mode & 0o7777 == 0o600
    with open(os.path.join(os.fsencode(restored / "memory"), b"\xe9ric", b"short_term.json"), "rb") as f:
        assert f.read() == short_term
