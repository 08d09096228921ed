"""The proof: a re-plan that finds nothing, no erased text in any raw byte of the stores' files or of any other
file under the roots, servers asked; residue named by file, offset and record key (never the text)."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from praisonmem.core.forget import proof
from praisonmem.core.forget.model import Erasure, StorePlan, Subject, SubjectKind, Verdict, Verified
from tests.core.forget.stores import JsonStore, ServerStore, SqliteStore

ALICE = Subject(SubjectKind.user, "alice")
SECRET = "Alice keeps the spare key under the blue flowerpot"
NOTE = "Zoë's \"café\" order: a flat white\twith oat milk"  # non-ASCII, a quote, a control character
BOB = "Bob takes the 7:40 train to work every weekday"


def notes(path: Path, *, ensure_ascii: bool = True) -> JsonStore:
    store = JsonStore(path, ensure_ascii=ensure_ascii)
    store.write([{"id": "n1", "user": "alice", "text": SECRET}, {"id": "n2", "user": "alice", "text": NOTE},
                 {"id": "n3", "user": "bob", "text": BOB}])
    return store


def forget(*stores, roots=(), **kw) -> list[Verdict]:
    plans = [s.plan(ALICE) for s in stores]
    removed = [s.erase(p) for s, p in zip(stores, plans)]
    return proof.prove(list(stores), plans, ALICE, removed=removed, roots=roots, **kw)


def by_store(verdicts: list[Verdict]) -> dict[str, Verdict]:
    return {v.store: v for v in verdicts}


def assert_no_text(verdicts: list[Verdict]) -> None:
    for verdict in verdicts:
        for text in (SECRET, NOTE, json.dumps(NOTE)[1:-1], "flowerpot", "oat milk"):
            assert text not in (verdict.detail or "")


# ---------------------------------------------------------------- a store's own files


def test_a_clean_store_and_a_clean_tree_are_absent(tmp_path):
    store = notes(tmp_path / "notes.json")
    verdicts = forget(store, roots=[tmp_path])
    assert [(v.store, v.path, v.removed, v.verified) for v in verdicts] == [
        ("json-notes", str(tmp_path / "notes.json"), 2, Verified.absent),
        ("sweep", str(tmp_path.resolve()), 0, Verified.absent)]
    assert verdicts[0].detail is None
    assert verdicts[1].detail == f"0 files under {tmp_path.resolve()} that are no store's"


def test_a_record_the_re_plan_still_finds_is_residue_named_by_its_key(tmp_path):
    store = notes(tmp_path / "notes.json")
    plans = [store.plan(ALICE)]  # nothing erased
    [verdict, _] = proof.prove([store], plans, ALICE, removed=[0])
    assert verdict.verified is Verified.residue
    assert verdict.detail.startswith("still holds 2 records: n1, n2; ")
    assert_no_text([verdict])


@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_text_left_in_a_stores_file_is_found_in_the_form_it_was_written(tmp_path, ensure_ascii):
    """The store forgot the records but a second field still holds their text, JSON-escaped as the store
    writes it (``\\u00eb`` and ``\\"`` with ensure_ascii, ``ë`` and ``\\"`` without)."""
    store = notes(tmp_path / "notes.json", ensure_ascii=ensure_ascii)
    plans = [store.plan(ALICE)]
    store.erase(plans[0])
    raw = json.dumps({"records": store.records(), "summary": "x" * 10 + NOTE}, ensure_ascii=ensure_ascii)
    assert (r"Zo\u00eb" in raw) is ensure_ascii and r"\"caf" in raw
    (tmp_path / "notes.json").write_text(raw, "utf-8")
    [verdict, _] = proof.prove([store], plans, ALICE, removed=[2])
    offset = raw.encode("utf-8").index(b"Zo")
    assert (verdict.verified, verdict.detail) == (
        Verified.residue, f"{tmp_path / 'notes.json'}: offset {offset} holds the text of json-notes record n2")


def test_the_subjects_identifier_left_in_a_stores_file_is_residue(tmp_path):
    store = notes(tmp_path / "notes.json")
    plans = [store.plan(ALICE)]
    store.erase(plans[0])
    (tmp_path / "notes.json").write_text(json.dumps({"records": store.records(), "owner": "alice"}))
    [verdict, _] = proof.prove([store], plans, ALICE)
    assert verdict.verified is Verified.residue
    assert verdict.detail.endswith("holds the user id")


def test_text_in_an_sqlite_free_page_is_found_and_secure_delete_leaves_none(tmp_path):
    plain = SqliteStore(tmp_path / "plain.db", secure=False)
    zeroed = SqliteStore(tmp_path / "zeroed.db", secure=True)
    for store in (plain, zeroed):
        store.add([("n1", "alice", SECRET), ("n2", "bob", BOB)])
    verdicts = by_store(forget(plain, roots=[tmp_path]))
    assert verdicts["sqlite-notes"].verified is Verified.residue
    assert verdicts["sqlite-notes"].detail.startswith(f"{tmp_path / 'plain.db'}: offset ")
    assert verdicts["sqlite-notes"].detail.endswith(" holds the text of sqlite-notes record n1")
    assert verdicts["sqlite-notes"].removed == 1
    assert forget(zeroed)[0].verified is Verified.absent


def test_a_long_text_split_over_sqlite_overflow_pages_is_found(tmp_path):
    store = SqliteStore(tmp_path / "long.db", secure=False)
    long_text = " ".join(f"Alice's diary line {i} about the garden" for i in range(400))  # ~15 kB: 4 pages
    store.add([("n1", "alice", long_text)])
    raw = (tmp_path / "long.db").read_bytes()
    assert long_text.encode() not in raw  # the overflow page headers cut the text
    verdict = forget(store)[0]
    assert verdict.verified is Verified.residue and "record n1" in verdict.detail


def test_text_in_a_utf16_database_is_found(tmp_path):
    store = SqliteStore(tmp_path / "wide.db", secure=False, encoding="UTF-16le")
    store.add([("n1", "alice", SECRET)])
    assert SECRET.encode("utf-16-le") in (tmp_path / "wide.db").read_bytes()
    verdict = forget(store)[0]
    assert verdict.verified is Verified.residue and verdict.detail.endswith("record n1")


def test_text_in_a_wal_is_found(tmp_path):
    store = SqliteStore(tmp_path / "w.db", secure=True, wal=True)
    try:
        store.add([("n1", "alice", SECRET), ("n2", "bob", BOB)])
        verdict = forget(store)[0]
    finally:
        store.close()
    assert SECRET.encode() not in (tmp_path / "w.db").read_bytes()  # never checkpointed: only the WAL has it
    assert verdict.verified is Verified.residue
    assert verdict.detail.startswith(f"{tmp_path / 'w.db-wal'}: offset ")


def test_a_needle_split_across_two_reads_is_found(tmp_path):
    store = JsonStore(tmp_path / "notes.json")
    store.write([{"id": "n1", "user": "alice", "text": SECRET}])
    plans = [store.plan(ALICE)]
    store.erase(plans[0])
    at = proof.CHUNK - 10  # the text starts 10 bytes before the first read ends
    big = tmp_path / "notes.json"
    head = b'{"records": [], "pad": "'
    big.write_bytes(head + b" " * (at - len(head)) + SECRET.encode() + b'"}')
    [verdict, _] = proof.prove([store], plans, ALICE)
    assert verdict.detail == f"{big}: offset {at} holds the text of json-notes record n1"


def test_a_file_that_cannot_be_read_is_unverified(tmp_path, monkeypatch):
    store = notes(tmp_path / "notes.json")
    plans = [store.plan(ALICE)]
    store.erase(plans[0])
    bad = os.stat(tmp_path / "notes.json").st_ino
    real = os.pread

    def failing(fd, n, offset):
        if os.fstat(fd).st_ino == bad:
            raise OSError(5, "Input/output error")
        return real(fd, n, offset)

    monkeypatch.setattr(os, "pread", failing)
    [verdict, _] = proof.prove([store], plans, ALICE)
    assert (verdict.verified, verdict.detail) == (Verified.unverified,
                                                  f"{tmp_path / 'notes.json'}: input/output error")


def test_a_stores_file_that_is_a_link_is_not_followed_and_unverified(tmp_path):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"records": [], "text": SECRET}))
    (tmp_path / "notes.json").symlink_to(elsewhere)
    store = JsonStore(tmp_path / "notes.json")
    plan = StorePlan("json-notes", store.location, [Erasure("n1", "note", texts=(SECRET,))], [store.path])
    verdict, copy, _ = proof.prove([store], [plan], ALICE)
    assert (verdict.verified, verdict.detail) == (Verified.unverified,
                                                  f"{tmp_path / 'notes.json'}: a symbolic link (not followed)")
    assert (copy.store, copy.path, copy.verified) == ("copy", str(elsewhere), Verified.residue)  # swept as itself


def test_an_unreachable_store_is_unverified_with_its_reason(tmp_path):
    store = ServerStore([])
    plan = StorePlan("server-notes", store.location, unreachable="connection refused")
    [verdict, _] = proof.prove([store], [plan], ALICE)
    assert (verdict.verified, verdict.detail) == (Verified.unverified, "connection refused")


# ---------------------------------------------------------------- servers


def test_a_server_is_asked_for_the_texts_and_the_identifier():
    erased = [Erasure("m1", "memory m1", texts=(SECRET, "short"))]
    answers = {None: (Verified.unverified, "the store cannot tell whether the text is gone"),
               (): (Verified.absent, None),
               ("key m9 holds it",): (Verified.residue, "found again: key m9 holds it")}
    for answer, expected in answers.items():
        store = ServerStore(None if answer is None else list(answer))
        plan = StorePlan(store.store, store.location, erased)
        [verdict, _] = proof.prove([store], [plan], ALICE)
        assert (verdict.verified, verdict.detail) == expected
        assert store.asked == [[SECRET, "alice"]]  # "short" is under MIN_NEEDLE


def test_a_server_that_still_plans_a_record_is_residue():
    store = ServerStore([], records=[Erasure("m1", "memory m1")])
    [verdict, _] = proof.prove([store], [StorePlan(store.store, store.location, [Erasure("m1", "memory m1")])],
                               ALICE)
    assert (verdict.verified, verdict.detail) == (Verified.residue, "still holds 1 record: m1")


# ---------------------------------------------------------------- the sweep


def test_an_unknown_file_and_a_read_only_copy_holding_the_text_are_named(tmp_path):
    store = notes(tmp_path / "notes.json")
    copy = tmp_path / "exports" / "alice-copy.json"
    copy.parent.mkdir()
    copy.write_text(json.dumps({"text": SECRET}))
    copy.chmod(0o444)
    unknown = tmp_path / "scratch.txt"
    unknown.write_text(f"notes: {NOTE}\n")
    clean = tmp_path / "other.txt"
    clean.write_text(BOB)
    verdicts = forget(store, roots=[tmp_path])
    assert [(v.store, v.path, v.verified) for v in verdicts] == [
        ("json-notes", str(tmp_path / "notes.json"), Verified.absent),
        ("copy", str(copy), Verified.residue), ("copy", str(unknown), Verified.residue),
        ("sweep", str(tmp_path.resolve()), Verified.residue)]
    assert verdicts[1].detail == (f"a copy praisonmem cannot erase: {copy}: offset 10 holds the text of json-notes "
                                  "record n1")
    assert verdicts[2].detail == (f"a copy praisonmem cannot erase: {unknown}: offset 7 holds the text of json-notes "
                                  "record n2")
    assert verdicts[3].detail == f"3 files under {tmp_path.resolve()} that are no store's"
    assert_no_text(verdicts)
    assert copy.stat().st_mode & 0o777 == 0o444


def test_the_sweep_does_not_look_for_a_short_identifier(tmp_path):
    """"alice" in another application's file is not a copy of alice's records; her texts would be."""
    store = notes(tmp_path / "notes.json")
    (tmp_path / "contacts.txt").write_text("alice, bob\n")
    assert by_store(forget(store, roots=[tmp_path]))["sweep"].verified is Verified.absent


def test_a_long_identifier_is_looked_for_by_the_sweep(tmp_path):
    session = Subject(SubjectKind.session, "0b9d3c2e-5f1a-4c7e-9d2b-1a2b3c4d5e6f")
    (tmp_path / "log.txt").write_text(f"resumed {session.value}\n")
    store = ServerStore([])
    verdicts = proof.prove([store], [StorePlan(store.store, store.location)], session, roots=[tmp_path])
    assert [(v.store, v.verified) for v in verdicts] == [
        ("server-notes", Verified.absent), ("copy", Verified.residue), ("sweep", Verified.residue)]
    assert verdicts[1].detail.endswith("offset 8 holds the session id")


def test_excluded_files_and_skipped_dirs_are_not_scanned_and_are_said(tmp_path):
    store = notes(tmp_path / "notes.json")
    for where in (".git", "node_modules", "__pycache__", "venv"):
        (tmp_path / where).mkdir()
        (tmp_path / where / "copy.txt").write_text(SECRET)
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    journal = tmp_path / "journal.json"
    journal.write_text(SECRET)
    sweep = by_store(forget(store, roots=[tmp_path], exclude=[journal]))["sweep"]
    assert (sweep.verified, sweep.detail) == (Verified.absent, (
        f"0 files under {tmp_path.resolve()} that are no store's; skipped 1 .git directory, 1 __pycache__ directory, "
        "1 node_modules directory, 1 virtualenv"))


def test_a_fifo_neither_blocks_nor_is_read_and_a_link_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "copy.txt").write_text(SECRET)
    tree = tmp_path / "tree"
    tree.mkdir()
    store = notes(tree / "notes.json")
    store.path = tree / "notes.json"
    os.mkfifo(tree / "pipe")
    os.mkfifo(tree / "notes.json-wal")  # a store's file that is a FIFO: not read, not waited on
    (tree / "to-file").symlink_to(outside / "copy.txt")
    (tree / "to-dir").symlink_to(outside)
    plans = [store.plan(ALICE)]
    plans[0].files.append(tree / "notes.json-wal")
    store.erase(plans[0])
    result: list[list[Verdict]] = []
    worker = threading.Thread(target=lambda: result.append(proof.prove([store], plans, ALICE, roots=[tree])),
                              daemon=True)
    worker.start()
    worker.join(60)
    assert result, "the proof blocked on a FIFO"
    assert by_store(result[0])["json-notes"].verified is Verified.absent
    sweep = by_store(result[0])["sweep"]
    assert (sweep.verified, sweep.detail) == (Verified.absent, (
        f"0 files under {tree.resolve()} that are no store's; skipped 1 FIFO, socket or device, "
        "2 symbolic links (not followed)"))


def test_the_stores_directories_are_swept_too(tmp_path):
    store = notes(tmp_path / "notes.json")
    (tmp_path / "notes.json.bak").write_text(json.dumps({"records": [{"text": SECRET}]}))
    verdicts = forget(store)  # no roots: the store's own directory is swept
    assert [(v.store, v.path) for v in verdicts][1] == ("copy", str(tmp_path / "notes.json.bak"))


def test_the_proof_changes_no_byte_mtime_or_file(tmp_path):
    store = SqliteStore(tmp_path / "s.db", secure=False)
    store.add([("n1", "alice", SECRET)])
    plans = [store.plan(ALICE)]
    store.erase(plans[0])
    (tmp_path / "other.txt").write_text(SECRET)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.rglob("*")}
    proof.prove([store], plans, ALICE, roots=[tmp_path])
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.rglob("*")} == before


# ---------------------------------------------------------------- encrypted sessions


def sealed_session(path: Path, key: str, text: str) -> None:
    from cryptography.fernet import Fernet

    token = "praisonai:enc:v1:" + Fernet(key.encode()).encrypt(text.encode()).decode()
    path.write_text(json.dumps({"session_id": "s1", "messages": [{"role": "user", "content": token}]}))


def test_an_encrypted_file_is_unverified_without_the_key_and_checked_with_it(tmp_path):
    from cryptography.fernet import Fernet

    key = Fernet.generate_key().decode()
    store = notes(tmp_path / "notes.json")
    plans = [store.plan(ALICE)]
    store.erase(plans[0])
    sealed = tmp_path / "sealed.json"
    plans[0].files.append(sealed)
    sealed_session(sealed, key, f"bob said {BOB}")
    [verdict, _] = proof.prove([store], plans, ALICE)
    assert (verdict.verified, verdict.detail) == (Verified.unverified, (
        f"{sealed}: holds encrypted session values; give the session key (PRAISONAI_SESSION_KEY or --key-file) "
        "to check them"))
    assert proof.prove([store], plans, ALICE, key=key.encode())[0].verified is Verified.absent
    sealed_session(sealed, key, f"she said: {SECRET}!")
    [verdict, _] = proof.prove([store], plans, ALICE, key=key.encode())
    assert (verdict.verified, verdict.detail) == (
        Verified.residue, f"{sealed}: an encrypted value holds the text of json-notes record n1")
    other = Fernet.generate_key()
    [verdict, _] = proof.prove([store], plans, ALICE, key=other)
    assert verdict.verified is Verified.unverified and "does not decrypt it" in verdict.detail


# ---------------------------------------------------------------- the scanner itself


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=400), needles=st.lists(st.binary(min_size=1, max_size=40), min_size=1, max_size=6),
       plant=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 5)), max_size=4),
       block=st.integers(1, 64))
def test_the_scanner_finds_the_first_offset_of_every_needle_at_any_block_size(data, needles, plant, block):
    for at, which in plant:
        at = min(at, len(data))
        data = data[:at] + needles[which % len(needles)] + data[at:]
    labelled = [proof.Needle(n, f"n{i}") for i, n in enumerate(needles)]
    scanner = proof.Scanner(labelled)
    for i in range(0, len(data), block):
        scanner.feed(data[i:i + block])
    expected = {f"n{i}": data.find(n) for i, n in enumerate(needles) if data.find(n) >= 0}
    got = {label: offset for offset, label in scanner.found()}
    # two needles can share a label only by being the same bytes; each label's first offset
    assert got == expected


@settings(max_examples=200, deadline=None)
@given(prefix=st.binary(max_size=80), tokens=st.lists(st.text("abcXYZ019_-=", min_size=0, max_size=50), max_size=4),
       block=st.integers(1, 40))
def test_encrypted_tokens_are_collected_across_blocks(prefix, tokens, block):
    data = prefix.replace(b"p", b"") + b"".join(b"praisonai:enc:v1:" + t.encode() + b'",' for t in tokens)
    collector = proof.Tokens()
    got = [t for i in range(0, len(data), block) for t in collector.feed(data[i:i + block])] + list(collector.end())
    assert got == [t.encode() for t in tokens]


def test_the_sweep_says_which_encrypted_files_it_could_not_check_and_checks_them_with_the_key(tmp_path):
    from cryptography.fernet import Fernet

    key = Fernet.generate_key().decode()
    store = notes(tmp_path / "notes.json")
    plans = [store.plan(ALICE)]
    store.erase(plans[0])
    sealed = tmp_path / "copy-of-session.json"
    sealed_session(sealed, key, SECRET)
    sweep = proof.prove([store], plans, ALICE, roots=[tmp_path])[-1]
    assert (sweep.verified, sweep.detail) == (Verified.absent, (
        f"1 file under {tmp_path.resolve()} that are no store's; 1 hold encrypted values not checked without the "
        f"session key: {sealed}"))
    verdicts = proof.prove([store], plans, ALICE, roots=[tmp_path], key=key)
    assert [(v.store, v.path, v.verified) for v in verdicts] == [
        ("json-notes", str(tmp_path / "notes.json"), Verified.absent), ("copy", str(sealed), Verified.residue),
        ("sweep", str(tmp_path.resolve()), Verified.residue)]


def test_copies_of_sessions_praisonaiagents_encrypted_are_checked_with_the_key(tmp_path):
    """The real EncryptedSessionStore writes the values (a JSON file, and sessions.db through the transcript
    store); copies of both left elsewhere are found once the key decrypts them, and said without it."""
    import shutil

    from praisonaiagents.session import EncryptedSessionStore, generate_session_key
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
    from praisonaiagents.session.store import DefaultSessionStore

    key = generate_session_key()
    sessions = tmp_path / "sessions"
    EncryptedSessionStore(DefaultSessionStore(session_dir=str(sessions)), key=key).add_message(
        "s1", "user", SECRET, metadata={"channel": "web"})
    transcripts = SqliteTranscriptStore(session_dir=str(tmp_path / "gateway"))
    EncryptedSessionStore(transcripts, key=key).add_message("s2", "user", f"again: {SECRET}")
    kept = tmp_path / "kept"
    kept.mkdir()
    shutil.copy(sessions / "s1.json", kept / "s1-copy.json")
    for name in ("sessions.db", "sessions.db-wal"):  # the gateway's store keeps its recent turns in the WAL
        shutil.copy(tmp_path / "gateway" / name, kept / name.replace("sessions", "sessions-copy"))
    assert b"praisonai:enc:v1:" in (kept / "sessions-copy.db-wal").read_bytes()
    assert not any(SECRET.encode() in p.read_bytes() for p in kept.iterdir())
    store = ServerStore([])
    plan = StorePlan(store.store, store.location, [Erasure("s1", "session s1", texts=(SECRET,))])
    sweep = proof.prove([store], [plan], ALICE, roots=[kept])[-1]
    assert sweep.detail == (f"3 files under {kept.resolve()} that are no store's; 2 hold encrypted values not "
                            f"checked without the session key: {kept / 's1-copy.json'}, {kept / 'sessions-copy.db-wal'}")
    verdicts = proof.prove([store], [plan], ALICE, roots=[kept], key=key)
    assert [(v.store, v.path, v.verified, v.detail) for v in verdicts[1:3]] == [
        ("copy", str(kept / p), Verified.residue,
         f"a copy praisonmem cannot erase: {kept / p}: an encrypted value holds the text of server-notes record s1")
        for p in ("s1-copy.json", "sessions-copy.db-wal")]


def test_a_stores_directory_has_every_file_in_it_scanned(tmp_path):
    user = tmp_path / "memory" / "alice"
    (user / "episodic").mkdir(parents=True)
    (user / "episodic" / "2026-11-30.json").write_text(json.dumps([{"content": SECRET}]))
    store = ServerStore([])
    plan = StorePlan("filememory", str(user.parent), [Erasure("alice/e1", "memory", texts=(SECRET,))], [user])
    [verdict, _] = proof.prove([store], [plan], ALICE)
    assert (verdict.verified, verdict.detail) == (
        Verified.residue, f"{user / 'episodic' / '2026-11-30.json'}: offset 14 holds the text of filememory record "
                          "alice/e1")
