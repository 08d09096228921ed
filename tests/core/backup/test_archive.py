"""Reading an untrusted archive: the manifest's fields and entries, members streamed within their sizes and
the manifest's total, and verify naming each problem."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import tarfile

import pytest

from praisonmem.core.backup import archive, read_manifest, verify
from praisonmem.core.backup.archive import BadEntry, Budget, checked_files, copy_member, member_reason
from praisonmem.core.errors import Refused
from tests.core.backup.archives import ROOTS, entry, manifest, write

SESSION = b'{"session_id": "s", "messages": []}'
GOOD = "home/sessions/s.json"
NOT_MEMORY = ("not a file FileMemory writes (config.json, short_term.json, long_term.json, entities.json, "
              "summaries.json, or a .json file in episodic/, sessions/ or checkpoints/, in a user directory at most "
              "4 levels deep)")


@pytest.mark.parametrize("change, reason", [
    ({"size": -1}, "a manifest entry whose size is not a whole number of bytes"),
    ({"size": True}, "a manifest entry whose size is not a whole number of bytes"),
    ({"size": 36.0}, "a manifest entry whose size is not a whole number of bytes"),
    ({"sha256": "a" * 63}, "a manifest entry without a sha256"),
    ({"sha256": "A" * 64}, "a manifest entry without a sha256"),  # hexdigest() is lower-case
    ({"sha256": "a" * 64 + "\n"}, "a manifest entry without a sha256"),
    ({"mtime": math.nan}, "a manifest entry whose mtime is not a time"),
    ({"mtime": math.inf}, "a manifest entry whose mtime is not a time"),
    ({"mtime": 1e11 + 1}, "a manifest entry whose mtime is not a time"),
    ({"mtime": False}, "a manifest entry whose mtime is not a time"),
    ({"damaged": 1}, "a manifest entry whose 'damaged' note is not text"),
    ({"sqlite": False}, "a manifest entry whose 'sqlite' mark is not true"),
    ({"sqlite": 1}, "a manifest entry whose 'sqlite' mark is not true"),
    ({"path": "home/sessions/../../x"}, "a path with '..'"),
])
def test_a_manifest_entry_is_refused_at_its_first_bad_field(change, reason):
    with pytest.raises(BadEntry) as caught:
        checked_files(manifest([{**entry(GOOD, SESSION), **change}]))
    assert caught.value.reason == reason


@pytest.mark.parametrize("change", [{"size": 0}, {"mtime": 1e11}, {"mtime": -1e11}, {"mtime": 0}, {"sqlite": True},
                                    {"damaged": "did not parse"}])
def test_the_edges_of_each_field_are_admitted(change):
    files = [{**entry(GOOD, SESSION), **change}]
    assert checked_files(manifest(files)) == files


def test_an_entry_without_a_path_is_named_by_its_index():
    with pytest.raises(BadEntry) as caught:
        checked_files(manifest([entry(GOOD, SESSION), {"size": 1}]))
    assert (caught.value.path, caught.value.reason) == ("manifest.json files[1]", "a manifest entry without a path")
    with pytest.raises(BadEntry, match="no file list"):
        checked_files({"roots": ROOTS})


def test_a_path_twice_or_a_file_that_is_another_s_directory_is_refused():
    with pytest.raises(BadEntry) as caught:
        checked_files(manifest([entry(GOOD, SESSION), entry(GOOD, b"{}")]))
    assert caught.value.reason == "listed twice in the manifest"
    # both are FileMemory names on their own (a user "u/config.json" is 2 levels deep)
    files = [entry("memory/u/config.json", b"{}"), entry("memory/u/config.json/short_term.json", b"[]")]
    with pytest.raises(BadEntry) as caught:
        checked_files(manifest(files))
    assert (caught.value.path, caught.value.reason) == (
        "memory/u/config.json/short_term.json", "its directory 'memory/u/config.json' is a file in the same archive")


@pytest.mark.parametrize("fields, problem", [
    ({"created_at": 1796000000}, "'created_at' is not text"),
    ({"roots": ["sessions"]}, "'roots' is not an object"),
    ({"files": {}}, "'files' is not a list"),
])
def test_the_manifest_s_own_fields_are_checked(tmp_path, fields, problem):
    path = write(tmp_path / "a.tar.gz", {}, head={**manifest([]), **fields})
    with pytest.raises(Refused) as caught:
        read_manifest(path)
    assert caught.value.message == f"{path}: not a praisonmem backup manifest ({problem})"


def test_a_manifest_that_is_not_first_not_ours_or_too_big_is_refused(tmp_path, monkeypatch):
    late = tmp_path / "late.tar.gz"
    with tarfile.open(late, "w:gz") as tar:
        info = tarfile.TarInfo(GOOD)
        info.size = len(SESSION)
        tar.addfile(info, io.BytesIO(SESSION))
    with pytest.raises(Refused, match=r"not a praisonmem backup \(no manifest.json first\)"):
        read_manifest(late)
    other = write(tmp_path / "other.tar.gz", {}, head={"format": "something-else"})
    with pytest.raises(Refused, match="not a praisonmem backup manifest$"):
        read_manifest(other)
    body = json.dumps(manifest([])).encode()
    ours = write(tmp_path / "ours.tar.gz", {})
    monkeypatch.setattr(archive, "MANIFEST_MAX", len(body) - 1)
    with pytest.raises(Refused, match=rf"\(manifest.json of {len(body)} bytes\)"):
        read_manifest(ours)
    monkeypatch.setattr(archive, "MANIFEST_MAX", len(body))
    assert read_manifest(ours)["files"] == []
    plain = tmp_path / "plain.tar.gz"
    plain.write_bytes(gzip.compress(b"not a tar"))
    with pytest.raises(Refused, match="cannot read the archive"):
        read_manifest(plain)


def test_the_budget_is_the_manifest_s_total_to_the_byte():
    budget = Budget(10)
    assert not budget.take(11) and budget.left == 10
    assert budget.take(4) and budget.take(6) and budget.left == 0
    assert budget.take(0) and not budget.take(1)


@pytest.mark.parametrize("data, size", [(b"x" * 10, 10), (b"x" * 11, 10), (b"x" * 5, 10), (b"", 0), (b"y", 0)])
def test_a_member_is_streamed_in_chunks_and_never_past_its_size_plus_one(monkeypatch, data, size):
    monkeypatch.setattr(archive, "CHUNK", 3)
    received: list[bytes] = []
    done, digest = copy_member(io.BytesIO(data), size, received.append)
    assert all(len(chunk) <= 3 for chunk in received)
    if len(data) > size:  # one byte more says "longer than the manifest": refused, and no byte past size passed on
        assert done == size + 1 and len(b"".join(received)) <= size
    else:
        assert (done, b"".join(received), digest) == (len(data), data, hashlib.sha256(data).hexdigest())


def member(name: str, kind: bytes, **fields) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    for key, value in fields.items():
        setattr(info, key, value)
    return info


@pytest.mark.parametrize("info, reason", [
    (member(GOOD, tarfile.SYMTYPE, linkname="/etc/passwd"), "a link"),
    (member(GOOD, tarfile.LNKTYPE, linkname="home/sessions/t.json"), "a link"),
    (member(GOOD, tarfile.CHRTYPE), "a device or pipe"),
    (member(GOOD, tarfile.FIFOTYPE), "a device or pipe"),
    (member("home/sessions/d", tarfile.DIRTYPE), "a directory entry, which backups never hold"),
    (member(GOOD, tarfile.GNUTYPE_SPARSE, sparse=[(0, 1)]), "a sparse file, which backups never hold"),
    (member(GOOD, b"Z"), "not a regular file"),
    (member("home/sessions/x.json.lock", tarfile.REGTYPE), "a lock or temp file, which backups never hold"),
    (member(GOOD, tarfile.REGTYPE), None),
])
def test_only_regular_members_in_the_layout_are_what_create_writes(info, reason):
    assert member_reason(info, set(ROOTS)) == reason


def test_verify_names_each_problem_and_passes_the_archive_create_would_write(tmp_path):
    files = {GOOD: SESSION, "memory/u/short_term.json": b"[]"}
    assert verify(write(tmp_path / "good.tar.gz", files)) == {
        "file": str(tmp_path / "good.tar.gz"), "ok": True, "files": 2, "problems": [],
        "created_at": "2026-11-30T02:00:00+00:00"}
    listed = manifest([entry(GOOD, SESSION), entry("memory/u/short_term.json", b"[]"),
                       entry("memory/u/long_term.json", b"[]")])
    tampered = write(tmp_path / "bad.tar.gz", {GOOD: SESSION.replace(b"s", b"t"), "memory/u/extra.json": b"x"},
                     head=listed, members=[(member("memory/u/short_term.json", tarfile.REGTYPE, size=3), b"[1]")])
    report = verify(tampered)
    assert (report["ok"], report["problems"]) == (False, [
        {"path": GOOD, "problem": "checksum mismatch"},
        {"path": "memory/u/extra.json", "problem": f"unsafe entry: {NOT_MEMORY}"},
        {"path": "memory/u/short_term.json", "problem": "larger than its manifest size (3 > 2 bytes); not read"},
        {"path": "memory/u/long_term.json", "problem": "missing from the archive"}])


def test_verify_stops_reading_past_the_manifest_s_count_and_its_extra_allowance(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "EXTRA_MEMBERS", 2)
    extra = [(member(f"memory/u/episodic/2026-11-{day:02d}.json", tarfile.REGTYPE, size=2), b"[]")
             for day in range(1, 6)]
    path = write(tmp_path / "many.tar.gz", {GOOD: SESSION}, members=extra)
    problems = verify(path)["problems"]
    # the allowance (2 members past the one listed) is read and named; the next member stops the reading
    assert [(p["path"][-15:], p["problem"]) for p in problems] == [
        ("2026-11-01.json", "not in the manifest"), ("2026-11-02.json", "not in the manifest"),
        ("2026-11-03.json", "more entries than the manifest lists; stopped reading")]
