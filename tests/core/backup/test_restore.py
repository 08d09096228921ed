"""Putting a backup back: where each archive path lands, what a restore does with what is already there, and
the temp names only a restore gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from praisonmem.core.backup import plan_restore
from praisonmem.core.layout import is_restore_temp
from praisonmem.core.backup.nofollow import Place
from praisonmem.core.backup.restore import destination, plan_items
from praisonmem.core.errors import ProblemsFound, Refused
from praisonmem.core.paths import resolve
from tests.core.backup.archives import entry, manifest, write

SESSION = b'{"session_id": "s", "messages": []}'


@pytest.mark.parametrize("name, temp", [
    (".short_term.json.restore-123-0a1b2c3d.tmp", True),
    (".a\nb.json.restore-1-00000000.tmp", True),  # any name the archive may hold
    ("short_term.json.restore-123-0a1b2c3d.tmp", False),  # no leading dot
    (".short_term.json.restore-123-0a1b2c3.tmp", False),  # 7 hex digits
    (".short_term.json.restore-123-0A1B2C3D.tmp", False),
    (".short_term.json.restore--0a1b2c3d.tmp", False),  # no pid
    (".short_term.json.x1y2.tmp", False),  # the atomic replace's temp, not a restore's
])
def test_a_restore_temp_name_is_exactly_the_one_a_restore_gives(name, temp):
    assert is_restore_temp(name) is temp


@pytest.fixture
def paths(tmp_path):
    return resolve(tmp_path / "home", tmp_path / "project" / "memory", env={})


@pytest.mark.parametrize("name, anchor, parts", [
    ("home/sessions/s.json", "home", ("sessions",)),
    ("home/sessions/projects/0123abcd/p.json", "home", ("sessions", "projects", "0123abcd")),
    ("home/state/session_spill/s.jsonl", "home", ("state", "session_spill")),
    ("home/learn/private/u/persona.json", "home", ("learn", "private", "u")),
    ("memory/u/episodic/2026-11-30.json", "project/memory", ("u", "episodic")),
])
def test_each_root_lands_in_the_home_the_state_dir_or_the_memory_dir(paths, tmp_path, name, anchor, parts):
    place = destination(name, paths, None)
    assert place == Place(tmp_path / anchor, parts, name.rsplit("/", 1)[1])
    assert destination(name, paths, tmp_path / "to") == Place(tmp_path / "to", tuple(name.split("/")[:-1]),
                                                               name.rsplit("/", 1)[1])


def test_a_relative_memory_dir_is_walked_from_the_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = resolve(tmp_path / "home", "rel/memory", env={})
    assert destination("memory/u/short_term.json", paths, None) == Place(Path("."), ("rel", "memory", "u"),
                                                                         "short_term.json")


def test_what_a_restore_does_with_each_file(paths, tmp_path):
    files = {"home/sessions/s.json": SESSION, "home/sessions/new.json": SESSION,
             "home/sessions/sessions.db-wal": b"frames"}
    listed = [entry(name, data) for name, data in files.items()]
    listed.append(entry("memory/u/short_term.json", b"[", damaged="invalid JSON"))
    archive = write(tmp_path / "a.tar.gz", {**files, "memory/u/short_term.json": b"["}, head=manifest(listed))
    (tmp_path / "home" / "sessions").mkdir(parents=True)
    (tmp_path / "home" / "sessions" / "s.json").write_bytes(b"{}")
    for conflict, on_existing in (("skip", "skip"), ("replace", "replace")):
        items = {i.name: (i.action, i.detail) for i in plan_items(archive, paths, to=None, on_conflict=conflict)}
        assert items == {
            "home/sessions/s.json": (on_existing, None), "home/sessions/new.json": ("restore", None),
            "home/sessions/sessions.db-wal": ("skip", "a SQLite sidecar an older praisonmem copied as it was; not "
                                                      "restored (beside another copy of its database it could "
                                                      "corrupt it)"),
            "memory/u/short_term.json": ("fail", "did not parse when it was backed up: invalid JSON; not restored "
                                                 "(tar -xzf the archive to see it)")}


def test_one_bad_entry_refuses_the_whole_archive_and_a_mismatch_fails_it(paths, tmp_path):
    unsafe = write(tmp_path / "unsafe.tar.gz", {"home/sessions/s.json": SESSION, "memory/u/.bashrc": b"x"})
    with pytest.raises(Refused, match=r"^refusing archive entry 'memory/u/.bashrc': not a file FileMemory writes"):
        plan_restore(unsafe, paths)
    listed = manifest([entry("home/sessions/s.json", SESSION)])
    changed = write(tmp_path / "changed.tar.gz", {"home/sessions/s.json": SESSION.upper()}, head=listed)
    with pytest.raises(ProblemsFound, match=r"failed verification: 'home/sessions/s.json' \(checksum mismatch\); "
                                            "nothing written"):
        plan_restore(changed, paths)
    assert not (tmp_path / "home").exists()


def test_a_restore_into_a_new_directory_writes_each_file_as_archived(paths, tmp_path):
    files = {"home/sessions/s.json": SESSION, "memory/u/short_term.json": b"[]"}
    plan = plan_restore(write(tmp_path / "a.tar.gz", files), paths, to=tmp_path / "to")
    assert plan.question == "Restore 2 files?"
    outcome = plan.run(dry_run=False, progress=None)
    assert [(c.action.value, c.fields["path"]) for c in outcome.changes] == [
        ("restored", "home/sessions/s.json"), ("restored", "memory/u/short_term.json")]
    assert {p.relative_to(tmp_path / "to").as_posix(): p.read_bytes() for p in (tmp_path / "to").rglob("*")
            if p.is_file() and not p.name.endswith(".lock")} == files
