"""``session list`` keeps each JSON session file's row in praisonmem's cache: every case
where a kept row could be wrong gives exactly the output of a run without the cache."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from praisonmem.core.io import cache as cachemod
from praisonmem.core.sessions import listcache
from praisonmem.core.sessions.stores import jsondir

TOKEN = "zq-planted-message-text-7781"


@pytest.fixture
def home(fixture_home, monkeypatch, tmp_path):
    """The fixture home, the cache in a dir of the test's own, files trusted as soon as they are read."""
    monkeypatch.setattr(cachemod, "GRANULARITY_NS", 0)
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "cache"))
    doc = {"session_id": "planted", "messages": [{"role": "user", "content": TOKEN}],
           "metadata": {"title": "kept title"}, "updated_at": "2026-01-01T00:00:00"}
    (fixture_home / "sessions" / "planted.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    (fixture_home / "sessions" / "broken.json").write_text('{"messages": [', encoding="utf-8")
    return fixture_home


def listing(cli, home: Path, *flags: str) -> str:
    result = cli(*flags, "--home", str(home), "session", "list", "--json", "--limit", "0")
    assert result.exit_code == 0, result.stderr
    return result.stdout


def entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / listcache.KIND).glob("*.bin"))


def kept_rows(tmp_path: Path) -> dict:
    [entry] = entries(tmp_path)
    data = entry.read_bytes()
    payload = data[data.index(b"\n", len(cachemod.MAGIC)) + 1:]
    assert payload[:1] in (b"o", b"j")  # which encoder wrote it
    return json.loads(payload[1:])


def reads(monkeypatch, module=jsondir, name: str = "load") -> list[str]:
    """The session files the listing reads from now on (through ``module.name``: the JSON store's reader)."""
    seen: list[str] = []
    read = getattr(module, name)

    def counting(path):
        seen.append(os.path.basename(path))
        return read(path)

    monkeypatch.setattr(module, name, counting)
    return seen


def test_a_warm_listing_reads_no_file_and_prints_the_same_bytes(cli, home, tmp_path, monkeypatch):
    expected = listing(cli, home, "--no-cache")
    assert entries(tmp_path) == []  # --no-cache writes nothing
    assert listing(cli, home) == expected  # cold: writes the entry
    [entry] = entries(tmp_path)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600 and stat.S_IMODE(entry.parent.stat().st_mode) == 0o700
    seen = reads(monkeypatch)
    assert listing(cli, home) == expected
    unreadable = {os.path.basename(r["file"]) for r in json.loads(expected) if r["unreadable"]}
    assert unreadable and set(seen) == unreadable  # only the unreadable files are read again


def test_the_cache_holds_no_message_text(cli, home, tmp_path):
    listing(cli, home)
    [entry] = entries(tmp_path)
    data = entry.read_bytes()
    assert TOKEN.encode() not in data and b"kept title" in data
    for path in (home / "sessions").glob("*.json"):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        for message in doc.get("messages", []) + doc.get("archived_messages", []):
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str) and len(content) > 12:
                assert json.dumps(content, ensure_ascii=True)[1:-1].encode() not in data, path


def coarse_keys(monkeypatch):
    """A file system stamping whole seconds: a same-size rewrite in the same second keeps size and mtime."""
    real = cachemod.key_of

    def coarse(path):
        key = real(path)
        return None if key is None else key._replace(mtime_ns=key.mtime_ns // 10**9 * 10**9,
                                                     ctime_ns=key.ctime_ns // 10**9 * 10**9)

    monkeypatch.setattr(cachemod, "key_of", coarse)
    return coarse


def rewrite(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new) and old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_file_changed_in_the_same_second_as_the_cache_write_is_read_again(cli, home, monkeypatch):
    monkeypatch.setattr(cachemod, "GRANULARITY_NS", 2_000_000_000)  # the real rule
    coarse = coarse_keys(monkeypatch)
    path = home / "sessions" / "planted.json"
    for _ in range(5):  # all in one second of the clock (retried if a second boundary falls in between)
        rewrite(path, "kept title", "KEPT TITLE") if "kept title" in path.read_text() else None
        before = coarse(path)
        listing(cli, home)  # the file was written this second: its row must not be trusted later
        rewrite(path, "KEPT TITLE", "kept title")
        if coarse(path) == before:
            break
    else:
        pytest.skip("could not rewrite within one second")  # pragma: no cover
    assert coarse(path) == before  # same size, same (coarse) mtime and ctime, same inode
    assert listing(cli, home) == listing(cli, home, "--no-cache")
    assert "kept title" in listing(cli, home)


def test_a_file_replaced_by_one_of_the_same_size_and_mtime_is_read_again(cli, home, monkeypatch, tmp_path):
    monkeypatch.setattr(cachemod, "key_of", lambda path: None if (k := real(path)) is None else k._replace(
        ctime_ns=0))  # so only the inode tells the two files apart
    path = home / "sessions" / "planted.json"
    listing(cli, home)
    old = os.stat(path)
    replacement = path.with_name("planted.json.new")
    replacement.write_text(path.read_text(encoding="utf-8").replace("kept title", "new! title"), encoding="utf-8")
    os.utime(replacement, ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(replacement, path)
    new = os.stat(path)
    assert (new.st_size, new.st_mtime_ns) == (old.st_size, old.st_mtime_ns) and new.st_ino != old.st_ino
    out = listing(cli, home)
    assert out == listing(cli, home, "--no-cache") and "new! title" in out


real = cachemod.key_of


def test_a_deleted_file_is_not_listed(cli, home):
    listing(cli, home)
    (home / "sessions" / "planted.json").unlink()
    out = listing(cli, home)
    assert out == listing(cli, home, "--no-cache") and "planted" not in out


@pytest.mark.parametrize("damage", ["truncated", "other-version", "other-kind-version", "bad-rows", "not-private",
                                    "garbage", "empty"])
def test_a_damaged_or_foreign_entry_is_ignored_and_rebuilt(cli, home, tmp_path, damage, monkeypatch):
    expected = listing(cli, home, "--no-cache")
    listing(cli, home)
    [entry] = entries(tmp_path)
    data = entry.read_bytes()
    if damage == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "other-version":
        entry.write_bytes(data.replace(b'"praisonmem":"', b'"praisonmem":"0.0.0-', 1)
                          .replace(b'"praisonmem": "', b'"praisonmem": "0.0.0-', 1))
    elif damage == "other-kind-version":
        monkeypatch.setattr(listcache, "VERSION", listcache.VERSION + 1)
    elif damage == "bad-rows":  # a well-formed entry whose rows are not what the listing keeps
        cache = cachemod.Cache(tmp_path / "cache")
        for payload in (b'o{"planted.json": [1, 2, 3]}', b'o[]', b'j{"planted.json": ["1,2,3,4,5", "planted", [1]]}',
                        b'x' + json.dumps(kept_rows(tmp_path)).encode(), b'o{"planted.json": [1, NaN]}',
                        b'j{"planted.json": ["1,2", {"a": 1}, [1]]}', b'o[' * 2000 + b']' * 2000):
            assert cache.save(listcache.KIND, listcache.VERSION, str(home / "sessions"), payload, key=None,
                              snapshot_ns=cachemod.now_ns())
            assert listing(cli, home) == expected
            cache.save(listcache.KIND, listcache.VERSION, str(home / "sessions"), payload, key=None,
                       snapshot_ns=cachemod.now_ns())
    elif damage == "not-private":
        forged = dict(kept_rows(tmp_path))
        forged["planted.json"][2][2] = "forged title"  # what another user could plant
        cachemod.Cache(tmp_path / "cache").save(listcache.KIND, listcache.VERSION, str(home / "sessions"),
                                               b"j" + json.dumps(forged).encode(), key=None,
                                               snapshot_ns=cachemod.now_ns())
        # the forged entry is well formed; only its mode gives it away
        entry.chmod(0o644)
    elif damage == "garbage":
        entry.write_bytes(os.urandom(4096))
    else:
        entry.write_bytes(b"")
    seen = reads(monkeypatch)
    assert listing(cli, home) == expected
    assert "planted.json" in seen  # the file itself was read
    del seen[:]
    assert listing(cli, home) == expected
    if damage != "not-private":
        assert "planted.json" not in seen  # rebuilt: the next call uses it


def test_an_unwritable_cache_is_skipped(cli, home, tmp_path, monkeypatch):
    expected = listing(cli, home, "--no-cache")
    blocker = tmp_path / "cache-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(blocker))
    assert listing(cli, home) == expected and listing(cli, home) == expected
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / listcache.KIND).write_text("a file where the kind's dir goes")
    assert listing(cli, home) == expected and listing(cli, home) == expected


@pytest.mark.parametrize("how", ["flag", "config", "env"])
def test_the_cache_can_be_turned_off(cli, home, tmp_path, monkeypatch, config, how):
    expected = listing(cli, home, "--no-cache")
    flags: tuple[str, ...] = ()
    if how == "flag":
        flags = ("--no-cache",)
    elif how == "config":
        config.write_text("cache = false\n")
    else:
        monkeypatch.setenv("PRAISONMEM_CACHE", "0")
    assert listing(cli, home, *flags) == expected and listing(cli, home, *flags) == expected
    assert entries(tmp_path) == []


def test_spilled_turns_arriving_after_the_cache_write_are_counted(cli, home, tmp_path):
    listing(cli, home)
    spill = home / "sessions" / ".spill"
    from praisonmem.core.paths import resolve

    spill = resolve(home, env={}).spill_dir
    spill.mkdir(parents=True, exist_ok=True)
    (spill / "planted.1.json").write_text(json.dumps({"session_id": "planted", "messages": [
        {"role": "user", "content": "later"}]}), encoding="utf-8")
    out = listing(cli, home)
    assert out == listing(cli, home, "--no-cache")
    assert [r["spilled_count"] for r in json.loads(out) if r["session_id"] == "planted"] == [1]


@pytest.mark.parametrize("change", [("session", "delete", "planted", "--yes"),
                                    ("session", "rename", "planted", "replanted", "--force"),
                                    ("session", "rename", "planted", "--title", "other"),
                                    ("session", "prune", "--older-than", "1d", "--yes")])
def test_praisonmem_s_own_changes_drop_the_entry_even_without_the_cache(cli, home, tmp_path, change):
    listing(cli, home)
    assert len(entries(tmp_path)) == 1
    result = cli("--no-cache", "--home", str(home), *change)
    assert result.exit_code == 0, result.stderr
    assert entries(tmp_path) == []
    assert listing(cli, home) == listing(cli, home, "--no-cache")


def test_sessions_db_rows_are_not_kept(cli, gateway_home, monkeypatch, tmp_path):
    monkeypatch.setattr(cachemod, "GRANULARITY_NS", 0)
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "cache"))
    home = gateway_home.home
    expected = listing(cli, home, "--no-cache")
    assert listing(cli, home) == expected and listing(cli, home) == expected
    db_rows = [r for r in json.loads(expected) if r["store"] == "sessions.db"]
    json_rows = [r for r in json.loads(expected) if (r["store"] == "json" or r["store"].startswith("project:"))
                 and not r["unreadable"]]  # the JSON directories: the home's and the praisonai project store's
    assert db_rows and json_rows
    kept = set()
    for entry in entries(tmp_path):  # one entry a directory
        data = entry.read_bytes()
        kept |= set(json.loads(data[data.index(b"\n", len(cachemod.MAGIC)) + 2:]))
    assert kept == {os.path.basename(r["file"]) for r in json_rows} and len(entries(tmp_path)) == 2


def test_a_racy_file_is_not_kept_until_it_has_settled(cli, home, tmp_path, monkeypatch):
    monkeypatch.setattr(cachemod, "GRANULARITY_NS", 2_000_000_000)
    listing(cli, home)
    assert "planted.json" not in (kept_rows(tmp_path) if entries(tmp_path) else {})  # written just now
    past = cachemod.now_ns() - 10 * 10**9
    path = home / "sessions" / "planted.json"
    os.utime(path, ns=(past, past))
    monkeypatch.setattr(cachemod, "now_ns", lambda: real_now() + 10 * 10**9)  # ctime, too, is old by then
    listing(cli, home)
    assert "planted.json" in kept_rows(tmp_path)


real_now = cachemod.now_ns


def test_values_orjson_would_change_are_kept_exactly(cli, home, tmp_path, monkeypatch):
    # NaN and infinities (orjson writes null), integers beyond 64 bits, a lone surrogate: the entry is then
    # written by the standard library, and the warm listing prints what the file gives
    (home / "sessions" / "odd.json").write_text(
        '{"session_id": "odd", "messages": [], "cost": NaN, "total_tokens": 1180591620717411303424, '
        '"model": Infinity, "metadata": {"title": "\\ud800 lone"}, "updated_at": "2026-02-02T00:00:00"}',
        encoding="utf-8")
    expected = listing(cli, home, "--no-cache")
    assert listing(cli, home) == expected
    assert "odd.json" in kept_rows(tmp_path)
    seen = reads(monkeypatch)
    assert listing(cli, home) == expected and "odd.json" not in seen
    assert '"cost": NaN' in expected and "1180591620717411303424" in expected


def test_the_entry_is_written_by_orjson_when_it_reads_back_the_same():
    assert listcache.encoded({"a.json": ["1,2", "a", [1.5, None, "é", True]]}) == \
        'o{"a.json":["1,2","a",[1.5,null,"é",true]]}'.encode()
    assert listcache.encoded({"a.json": ["1,2", "a", [float("nan")]]}) == b'j{"a.json":["1,2","a",[NaN]]}'
    assert listcache.encoded({"a.json": ["1,2", "a", [2**64]]}) == b'j{"a.json":["1,2","a",[18446744073709551616]]}'


# ---------------------------------------------------------------- the REPL/TUI's files beside the JSON store's
# A kept row also vouches that its file is not a REPL/TUI ("unified") session, so the unified store does not read
# it again; every way that could go wrong gives exactly the output of a run without the cache.

UNIFIED = {"session_id": "swap", "workspace": "/w", "created_at": "2026-01-01T00:00:00",
           "updated_at": "2026-01-01T00:00:00", "messages": [], "metadata": {"title": "tui"}, "parent_id": None,
           "children_ids": [], "total_input_tokens": 0, "total_output_tokens": 0, "total_cost": 0.0,
           "request_count": 0, "current_model": "m"}


def same_size_pair() -> tuple[str, str]:
    """A JSON store document and a unified one of exactly the same length."""
    unified = json.dumps(UNIFIED, indent=2)
    plain = json.dumps({"session_id": "swap", "messages": [], "metadata": {"title": ""}}, indent=2)
    pad = len(unified) - len(plain)
    assert pad > 0
    plain = json.dumps({"session_id": "swap", "messages": [], "metadata": {"title": "x" * pad}}, indent=2)
    assert len(plain) == len(unified)
    return plain, unified


def unified_reads(monkeypatch) -> list[str]:
    """The files the unified store reads from now on."""
    from praisonmem.core.sessions.stores import unified

    return reads(monkeypatch, unified, "read_unified")


def stores_of(out: str) -> dict[str, str]:
    return {os.path.basename(r["file"]): r["store"] for r in json.loads(out)}


def test_a_warm_listing_leaves_the_json_store_s_files_to_it(cli, home, monkeypatch):
    (home / "sessions" / "tui.json").write_text(json.dumps({**UNIFIED, "session_id": "tui"}, indent=2),
                                               encoding="utf-8")
    expected = listing(cli, home, "--no-cache")
    assert stores_of(expected)["tui.json"] == "unified"
    assert listing(cli, home) == expected
    seen = unified_reads(monkeypatch)
    assert listing(cli, home) == expected
    assert seen == []  # the JSON store's scan hands the REPL/TUI file over: the unified store reads nothing again


def test_a_file_with_the_unified_keys_that_does_not_parse_is_one_unreadable_row_as_without_the_cache(cli, home):
    (home / "sessions" / "u1.json").write_text(
        '{"session_id": "u1", "workspace": "/w", "current_model": "m", "messages": 7}', encoding="utf-8")
    expected = listing(cli, home, "--no-cache")
    rows = [r for r in json.loads(expected) if r["file"].endswith("u1.json")]
    assert [(r["store"], r["unreadable"], r["last_session"]) for r in rows] == [("json", True, False)]
    assert listing(cli, home) == expected  # cold
    assert listing(cli, home) == expected  # warm
    alone = cli("--no-cache", "--home", str(home), "session", "list", "--store", "unified", "--json")
    [row] = [r for r in json.loads(alone.stdout) if r["file"].endswith("u1.json")]
    assert (row["store"], row["session_id"], row["last_session"]) == ("unified", None, False)  # no .last_session


@pytest.mark.parametrize("direction", ["to-unified", "from-unified"])
def test_a_file_changed_to_or_from_the_unified_format_in_the_same_second_is_read_again(cli, home, monkeypatch,
                                                                                       direction):
    monkeypatch.setattr(cachemod, "GRANULARITY_NS", 2_000_000_000)  # the real rule
    coarse = coarse_keys(monkeypatch)
    plain, unified = same_size_pair()
    first, second = (plain, unified) if direction == "to-unified" else (unified, plain)
    path = home / "sessions" / "swap.json"
    for _ in range(5):  # all in one second of the clock (retried if a second boundary falls in between)
        path.write_text(first, encoding="utf-8")
        before = coarse(path)
        listing(cli, home)  # the file was written this second: nothing kept about it may be trusted later
        path.write_text(second, encoding="utf-8")
        if coarse(path) == before:
            break
    else:
        pytest.skip("could not rewrite within one second")  # pragma: no cover
    out = listing(cli, home)
    assert out == listing(cli, home, "--no-cache")
    assert stores_of(out)["swap.json"] == ("unified" if direction == "to-unified" else "json")


@pytest.mark.parametrize("direction", ["to-unified", "from-unified"])
def test_a_file_replaced_by_the_other_format_with_the_same_size_and_mtime_is_read_again(cli, home, monkeypatch,
                                                                                         direction):
    monkeypatch.setattr(cachemod, "key_of", lambda path: None if (k := real(path)) is None else k._replace(
        ctime_ns=0))  # so only the inode tells the two files apart
    plain, unified = same_size_pair()
    first, second = (plain, unified) if direction == "to-unified" else (unified, plain)
    path = home / "sessions" / "swap.json"
    path.write_text(first, encoding="utf-8")
    listing(cli, home)
    listing(cli, home)  # warm: kept and used
    old = os.stat(path)
    replacement = path.with_name("swap.json.new")
    replacement.write_text(second, encoding="utf-8")
    os.utime(replacement, ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(replacement, path)
    new = os.stat(path)
    assert (new.st_size, new.st_mtime_ns) == (old.st_size, old.st_mtime_ns) and new.st_ino != old.st_ino
    out = listing(cli, home)
    assert out == listing(cli, home, "--no-cache")
    assert stores_of(out)["swap.json"] == ("unified" if direction == "to-unified" else "json")



def test_a_row_the_workers_send_in_kept_form_is_decoded_or_else_read_again(cli, home, monkeypatch):
    # a cold listing's workers send each file's kept form instead of its row; should one not decode, the file is
    # read again in the listing's own process and listed as without the cache
    expected = listing(cli, home, "--no-cache")
    decode = listcache.decode_rows
    refused: list[str] = []

    def picky(value, where, session_id, ref, store):
        if session_id == "planted" and not refused:
            refused.append(session_id)
            return None
        return decode(value, where, session_id, ref, store)

    monkeypatch.setattr(listcache, "decode_rows", picky)
    seen = reads(monkeypatch)
    assert listing(cli, home) == expected
    assert refused == ["planted"] and seen.count("planted.json") == 2
    assert listing(cli, home) == expected  # warm
