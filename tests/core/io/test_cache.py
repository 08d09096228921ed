"""praisonmem's cache: entries are used only while they describe their source, and a bad entry is never an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import stat

import pytest

from praisonmem import __version__
from praisonmem.core.io import cache as cachemod
from praisonmem.core.io.cache import GRANULARITY_NS, MAGIC, Cache, FileKey, fresh, key_of, settled

KIND, VERSION = "test-kind", 3


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "src" / "data.json"
    path.parent.mkdir()
    path.write_text("[1, 2, 3]")
    old = 1_700_000_000_000_000_000
    os.utime(path, ns=(old, old))
    return path


def saved(tmp_path, source, payload=b"derived"):
    cache = Cache(tmp_path / "cache")
    key = key_of(source)
    snapshot = max(key.mtime_ns, key.ctime_ns) + GRANULARITY_NS + 1
    assert cache.save(KIND, VERSION, source, payload, key=key, snapshot_ns=snapshot)
    return cache, key


def test_an_entry_round_trips_for_its_own_key(tmp_path, source):
    cache, key = saved(tmp_path, source)
    entry = cache.load(KIND, VERSION, source, key)
    assert entry.payload == b"derived" and entry.key == key
    assert cache.load(KIND, VERSION, source) == entry  # without a key: the caller checks its own keys


@pytest.mark.parametrize("field", FileKey._fields)
def test_any_changed_key_field_misses(tmp_path, source, field):
    cache, key = saved(tmp_path, source)
    assert cache.load(KIND, VERSION, source, key._replace(**{field: getattr(key, field) + 1})) is None


def test_entries_are_private_files_in_private_directories(tmp_path, source):
    os.umask(0o022)
    cache, _ = saved(tmp_path, source)
    entry = cache.entry_path(KIND, source)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert stat.S_IMODE(entry.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700


def test_an_existing_cache_root_readable_by_others_is_made_private(tmp_path, source):
    (tmp_path / "cache").mkdir(mode=0o755)
    os.chmod(tmp_path / "cache", 0o755)
    saved(tmp_path, source)
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700


def test_the_racy_rule():
    key = FileKey(1, 2, 3, mtime_ns=10 * GRANULARITY_NS, ctime_ns=10 * GRANULARITY_NS)
    assert not settled(key, 10 * GRANULARITY_NS)  # read in the same tick as the last change
    assert not settled(key, 11 * GRANULARITY_NS)  # exactly the granularity later: still not trusted
    assert settled(key, 11 * GRANULARITY_NS + 1)
    assert not settled(key._replace(ctime_ns=11 * GRANULARITY_NS), 11 * GRANULARITY_NS + 1)  # ctime counts too
    assert fresh(key, key, 12 * GRANULARITY_NS) and not fresh(key, key, 10 * GRANULARITY_NS)
    assert not fresh(None, key, 12 * GRANULARITY_NS) and not fresh(key, None, 12 * GRANULARITY_NS)


def test_a_racy_entry_is_neither_written_nor_used(tmp_path, source):
    cache = Cache(tmp_path / "cache")
    key = key_of(source)
    assert not cache.save(KIND, VERSION, source, b"x", key=key, snapshot_ns=key.ctime_ns + GRANULARITY_NS)
    assert not cache.entry_path(KIND, source).exists()
    # one written anyway (another version, a clock step) is not trusted either
    assert cache.save(KIND, VERSION, source, b"x", key=None, snapshot_ns=0)
    entry = cache.entry_path(KIND, source)
    data = entry.read_bytes()
    header = json.loads(data[len(MAGIC):data.index(b"\n", len(MAGIC))])
    header["key"] = list(key)
    entry.write_bytes(MAGIC + json.dumps(header).encode() + data[data.index(b"\n", len(MAGIC)):])
    assert cache.load(KIND, VERSION, source) is not None
    assert cache.load(KIND, VERSION, source, key) is None


def rewrite_header(entry, **changes):
    data = entry.read_bytes()
    end = data.index(b"\n", len(MAGIC))
    header = json.loads(data[len(MAGIC):end])
    header.update(changes)
    entry.write_bytes(MAGIC + json.dumps(header).encode() + data[end:])


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "empty", "no magic", "header not json",
                                    "other praisonmem", "other format", "other kind version", "other source",
                                    "key not ints"])
def test_a_damaged_or_foreign_entry_misses_and_is_replaced_by_the_next_save(tmp_path, source, damage):
    cache, key = saved(tmp_path, source, b"payload bytes")
    entry = cache.entry_path(KIND, source)
    data = entry.read_bytes()
    if damage == "truncated":
        entry.write_bytes(data[:-3])
    elif damage == "flipped byte":
        entry.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage == "no magic":
        entry.write_bytes(data[1:])
    elif damage == "header not json":
        entry.write_bytes(MAGIC + b"{nope\n" + b"payload bytes")
    elif damage == "other praisonmem":
        rewrite_header(entry, praisonmem=__version__ + ".other")
    elif damage == "other format":
        rewrite_header(entry, format=cachemod.FORMAT + 1)
    elif damage == "other kind version":
        rewrite_header(entry, version=VERSION + 1)
    elif damage == "other source":  # another file whose entry name collides
        rewrite_header(entry, source=str(source) + ".other")
    elif damage == "key not ints":
        rewrite_header(entry, key=["a", 2, 3, 4, 5])
    assert cache.load(KIND, VERSION, source, key) is None
    assert cache.load(KIND, VERSION, source) is None
    snapshot = max(key.mtime_ns, key.ctime_ns) + GRANULARITY_NS + 1
    assert cache.save(KIND, VERSION, source, b"new", key=key, snapshot_ns=snapshot)
    assert cache.load(KIND, VERSION, source, key).payload == b"new"


@pytest.mark.parametrize("planted", ["readable by others", "a symlink", "a directory"])
def test_an_entry_that_is_not_a_private_file_of_ours_is_ignored(tmp_path, source, planted):
    cache, key = saved(tmp_path, source)
    entry = cache.entry_path(KIND, source)
    if planted == "readable by others":
        entry.chmod(0o644)
    elif planted == "a symlink":
        real = tmp_path / "elsewhere.bin"
        real.write_bytes(entry.read_bytes())
        real.chmod(0o600)
        entry.unlink()
        entry.symlink_to(real)
    else:
        entry.unlink()
        entry.mkdir()
    assert cache.load(KIND, VERSION, source, key) is None


def test_an_unwritable_cache_is_skipped_silently(tmp_path, source):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache dir should be")
    cache = Cache(blocker)
    key = key_of(source)
    assert cache.save(KIND, VERSION, source, b"x", key=key, snapshot_ns=key.ctime_ns + 2 * GRANULARITY_NS) is False
    assert cache.load(KIND, VERSION, source, key) is None
    cache.drop(KIND, source)
    assert blocker.read_text() == "a file where the cache dir should be"


def test_a_disabled_cache_neither_loads_nor_saves_but_still_drops(tmp_path, source):
    cache, key = saved(tmp_path, source)
    off = Cache(tmp_path / "cache", enabled=False)
    assert off.load(KIND, VERSION, source, key) is None
    assert off.save(KIND, VERSION, source, b"y", key=key, snapshot_ns=key.ctime_ns + 2 * GRANULARITY_NS) is False
    assert cache.load(KIND, VERSION, source, key).payload == b"derived"
    off.drop(KIND, source)
    assert not cache.entry_path(KIND, source).exists()
    assert Cache(None).load(KIND, VERSION, source) is None


def test_no_temp_file_is_left_behind(tmp_path, source):
    cache, _ = saved(tmp_path, source)
    saved(tmp_path, source)
    assert [p.name for p in cache.entry_path(KIND, source).parent.iterdir()] == [cache.entry_path(KIND, source).name]


def test_key_of_is_none_for_what_is_not_a_regular_file(tmp_path):
    assert key_of(tmp_path / "missing") is None
    assert key_of(tmp_path) is None


def tree_of(root):
    return sorted((p.relative_to(root).as_posix(), p.stat(follow_symlinks=False).st_mtime_ns)
                  for p in root.rglob("*"))


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_cache_dir_others_can_write_is_not_used_and_said_once(tmp_path, source, mode):
    cache, key = saved(tmp_path, source)
    root = tmp_path / "cache"
    os.chmod(root, mode)
    before = tree_of(root)
    said = []
    other = Cache(root, note=said.append)
    for _ in range(2):  # the note once per cache, however often it is used
        assert other.load(KIND, VERSION, source, key) is None
        assert not other.save(KIND, VERSION, source, b"new", key=key, snapshot_ns=key.ctime_ns + 2 * GRANULARITY_NS)
        other.drop(KIND, source)
    assert said == [f"not using the cache dir {root}: it can be written by others (group or other write "
                    "permission), so its entries cannot be trusted"]
    assert tree_of(root) == before and stat.S_IMODE(root.stat().st_mode) == mode


def test_a_cache_dir_that_is_not_the_users_is_not_used(tmp_path, source, monkeypatch):
    cache, key = saved(tmp_path, source)
    root = tmp_path / "cache"
    before = tree_of(root)
    uid = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: uid + 1)  # the directory now belongs to someone else
    said = []
    other = Cache(root, note=said.append)
    assert other.load(KIND, VERSION, source, key) is None
    assert not other.save(KIND, VERSION, source, b"new", key=key, snapshot_ns=key.ctime_ns + 2 * GRANULARITY_NS)
    assert said == [f"not using the cache dir {root}: it is not yours, so its entries cannot be trusted"]
    assert tree_of(root) == before


def test_no_link_inside_the_cache_dir_is_followed(tmp_path, source):
    cache, key = saved(tmp_path, source)
    root = tmp_path / "cache"
    elsewhere = tmp_path / "elsewhere"
    (root / KIND).rename(elsewhere)  # a valid entry, reached only through the link
    (root / KIND).symlink_to(elsewhere)
    before = tree_of(elsewhere)
    assert cache.load(KIND, VERSION, source, key) is None
    assert not cache.save(KIND, VERSION, source, b"new", key=key, snapshot_ns=key.ctime_ns + 2 * GRANULARITY_NS)
    cache.drop(KIND, source)
    assert tree_of(elsewhere) == before and (root / KIND).is_symlink()


def test_a_killed_writers_temp_file_is_removed_by_the_next_save_and_a_live_ones_is_kept(tmp_path, source):
    cache, key = saved(tmp_path, source)
    kind_dir = tmp_path / "cache" / KIND
    entry = cache.entry_path(KIND, source).name
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        left = kind_dir / f".{entry}.{dead.pid}.0badc0de.tmp"  # what a save killed before its rename leaves
        running = kind_dir / f".{entry}.{live.pid}.0badc0de.tmp"  # a save under way in another process
        other = kind_dir / "notes.tmp"  # not a name this cache makes
        for path in (left, running, other):
            path.write_bytes(b"partial")
        fresh_cache = Cache(tmp_path / "cache")
        assert fresh_cache.save(KIND, VERSION, source, b"new", key=key, snapshot_ns=key.ctime_ns + 2 * GRANULARITY_NS)
        assert sorted(p.name for p in kind_dir.iterdir()) == sorted([entry, running.name, other.name])
    finally:
        live.kill()
        live.wait()
