"""The JSONStorage and RedisStorage backends' own rules, without the library: how a store is recognised, the
record a row becomes, the order rows are listed in, SCAN patterns."""

from __future__ import annotations

import json

import pytest

from praisonmem.core.errors import CorruptFile, NotFound, Refused, UsageError
from praisonmem.core.upsonic import open_store, records
from praisonmem.core.upsonic.json_backend import JsonBackend
from praisonmem.core.upsonic.redis_backend import RedisBackend, _glob


def test_a_directory_is_json_storage_and_a_redis_url_is_redis_storage(tmp_path):
    assert isinstance(open_store(tmp_path).backend, JsonBackend)
    assert isinstance(open_store(f"{tmp_path / 'new'}/").backend, JsonBackend)
    assert isinstance(open_store(tmp_path / "upsonic_json_db").backend, JsonBackend)  # the library's default name
    assert isinstance(open_store("redis://:pw@h:1/0").backend, RedisBackend)
    assert open_store("redis://:pw@h:1/0").label == "redis://:***@h:1/0"
    with pytest.raises(UsageError, match=r"^unsupported database URL mongodb://u:\*\*\*@h/x: mongodb:// is not "):
        open_store("mongodb://u:pw@h/x")
    with pytest.raises(UsageError, match="--prefix is a RedisStorage option"):
        open_store(tmp_path / "x.db", prefix="p")
    with pytest.raises(UsageError, match="RedisStorage's keys do not carry a table name"):
        open_store("redis://h/0", session_table="mine")


def test_an_empty_directory_reads_as_not_found_and_a_new_one_is_created_only_when_writing(tmp_path):
    with pytest.raises(NotFound, match="no Upsonic JSONStorage tables"):
        open_store(tmp_path).sessions()
    store = open_store(f"{tmp_path / 'new'}/")
    assert store.known_ids("sessions") == set() and not (tmp_path / "new").exists()


def test_a_table_that_is_not_an_array_of_records_is_refused(tmp_path):
    (tmp_path / "upsonic_sessions.json").write_text('{"session_id": "a"}')
    with pytest.raises(CorruptFile, match="not the array of records JSONStorage writes"):
        open_store(tmp_path).sessions()
    (tmp_path / "upsonic_sessions.json").write_text('[{"id": "a"}]')
    with pytest.raises(CorruptFile, match=r"record 0\): an Upsonic session record has no string session_id"):
        open_store(tmp_path).sessions()


def test_a_row_becomes_the_library_s_record_with_nothing_lost():
    row = {"session_id": "s", "session_type": "agent", "usage": {"requests": 1}, "team_data": None,
           "messages": [], "summary": "x", "created_at": 0, "updated_at": 5}
    record = records.session_record(row, records.JSON_AGENT_KEYS, records.JSON_OTHER_KEYS, 0, 5)
    assert list(record) == [*records.JSON_AGENT_KEYS[:-2], "usage", "created_at", "updated_at"]
    assert record["created_at"] == 0 and record["usage"] == {"requests": 1}  # 0 is a time, kept
    redis = records.session_record(row, records.REDIS_AGENT_KEYS, records.REDIS_OTHER_KEYS, 0, 5)
    assert list(redis) == list(records.REDIS_AGENT_KEYS)


def test_rows_are_newest_first_with_null_last():
    rows = [{"session_id": i, "created_at": t} for i, t in (("a", 5), ("b", None), ("c", 7), ("d", 5))]
    assert [r["session_id"] for r in records.sessions_newest_first(rows)] == ["c", "d", "a", "b"]


def test_scan_matches_the_prefix_literally():
    assert _glob("a*b?[c]") == "a\\*b\\?\\[c\\]"


def test_the_json_backend_refuses_a_foreign_directory_before_writing(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    store = open_store(tmp_path)
    with pytest.raises(Refused, match="not a JSONStorage directory"):
        store.write(("users",), lambda tx: None, create=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_json_write_keeps_the_file_s_mode_and_bytes_of_other_records(tmp_path):
    doc = [{"user_id": "a", "user_memory": {"x": 1}, "agent_id": None, "team_id": None, "created_at": 1,
            "updated_at": 2},
           {"user_id": "b", "user_memory": {"y": "\u00fc"}, "agent_id": "g", "team_id": None, "created_at": 1,
            "updated_at": 2}]
    path = tmp_path / "upsonic_user_memories.json"
    path.write_text(json.dumps(doc, indent=2, default=str))
    path.chmod(0o640)
    from praisonmem.core.upsonic import edit_user_memory

    edit_user_memory(open_store(tmp_path), "a", set_traits={"x": "2"})
    after = json.loads(path.read_text())
    assert after[1] == doc[1] and after[0]["user_memory"] == {"x": 2}
    assert path.read_text() == json.dumps([{**doc[0], "user_memory": {"x": 2}, "updated_at": after[0]["updated_at"]},
                                           doc[1]], indent=2)
    assert path.stat().st_mode & 0o777 == 0o640


def test_a_table_file_that_is_a_symlink_is_read_but_never_replaced(tmp_path):
    real = tmp_path / "elsewhere.json"
    real.write_text('[{"user_id": "a", "user_memory": {}, "agent_id": null, "team_id": null, "created_at": 1, '
                    '"updated_at": 1}]')
    store_dir = tmp_path / "jdb"
    store_dir.mkdir()
    (store_dir / "upsonic_user_memories.json").symlink_to(real)
    from praisonmem.core.upsonic import edit_user_memory

    assert open_store(store_dir).user("a")["user_memory"] == {}
    before = real.read_bytes()
    with pytest.raises(Refused, match="is a symbolic link"):
        edit_user_memory(open_store(store_dir), "a", set_traits={"x": "1"})
    assert real.read_bytes() == before and (store_dir / "upsonic_user_memories.json").is_symlink()
