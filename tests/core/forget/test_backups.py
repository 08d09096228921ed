"""The subject in backups: which archives hold them (streamed, bounded, safe against crafted archives), and an
archive rewritten without them that verifies and restores to the original minus the subject, byte for byte."""

from __future__ import annotations

import gzip
import io
import json
import os
import sqlite3
import tarfile
import tempfile
import tracemalloc
from pathlib import Path

import pytest

from praisonmem.core.backup import create, verify
from praisonmem.core.backup.restore import plan_restore
from praisonmem.core.forget import backups
from praisonmem.core.forget.model import Subject, SubjectKind
from praisonmem.core.paths import resolve
from tests.core.backup.archives import entry, manifest, write
from tests.core.forget.stores import MemoryUsers, SessionFiles, TranscriptDb

ALICE = Subject(SubjectKind.user, "alice")
SECRET = "Alice keeps the spare key under the blue flowerpot"
ASIDE = "Alice's sister is visiting from Lisbon in March"
BOB = "Bob takes the 7:40 train to work every weekday"
ESCAPED = f"praisonmem-test-escaped-{os.getpid()}"
GROUP = "Bob booked the café table for the whole team"


def session(sid: str, user: str, messages: list[tuple[str, str | None]]) -> str:
    doc = {"session_id": sid, "user_id": user, "title": f"chat {sid}", "messages": [
        {"role": "user", "content": text, "metadata": {"user_id": who} if who else {}} for text, who in messages]}
    return json.dumps(doc, indent=2, ensure_ascii=False)


def memory_items(items: list[tuple[str, str]]) -> str:
    return json.dumps([{"id": i, "content": text, "metadata": {}, "importance": 0.5, "created_at": 1796000000.0}
                       for i, text in items], indent=2)


@pytest.fixture
def machine(tmp_path):
    """A home with alice's and bob's sessions, a group session holding both, their FileMemory, and a backup."""
    home, memory = tmp_path / "home", tmp_path / "project" / ".praisonai" / "memory"
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "s-alice.json").write_text(session("s-alice", "alice", [(SECRET, None)]), "utf-8")
    (sessions / "s-bob.json").write_text(session("s-bob", "bob", [(BOB, None)]), "utf-8")
    (sessions / "s-group.json").write_text(session("s-group", "bob", [(GROUP, "bob"), (ASIDE, "alice")]), "utf-8")
    for user, items in (("alice", [("a1", SECRET)]), ("bob", [("b1", BOB)])):
        (memory / user).mkdir(parents=True)
        (memory / user / "long_term.json").write_text(memory_items(items), "utf-8")
    paths = resolve(home, memory, env={})
    out = tmp_path / "backups"
    archive = Path(create.create(paths, output=out, include=("sessions", "memory"))["path"])
    return tmp_path, paths, archive


def stores_of(home: Path, memory: Path) -> list:
    return [SessionFiles(home / "sessions"), MemoryUsers(memory)]


def forget_live(paths) -> list:
    stores = stores_of(paths.data.path, paths.memory_dir)
    plans = [s.plan(ALICE) for s in stores]
    for store, plan in zip(stores, plans):
        store.erase(plan)
    return plans


def tree_stores(tree: Path) -> list:
    return stores_of(tree / "home", tree / "memory")


def tar_blocks(archive: Path) -> dict[str, bytes]:
    """Each member's header and data blocks exactly as they are in the decompressed tar stream."""
    raw = gzip.decompress(archive.read_bytes())
    out = {}
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        for member in tar:
            end = member.offset_data + member.size + (-member.size % tarfile.BLOCKSIZE)
            out[member.name] = raw[member.offset:end]
    return out


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")}


# ---------------------------------------------------------------- holding


def test_the_backups_holding_the_subject_are_named_by_member_and_record(machine):
    tmp_path, paths, archive = machine
    plans = forget_live(paths)
    [held] = backups.holding(ALICE, plans, [archive.parent])
    assert held.archive == archive and held.problem is None and held.unchecked == []
    group = session("s-group", "bob", [(GROUP, "bob"), (ASIDE, "alice")]).encode()
    assert [(m.name, m.why) for m in held.members] == [
        ("home/sessions/s-alice.json", "the subject's file (the forget removed it whole)"),
        ("home/sessions/s-group.json", f"home/sessions/s-group.json: offset {group.index(ASIDE.encode())} holds the "
                                       "text of session-dir record s-group; home/sessions/s-group.json: offset "
                                       f"{group.index(b'alice')} holds the user id"),
        ("memory/alice/long_term.json", "the subject's file (the forget removed it whole)")]
    for member in held.members:
        assert SECRET not in member.why and ASIDE not in member.why


def test_a_backup_without_the_subject_is_not_listed_and_a_dry_run_is_found_by_text(machine):
    tmp_path, paths, archive = machine
    stores = stores_of(paths.data.path, paths.memory_dir)
    plans = [s.plan(ALICE) for s in stores]  # nothing erased yet: found by the texts alone
    [held] = backups.holding(ALICE, plans, [archive.parent])
    assert [m.name for m in held.members] == ["home/sessions/s-alice.json", "home/sessions/s-group.json",
                                              "memory/alice/long_term.json"]
    carol = Subject(SubjectKind.user, "carol")
    assert backups.holding(carol, [s.plan(carol) for s in stores], [archive.parent]) == []


def test_a_backup_under_a_root_is_found_by_its_manifest_and_other_archives_are_not(machine):
    tmp_path, paths, archive = machine
    plans = forget_live(paths)
    stray = tmp_path / "project" / "old" / "copy.tar.gz"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(archive.read_bytes())
    other = tmp_path / "project" / "old" / "site.tar.gz"
    with tarfile.open(other, "w:gz") as tar:
        info = tarfile.TarInfo("index.html")
        data = SECRET.encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    found = backups.holding(ALICE, plans, [tmp_path / "nowhere"], roots=[tmp_path / "project"])
    assert [h.archive for h in found] == [stray]


def _link(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


@pytest.mark.parametrize("build, problem", [
    (lambda p: write(p, {"home/sessions/../../escape.json": SECRET.encode()}),
     "refusing archive entry 'home/sessions/../../escape.json': a path with '..'"),
    (lambda p: write(p, {}, head=manifest([entry("home/sessions/s.json", b"{}")]),
                     members=[(_link("home/sessions/s.json", "/etc/passwd"), None)]),
     "{archive}: unsafe entry 'home/sessions/s.json': a link; not read further"),
    (lambda p: write(p, {"home/sessions/s.json": SECRET.encode()},
                     head=manifest([entry("home/sessions/s.json", SECRET.encode())]),
                     members=[(_link(f"home/sessions/../../../{ESCAPED}", "/etc/passwd"), None)]),
     f"{{archive}}: unsafe entry 'home/sessions/../../../{ESCAPED}': a link; not read further"),
], ids=["traversal", "link", "link-after-a-good-member"])
def test_a_crafted_archive_is_a_problem_and_nothing_escapes(tmp_path, build, problem):
    out = tmp_path / "backups"
    out.mkdir()
    archive = build(out / "praisonmem-backup-20261130T020000Z.tar.gz")
    [held] = backups.holding(ALICE, [], [out])
    assert (held.members, held.problem) == ([], problem.format(archive=archive))
    result = backups.rewrite(held, ALICE, [], stores_for=tree_stores)
    assert result.problem.startswith("not rewritten: ") and result.dropped == result.rewritten == []
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["backups", archive.name]
    forced = backups.rewrite(backups.Held(archive), ALICE, [], stores_for=tree_stores)  # even if asked directly
    assert forced.problem.startswith(f"{archive}: left as it was: ")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["backups", archive.name]
    assert not Path(tempfile.gettempdir(), ESCAPED).exists()  # where the private tree's ../.. would lead


def test_a_huge_member_is_refused_before_it_is_read_and_memory_stays_bounded(tmp_path):
    out = tmp_path / "backups"
    out.mkdir()
    big = 64 << 20  # 64 MiB of zeros: a few kB compressed
    zeros = tarfile.TarInfo("home/sessions/big.json")
    zeros.size = big
    liar = out / "praisonmem-backup-20261130T020000Z.tar.gz"
    write(liar, {}, head=manifest([entry("home/sessions/big.json", b"{}")]), members=[(zeros, bytes(big))])
    honest = out / "praisonmem-backup-20261130T030000Z.tar.gz"
    listed = manifest([{**entry("home/sessions/big.json", b""), "size": big,
                        "sha256": __import__("hashlib").sha256(bytes(big)).hexdigest()}])
    write(honest, {}, head=listed, members=[(zeros, bytes(big))])
    tracemalloc.start()
    try:
        found = backups.holding(ALICE, [], [out])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(h.archive, h.problem) for h in found] == [
        (liar, f"{liar}: 'home/sessions/big.json' is larger than the manifest says; not read further")]
    assert peak < 16 << 20, peak  # the 64 MiB member was streamed, not read whole


# ---------------------------------------------------------------- rewrite


def test_a_rewritten_backup_restores_to_the_original_minus_the_subject_byte_for_byte(machine):
    tmp_path, paths, archive = machine
    archive.chmod(0o640)
    old_blocks = tar_blocks(archive)
    old_bytes = archive.read_bytes()
    plans = forget_live(paths)
    [held] = backups.holding(ALICE, plans, [archive.parent])
    keep_open = os.open(archive, os.O_RDONLY)  # the old archive's inode, as a reader of it would see it
    try:
        result = backups.rewrite(held, ALICE, plans, stores_for=tree_stores)
        scrubbed = os.pread(keep_open, len(old_bytes) + 1, 0)
    finally:
        os.close(keep_open)
    assert (result.problem, result.notes) == (None, [])
    assert result.dropped == ["home/sessions/s-alice.json", "memory/alice/long_term.json"]
    assert result.rewritten == ["home/sessions/s-group.json"]
    assert verify(archive)["ok"] is True
    assert archive.stat().st_mode & 0o777 == 0o640
    assert scrubbed == bytes(len(old_bytes))  # the old bytes were overwritten once no name reached them
    assert sorted(os.listdir(archive.parent)) == [archive.name]  # no temp file, no copy of the old archive
    # every other member byte-identical (header and data), in the same order; the manifest's digests follow
    new_blocks = tar_blocks(archive)
    assert list(new_blocks) == ["manifest.json", "home/sessions/s-bob.json", "home/sessions/s-group.json",
                                "memory/bob/long_term.json"]
    for name in ("home/sessions/s-bob.json", "memory/bob/long_term.json"):
        assert new_blocks[name] == old_blocks[name]
    restored = tmp_path / "restored"
    plan_restore(archive, paths, to=restored).run(dry_run=False, progress=None)
    live = {**{f"home/sessions/{k}": v for k, v in files_under(paths.data.path / "sessions").items()},
            **{f"memory/{k}": v for k, v in files_under(paths.memory_dir).items()}}
    assert files_under(restored) == live
    assert backups.holding(ALICE, plans, [archive.parent]) == []


def test_another_hard_link_to_the_old_archive_is_said_and_left_alone(machine):
    tmp_path, paths, archive = machine
    old = archive.read_bytes()
    other = tmp_path / "elsewhere.tar.gz"
    os.link(archive, other)
    plans = forget_live(paths)
    [held] = backups.holding(ALICE, plans, [archive.parent])
    result = backups.rewrite(held, ALICE, plans, stores_for=tree_stores)
    assert result.problem is None
    assert result.notes == [f"{archive}: 1 other hard link to the old archive still hold its bytes"]
    assert other.read_bytes() == old


def test_an_archive_the_stores_cannot_clean_is_left_as_it_was(machine):
    tmp_path, paths, archive = machine
    plans = forget_live(paths)
    [held] = backups.holding(ALICE, plans, [archive.parent])
    before = archive.read_bytes(), archive.stat().st_mtime_ns
    result = backups.rewrite(held, ALICE, plans, stores_for=lambda tree: [MemoryUsers(tree / "memory")])
    assert result.problem == (f"{archive}: left as it was: the rewritten archive still holds the subject "
                              "('home/sessions/s-alice.json': the subject's file (the forget removed it whole))")
    assert (archive.read_bytes(), archive.stat().st_mtime_ns) == before
    assert sorted(os.listdir(archive.parent)) == [archive.name]
    nothing = backups.rewrite(held, ALICE, plans, stores_for=lambda tree: [])
    assert nothing.problem == (f"{archive}: left as it was: the stores found nothing of the subject to erase in it "
                               "(what holds the subject is out of their reach)")


def test_only_the_archives_backup_list_lists_are_taken_from_a_backup_dir(tmp_path):
    out = tmp_path / "backups"
    out.mkdir()
    (out / "notes.tar.gz").write_bytes(b"not a backup")  # not a name backup create gives: not ours to judge
    (out / "praisonmem-backup-20261130T020000Z.tar.gz").write_bytes(b"damaged")
    [held] = backups.holding(ALICE, [], [out])
    assert (held.archive.name, held.problem) == (
        "praisonmem-backup-20261130T020000Z.tar.gz",
        f"{out / 'praisonmem-backup-20261130T020000Z.tar.gz'}: cannot read the archive (not a gzip file)")


def test_an_archive_that_fails_its_check_is_not_rewritten(machine):
    tmp_path, paths, archive = machine
    plans = forget_live(paths)
    [held] = backups.holding(ALICE, plans, [archive.parent])
    raw = gzip.decompress(archive.read_bytes()).replace(BOB.encode(), BOB.upper().encode())
    archive.write_bytes(gzip.compress(raw))
    before = archive.read_bytes()
    result = backups.rewrite(held, ALICE, plans, stores_for=tree_stores)
    assert result.problem == (f"{archive}: left as it was: it fails its check ('home/sessions/s-bob.json': checksum "
                              "mismatch)")
    assert archive.read_bytes() == before


def test_an_archive_that_changes_while_it_is_rewritten_is_left_as_it_was(machine):
    tmp_path, paths, archive = machine
    plans = forget_live(paths)
    [held] = backups.holding(ALICE, plans, [archive.parent])

    def meanwhile(tree):
        os.utime(archive, (1796000000, 1796000000))  # backup create --keep, or another forget, got there first
        return tree_stores(tree)

    result = backups.rewrite(held, ALICE, plans, stores_for=meanwhile)
    assert result.problem == f"{archive}: left as it was: it changed while it was rewritten"
    assert [m.name for m in backups.holding(ALICE, plans, [archive.parent])[0].members] == [
        m.name for m in held.members]
    assert sorted(os.listdir(archive.parent)) == [archive.name]


def test_a_live_store_handed_to_the_rewrite_is_left_alone(machine):
    tmp_path, paths, archive = machine
    plans = forget_live(paths)
    [held] = backups.holding(ALICE, plans, [archive.parent])
    other = tmp_path / "other-home" / "sessions"
    other.mkdir(parents=True)
    (other / "s-alice.json").write_text(session("s-alice", "alice", [(SECRET, None)]), "utf-8")
    before = files_under(other)
    result = backups.rewrite(held, ALICE, plans, stores_for=lambda tree: [SessionFiles(other), *tree_stores(tree)])
    assert result.problem is None
    assert files_under(other) == before


def test_a_database_member_is_rewritten_through_its_store_and_the_real_library_reads_what_is_left(tmp_path):
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore

    home = tmp_path / "home"
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    writer = SqliteTranscriptStore(session_dir=str(sessions))
    for sid, user, text in (("s-alice", "alice", SECRET), ("s-bob", "bob", BOB)):
        writer.set_agent_info(sid, agent_name="Support", user_id=user)
        writer.add_message(sid, "user", text)
    paths = resolve(home, tmp_path / "memory", env={})
    archive = Path(create.create(paths, output=tmp_path / "backups", include=("sessions",))["path"])
    live = TranscriptDb(sessions / "sessions.db")
    plans = [live.plan(ALICE)]
    live.erase(plans[0])
    [held] = backups.holding(ALICE, plans, [archive.parent])
    assert [m.name for m in held.members] == ["home/sessions/sessions.db"]
    assert held.members[0].why.endswith("holds the text of gateway-transcripts record s-alice")
    result = backups.rewrite(held, ALICE, plans, stores_for=lambda tree: [TranscriptDb(
        tree / "home" / "sessions" / "sessions.db")])
    assert (result.problem, result.dropped, result.rewritten) == (None, [], ["home/sessions/sessions.db"])
    assert verify(archive)["ok"] is True
    restored = tmp_path / "restored"
    plan_restore(archive, paths, to=restored).run(dry_run=False, progress=None)
    db = restored / "home" / "sessions" / "sessions.db"
    assert SECRET.encode() not in db.read_bytes() and BOB.encode() in db.read_bytes()
    reader = SqliteTranscriptStore(session_dir=str(db.parent))
    assert [m["content"] for m in reader.get_chat_history("s-bob")] == [BOB]
    assert reader.get_chat_history("s-alice") == []
    assert backups.holding(ALICE, plans, [archive.parent]) == []


def test_frames_a_store_leaves_in_a_wal_are_checkpointed_into_the_database_the_archive_gets(tmp_path):
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore

    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    writer = SqliteTranscriptStore(session_dir=str(home / "sessions"))
    for sid, user, text in (("s-alice", "alice", SECRET), ("s-bob", "bob", BOB)):
        writer.set_agent_info(sid, agent_name="Support", user_id=user)
        writer.add_message(sid, "user", text)
    paths = resolve(home, tmp_path / "memory", env={})
    archive = Path(create.create(paths, output=tmp_path / "backups", include=("sessions",))["path"])
    plans = [TranscriptDb(home / "sessions" / "sessions.db").plan(ALICE)]
    [held] = backups.holding(ALICE, plans, [archive.parent])
    kept: list[sqlite3.Connection] = []

    class StillOpen(TranscriptDb):
        """Erases in WAL mode and keeps its connection: the change is in the -wal, not yet in the database."""

        def erase(self, plan):
            db = sqlite3.connect(self.path)
            db.execute("PRAGMA journal_mode = wal")
            db.execute("PRAGMA wal_autocheckpoint = 0")
            db.execute("PRAGMA secure_delete = ON")
            db.executemany("DELETE FROM sessions WHERE session_id = ?", [(e.key,) for e in plan.erasures])
            db.commit()
            kept.append(db)
            return len(plan.erasures)

    try:
        result = backups.rewrite(held, ALICE, plans,
                                 stores_for=lambda tree: [StillOpen(tree / "home" / "sessions" / "sessions.db")])
    finally:
        for db in kept:
            db.close()
    assert (result.problem, result.rewritten) == (None, ["home/sessions/sessions.db"])
    assert backups.holding(ALICE, plans, [archive.parent]) == []
