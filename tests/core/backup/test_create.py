"""Writing a backup: what it holds and leaves out, the names praisonmem gives archives, and rotation's count."""

from __future__ import annotations

import hashlib
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from praisonmem.core.backup import create, read_manifest, verify
from praisonmem.core.backup.create import NAMED, parse_include, prune
from praisonmem.core.errors import TargetExists, UsageError
from praisonmem.core.paths import resolve
from tests.core.backup.archives import manifest, write


@pytest.mark.parametrize("name, ok", [
    ("praisonmem-backup-20261130T020000Z.tar.gz", True),
    ("praisonmem-backup-20261130T020000Z-1.tar.gz", True),
    ("praisonmem-backup-20261130T020000Z-999999999.tar.gz", True),  # 9 digits
    ("praisonmem-backup-20261130T020000Z-1234567890.tar.gz", False),  # 10
    ("praisonmem-backup-20261130T020000Z-0.tar.gz", False),  # the first repeat is -1
    ("praisonmem-backup-20261130T020000Z-01.tar.gz", False),
    ("praisonmem-backup-20261130t020000z.tar.gz", False),
    ("praisonmem-backup-20261130T020000.tar.gz", False),  # no Z: not a UTC stamp
    ("praisonmem-backup-before-upgrade.tar.gz", False),
    ("praisonmem-backup-20261130T020000Z.tar.gz.bak", False),
])
def test_only_the_names_praisonmem_gives_are_its_own(name, ok):
    assert (NAMED.fullmatch(name) is not None) is ok


@pytest.mark.parametrize("text, parts", [(None, ("sessions", "memory", "learn", "chroma")), ("memory", ("memory",)),
                                         (" sessions , learn ,", ("sessions", "learn")), ("chroma", ("chroma",))])
def test_include_takes_a_comma_list_of_the_four(text, parts):
    assert parse_include(text) == parts


@pytest.mark.parametrize("text", ["", ",", "session", "sessions,spill"])
def test_include_of_nothing_or_of_something_else_is_a_usage_error(text):
    with pytest.raises(UsageError, match="--include takes a comma list of sessions, memory, learn"):
        parse_include(text)


def test_a_new_name_in_the_same_second_takes_the_next_counter(tmp_path, monkeypatch):
    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2026, 11, 30, 2, 0, 0, tzinfo=timezone.utc)

    monkeypatch.setattr(create, "datetime", Frozen)
    assert create._archive_name(tmp_path).name == "praisonmem-backup-20261130T020000Z.tar.gz"
    for name in ("praisonmem-backup-20261130T020000Z.tar.gz", "praisonmem-backup-20261130T020000Z-7.tar.gz",
                 "praisonmem-backup-20261130T015959Z-9.tar.gz", "praisonmem-backup-20261130T020000Z-8.tar.gz.bak"):
        (tmp_path / name).write_bytes(b"")
    assert create._archive_name(tmp_path).name == "praisonmem-backup-20261130T020000Z-8.tar.gz"


@pytest.mark.parametrize("output, expected", [("new.tar.gz", "file"), ("dir", "directory")])
def test_the_destination_is_a_new_tar_gz_name_or_a_directory(tmp_path, output, expected):
    target = tmp_path / output
    directory, name = create._destination(target)
    assert (directory, name) == ((tmp_path, target) if expected == "file" else (target, None))


def test_an_existing_archive_or_another_archive_suffix_is_refused(tmp_path):
    (tmp_path / "old.tar.gz").write_bytes(b"")
    with pytest.raises(TargetExists):
        create._destination(tmp_path / "old.tar.gz")
    for name in ("x.zip", "x.tgz", "x.tar", "x.gz"):
        with pytest.raises(UsageError, match="a backup file name must end in .tar.gz"):
            create._destination(tmp_path / name)


# ---------------------------------------------------------------- rotation


def archive(directory: Path, name: str, created_at: str | None) -> Path:
    head = {**manifest([]), "created_at": created_at}
    if created_at is None:
        del head["created_at"]
    return write(directory / name, {}, head=head)


def stamp(day: int) -> str:
    return f"praisonmem-backup-202611{day:02d}T000000Z.tar.gz"


def test_keep_n_keeps_the_written_one_and_the_n_minus_1_newest_by_their_manifests(tmp_path):
    # names in one order, manifests in the other: the manifest decides
    made = [archive(tmp_path, stamp(day), f"2026-11-{31 - day:02d}T00:00:00+00:00") for day in range(1, 6)]
    written = archive(tmp_path, stamp(20), "2026-01-01T00:00:00+00:00")  # the oldest, and never deleted
    assert prune(tmp_path, 3, written) == [made[4], made[3], made[2]]
    assert sorted(tmp_path.iterdir()) == sorted([made[0], made[1], written])


def test_keep_1_leaves_only_the_written_one_of_praisonmem_s_own(tmp_path):
    made = [archive(tmp_path, stamp(day), f"2026-11-{day:02d}T00:00:00+00:00") for day in range(1, 4)]
    hand = archive(tmp_path, "praisonmem-backup-before-upgrade.tar.gz", "2000-01-01T00:00:00+00:00")
    written = archive(tmp_path, stamp(20), "2026-11-20T00:00:00+00:00")
    assert sorted(prune(tmp_path, 1, written)) == made
    assert sorted(tmp_path.iterdir()) == sorted([hand, written])


def test_an_archive_whose_time_cannot_be_read_is_neither_counted_nor_deleted(tmp_path):
    broken = tmp_path / stamp(1)
    broken.write_bytes(b"\x1f\x8b not gzip")
    naive = archive(tmp_path, stamp(2), "2026-11-02T00:00:00")  # no offset: no time to order by
    missing = archive(tmp_path, stamp(3), None)  # no created_at at all
    del_me = [archive(tmp_path, stamp(day), f"2026-11-{day:02d}T00:00:00+00:00") for day in (4, 5)]
    kept = archive(tmp_path, stamp(6), "2026-11-06T00:00:00+00:00")
    written = archive(tmp_path, stamp(20), "2026-11-20T00:00:00+00:00")
    assert "created_at" not in read_manifest(missing)  # it is a backup; only its time is not there
    assert prune(tmp_path, 2, written) == del_me
    assert sorted(tmp_path.iterdir()) == sorted([broken, naive, missing, kept, written])


# ---------------------------------------------------------------- what an archive holds


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    sessions = home / "sessions"
    (sessions / "projects" / "0123abcd").mkdir(parents=True)
    (sessions / "sub").mkdir()
    (sessions / "a.json").write_text('{"session_id": "a", "messages": []}')
    (sessions / "projects" / "0123abcd" / "p.json").write_text('{"session_id": "p", "messages": []}')
    (sessions / "a.json.lock").write_text("")
    (sessions / ".a.json.x1y2.tmp").write_text("half")
    (sessions / "sessions.db-wal").write_bytes(b"")  # a sidecar: never archived on its own
    (sessions / "sub" / "x.json").write_text("{}")
    (sessions / "notes.txt").write_text("kept: a file directly in sessions/ is the store's")
    memory = tmp_path / "memory" / "u"
    memory.mkdir(parents=True)
    (memory / "short_term.json").write_text("[]")
    (memory / "authorized_keys").write_text("ssh-ed25519 AAAA")
    return home


def test_an_archive_holds_the_layout_s_files_byte_for_byte_and_names_what_it_leaves_out(home, tmp_path):
    paths = resolve(home, tmp_path / "memory", env={})
    out = tmp_path / "out"
    result = create.create(paths, output=out, keep=0)
    archive_path = Path(result["path"])
    files = {f["path"]: f for f in read_manifest(archive_path)["files"]}
    assert sorted(files) == ["home/sessions/a.json", "home/sessions/notes.txt",
                             "home/sessions/projects/0123abcd/p.json", "memory/u/short_term.json"]
    for name, source in (("home/sessions/a.json", home / "sessions/a.json"),
                         ("memory/u/short_term.json", tmp_path / "memory/u/short_term.json")):
        data = source.read_bytes()
        assert (files[name]["size"], files[name]["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())
    assert [(o["path"], o["reason"]) for o in result["left_out"]] == [
        ("home/sessions/sub/", "a directory no store keeps"),
        ("memory/u/authorized_keys", "not a file FileMemory writes (config.json, short_term.json, long_term.json, "
                                     "entities.json, summaries.json, or a .json file in episodic/, sessions/ or "
                                     "checkpoints/, in a user directory at most 4 levels deep)")]
    assert (result["files"], result["damaged"], result["removed"]) == (4, [], [])
    assert result["size"] == archive_path.stat().st_size and verify(archive_path)["ok"]
    assert sorted(p.name for p in out.iterdir()) == [archive_path.name]  # no temp file left


def test_a_damaged_memory_file_is_archived_marked_and_rotation_is_skipped(home, tmp_path):
    paths = resolve(home, tmp_path / "memory", env={})
    out = tmp_path / "out"
    out.mkdir()
    older = archive(out, stamp(1), "2026-11-01T00:00:00+00:00")
    (tmp_path / "memory/u/short_term.json").write_text('[{"id": ')
    result = create.create(paths, output=out, keep=1)
    assert [d["path"] for d in result["damaged"]] == ["memory/u/short_term.json"]
    assert result["removed"] == [] and older.exists()  # the whole older backup survives
    entry = {f["path"]: f for f in read_manifest(Path(result["path"]))["files"]}["memory/u/short_term.json"]
    assert entry["damaged"] == "invalid JSON at line 1 column 9: expecting value" and entry["size"] == len('[{"id": ')


def test_nothing_to_back_up_is_not_found_naming_the_roots(tmp_path):
    from praisonmem.core.errors import NotFound

    paths = resolve(tmp_path / "home", tmp_path / "memory", env={})
    os.makedirs(tmp_path / "home" / "sessions")
    with pytest.raises(NotFound, match="nothing to back up: no memory under .*memory"):
        create.create(paths, output=tmp_path / "out", include=("memory",))
