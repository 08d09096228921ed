"""The backup layout's one rule (create archives by it, restore accepts by it): the names each store writes,
and exactly where that stops."""

from __future__ import annotations

import pytest

from praisonmem.core import memory
from praisonmem.core.layout import LOCKS, Kind, Lock, archive_kind, dir_ok, file_reason, layout_reason, split

ROOTS = {"sessions", "spill", "learn", "memory"}
SUB_SESSIONS = "in a sub-directory of home/sessions/, which backups never hold"
NOT_MEMORY = ("not a file FileMemory writes (config.json, short_term.json, long_term.json, entities.json, "
              "summaries.json, or a .json file in episodic/, sessions/ or checkpoints/, in a user directory at most "
              "4 levels deep)")


@pytest.mark.parametrize("name", [
    "home/sessions/my_chat.json", "home/sessions/.last_session", "home/sessions/sessions.db",
    "home/sessions/projects/0123abcd/s.json",  # a project store: 8 hex digits
    "home/sessions/run_20261128_110000_ec9910/events.jsonl",  # an old run: date, time, 6 hex digits
    "home/state/session_spill/history_fea3173a.jsonl",
    "home/learn/private/u/persona.json", "home/learn/shared/team/improvements.archive.json",
    "memory/short_term.json",  # the base itself is a user directory
    "memory/a/b/c/d/short_term.json",  # 4 levels: the deepest a release ever nested
    "memory/a/b/c/d/episodic/2026-11-30.json", "memory/u/sessions/chat.json", "memory/u/checkpoints/c1.json",
])
def test_every_name_a_store_writes_is_admitted(name):
    assert layout_reason(name, ROOTS) is None


@pytest.mark.parametrize("name, reason", [
    ("home/sessions/projects/0123abc/s.json", SUB_SESSIONS),  # 7 hex digits
    ("home/sessions/projects/0123abcde/s.json", SUB_SESSIONS),  # 9
    ("home/sessions/projects/0123ABCD/s.json", SUB_SESSIONS),  # the ids are lower-case
    ("home/sessions/projects/0123abcd/sub/s.json", SUB_SESSIONS),
    ("home/sessions/run_20261128_110000_ec991/events.jsonl", SUB_SESSIONS),  # 5 hex digits
    ("home/sessions/run_2026112_110000_ec9910/events.jsonl", SUB_SESSIONS),  # a 7-digit date
    ("home/state/session_spill/a/b.jsonl", "in a sub-directory of home/state/session_spill/, which backups never "
                                           "hold"),
    ("home/sessions/x.json.tmp", "a lock or temp file, which backups never hold"),
    ("memory/a/b/c/d/e/short_term.json", NOT_MEMORY),  # 5 levels
    ("memory/a/b/c/d/e/episodic/2026-11-30.json", NOT_MEMORY),
    ("memory/u/episodic/notes.txt", NOT_MEMORY),
    ("home/learn/private/u/persona.json.bak", "not a learn store (<scope>/<user>/<store>.json of persona, insights, "
                                              "threads, patterns, decisions, feedback, improvements, or learn.db)"),
    ("/etc/passwd", "an absolute path"),
    ("memory/../x.json", "a path with '..'"),
    ("memory/u/x\0.json", "a path with a NUL byte"),
    ("home/sessions/", "a path with an empty or '.' component"),
    ("home/sessions", "outside the backup layout (home/sessions/, home/state/session_spill/, home/learn/, memory/, project/)"),
])
def test_names_no_store_writes_are_refused_with_the_reason(name, reason):
    assert layout_reason(name, ROOTS) == reason


def test_the_nesting_limit_is_the_memory_package_s():
    assert memory.NESTING == 4
    deepest = ("a",) * memory.NESTING
    assert file_reason("memory", (*deepest, "config.json")) is None
    assert file_reason("memory", (*deepest, "x", "config.json")) == NOT_MEMORY


def test_a_root_the_manifest_lacks_admits_nothing_under_it():
    assert layout_reason("home/learn/private/u/persona.json", {"memory"}) == (
        "under home/learn/ but the manifest has no 'learn' root")


@pytest.mark.parametrize("root, parts, ok", [
    ("sessions", (), True), ("sessions", ("projects",), True), ("sessions", ("projects", "0123abcd"), True),
    ("sessions", ("projects", "zz"), False), ("sessions", ("other",), False),
    ("sessions", ("run_20261128_110000_ec9910",), True),
    ("spill", (), True), ("spill", ("x",), False),
    ("learn", ("private",), True), ("learn", ("private", "u"), True), ("learn", ("other", "u"), False),
    ("learn", ("private", "u", "x"), False),
    ("memory", ("a",) * 5, True),  # 4 levels of user directory and its episodic/
    ("memory", ("a",) * 6, False),
])
def test_create_walks_only_into_directories_that_can_hold_layout_files(root, parts, ok):
    assert dir_ok(root, parts) is ok


def test_split_names_the_root_and_the_parts_below_it():
    root, parts = split("memory/u/episodic/2026-11-30.json")
    assert (root.name, parts) == ("memory", ("u", "episodic", "2026-11-30.json"))
    root, parts = split("home/state/session_spill/s.jsonl")
    assert (root.name, parts) == ("spill", ("s.jsonl",))
    with pytest.raises(ValueError):
        split("etc/passwd")


SEGMENT = "0f8e2b1c-3d4a-4b5c-9d6e-7f8091a2b3c4"
NOT_CHROMA = ("not a file of a Chroma directory (chroma_db[_<user>]/ or knowledge/chroma/: chroma.sqlite3, or "
              "<segment uuid>/{header.bin,data_level0.bin,length.bin,link_lists.bin})")


@pytest.mark.parametrize("name", [
    "project/chroma_db/chroma.sqlite3", "project/chroma_db_alice/chroma.sqlite3",
    f"project/chroma_db_alice/{SEGMENT}/header.bin", f"project/chroma_db/{SEGMENT}/link_lists.bin",
    "project/knowledge/chroma/chroma.sqlite3", f"project/knowledge/chroma/{SEGMENT}/data_level0.bin"])
def test_the_files_chromadb_writes_in_the_project_s_chroma_dirs_are_admitted(name):
    assert layout_reason(name, {"chroma"}) is None
    assert archive_kind(name) is Kind.chroma_file and LOCKS[Kind.chroma_file] is Lock.chroma


@pytest.mark.parametrize("name, reason", [
    (f"project/chroma_db/{SEGMENT}/index_metadata.pickle", NOT_CHROMA),  # an old release's: chromadb would load it
    ("project/chroma_db/chroma.sqlite3-wal", NOT_CHROMA),
    ("project/chroma_dbx/chroma.sqlite3", NOT_CHROMA),
    ("project/memory/short_term.json", NOT_CHROMA),
    ("project/knowledge/chroma.sqlite3", NOT_CHROMA),
    (f"project/chroma_db/{SEGMENT}/sub/header.bin", NOT_CHROMA),
    ("project/chroma_db/not-a-uuid/header.bin", NOT_CHROMA),
    ("project/chroma_db/../x/chroma.sqlite3", "a path with '..'"),
    ("project/chroma_db/chroma.sqlite3", "under project/ but the manifest has no 'chroma' root"),
])
def test_anything_else_below_project_is_refused(name, reason):
    roots = {"memory"} if "no 'chroma' root" in reason else {"chroma", "memory"}
    assert layout_reason(name, roots) == reason


def test_create_walks_only_into_chroma_dirs_and_their_segment_dirs():
    assert [dir_ok("chroma", tuple(p.split("/"))) for p in
            ("chroma_db", "chroma_db_bob", "knowledge", "knowledge/chroma", f"chroma_db/{SEGMENT}",
             f"knowledge/chroma/{SEGMENT}", "memory", "knowledge/other", f"chroma_db/{SEGMENT}/x", "chroma_db/x")] \
        == [True, True, True, True, True, True, False, False, False, False]
