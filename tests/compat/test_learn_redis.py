"""``learn`` on the library's Redis backend: praisonai 4.7.19's ``RedisStorageAdapter`` (what
``LearnConfig(backend="redis")`` gets as ``RedisBackend``), run in the oracle venv, writes the keys and reads back
what praisonmem wrote, on a throwaway redis-server."""

from __future__ import annotations

import json

import pytest

from tests.redisserver import require_redis_py

WRITE = """
import json, sys
from praisonaiagents.config.feature_configs import LearnConfig
from praisonaiagents.memory.learn.manager import LearnManager
url, user, items = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
config = LearnConfig(backend="redis", db_url=url, persona=True, insights=True, thread=True, patterns=True,
                     decisions=True, feedback=True, improvements=True)
manager = LearnManager(config, user_id=user)
assert type(manager._backend).__name__ == "RedisStorageAdapter", type(manager._backend)
for store in manager._stores.values():
    assert store._backend is not None, "fell back to files"
print(json.dumps([manager._stores[store].add(text, meta).id for store, text, meta in items]))
"""

READ = """
import json, sys
from praisonaiagents.config.feature_configs import LearnConfig
from praisonaiagents.memory.learn.manager import LearnManager
config = LearnConfig(backend="redis", db_url=sys.argv[1], persona=True, insights=True, thread=True, patterns=True,
                     decisions=True, feedback=True, improvements=True)
manager = LearnManager(config, user_id=sys.argv[2])
for store in manager._stores.values():
    assert store._backend is not None, "fell back to files"
print(json.dumps({n: {k: v.to_dict() for k, v in s._entries.items()} for n, s in manager._stores.items()}))
"""

ENTRY = ("id", "content", "metadata", "created_at", "updated_at", "use_count", "last_used")


@pytest.fixture
def lib(oracle, redis_db):
    oracle.require("praisonai", "redis")

    class Library:
        def add(self, *items, user: str = "alice", url: str | None = None) -> list[str]:
            return oracle.json(WRITE, url or redis_db.url(), user, json.dumps(items))

        def read(self, user: str = "bob", url: str | None = None) -> dict[str, dict]:
            found = oracle.json(READ, url or redis_db.url(), user)
            return {name: data for name, data in found.items() if data}

    return Library()


@pytest.fixture
def learned(lib, redis_db):
    lib.add(("persona", "Prefers tea", {"category": "drinks"}), ("insights", "Asks about travel", None))
    return lib.read()


def learn(cli, db, *args, url=None):
    return cli("learn", *args, "--url", url or db.url())


def as_rows(url_label: str, stores: dict[str, dict], prefix: str = "praison:learn:") -> list[dict]:
    return [{"backend": "redis", "scope": None, "user_id": None, "store": name, "url": url_label,
             "key": f"{prefix}{name}", **e} for name in sorted(stores) for e in stores[name].values()]


def test_the_library_keys_one_string_per_store_without_user_or_ttl(lib, redis_db, learned):
    dump = redis_db.dump()
    assert sorted(dump) == ["praison:learn:insights", "praison:learn:persona"]
    for key, value in dump.items():
        assert (value["type"], value["ttl"]) == ("string", -1)
        assert json.loads(value["value"]) == learned[key.rsplit(":", 1)[1]]
        assert b"alice" not in value["value"]
    assert redis_db.server.dbsize(0) == 0
    assert learned == lib.read(user="carol")  # the key has no user in it: every user reads the same store


def test_list_and_show_read_the_library_keys_exactly_and_change_nothing(cli, redis_db, learned):
    before = redis_db.dump()
    listed = learn(cli, redis_db, "list", "--json")
    assert listed.exit_code == 0, listed.stderr
    assert listed.json() == as_rows(redis_db.url(), learned)
    [persona] = learned["persona"].values()
    shown = learn(cli, redis_db, "show", persona["id"], "--json").json()
    assert shown == as_rows(redis_db.url(), {"persona": learned["persona"]})[0]
    table = learn(cli, redis_db, "list", "--store", "insights").stdout.splitlines()
    [insight] = learned["insights"].values()
    assert table[1].split("\t")[:4] == ["insights", "-", "-", insight["id"]]
    assert redis_db.dump() == before  # no use_count bumped, nothing written
    # over the Unix socket too
    assert learn(cli, redis_db, "list", "--json", url=redis_db.url(socket=True)).json() == as_rows(
        redis_db.url(socket=True), learned)


def test_add_writes_what_the_library_reads_and_nothing_else(cli, lib, redis_db, learned):
    before = redis_db.dump()
    result = learn(cli, redis_db, "add", "persona", "Likes café ☕", "--meta", "category=pets", "--json")
    assert result.exit_code == 0, result.stderr
    [change] = result.json()
    assert (change["backend"], change["url"], change["key"], change["added"]) == (
        "redis", redis_db.url(), "praison:learn:persona", True)
    after = lib.read()
    new = after["persona"].pop(change["id"])
    assert after == learned and new == {k: change[k] for k in ENTRY}
    dump = redis_db.dump()
    assert dump["praison:learn:insights"] == before["praison:learn:insights"]
    assert dump["praison:learn:persona"]["value"] == json.dumps(
        {**learned["persona"], change["id"]: new}, default=str, ensure_ascii=False).encode()
    dup = learn(cli, redis_db, "add", "persona", " LIKES CAFÉ ☕")
    assert dup.stdout == f"{change['id']} (already there; not added again)\n"
    lib.add(("persona", "Early riser", None))
    assert len(lib.read()["persona"]) == 3


def test_delete_and_clear_change_exactly_their_key(cli, lib, redis_db, learned):
    [persona_id] = learned["persona"]
    assert learn(cli, redis_db, "delete", persona_id).exit_code == 4  # asks first
    done = learn(cli, redis_db, "delete", persona_id, "--yes")
    assert done.stdout == f"deleted {persona_id} from {redis_db.url()} (key 'praison:learn:persona')\n"
    assert lib.read() == {"insights": learned["insights"]}
    assert redis_db.dump()["praison:learn:persona"]["value"] == b"{}"
    cleared = learn(cli, redis_db, "clear", "insights", "--yes")
    assert cleared.stdout == f"removed 1 entries from {redis_db.url()} (key 'praison:learn:insights')\n"
    assert lib.read() == {} and redis_db.dump()["praison:learn:insights"]["value"] == b"{}"
    assert learn(cli, redis_db, "clear", "threads", "--yes").stdout.startswith("removed 0 entries")
    assert "praison:learn:threads" not in redis_db.dump()  # no key made for a store that had none


def test_a_ttl_on_the_key_is_kept(cli, lib, redis_db, learned):
    redis_db.command("PEXPIRE", "praison:learn:persona", 600_000)
    assert learn(cli, redis_db, "add", "persona", "Keeps its TTL").exit_code == 0
    left = redis_db.command("PTTL", "praison:learn:persona")
    assert 0 < left <= 600_000
    assert redis_db.command("PTTL", "praison:learn:insights") == -1


def test_a_concurrent_writer_between_read_and_write_makes_it_refuse_with_nothing_changed(cli, redis_db, learned,
                                                                                         monkeypatch):
    redis = require_redis_py()
    theirs = json.dumps({"persona_9_1": {"id": "persona_9_1", "content": "written meanwhile"}}).encode()
    original = redis.client.Pipeline.multi

    def another_writer_first(self):
        redis_db.command("SET", "praison:learn:persona", theirs)  # after praisonmem's WATCH and read
        return original(self)

    monkeypatch.setattr(redis.client.Pipeline, "multi", another_writer_first)
    result = learn(cli, redis_db, "add", "persona", "Mine")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == (f"praisonmem: error: {redis_db.url()}: another writer changed the learn store "
                             "meanwhile; nothing changed\n")
    assert redis_db.command("GET", "praison:learn:persona") == theirs


def test_another_prefix(cli, redis_db, learned):
    redis_db.command("COPY", "praison:learn:persona", "team:learn:persona")
    rows = learn(cli, redis_db, "list", "--prefix", "team:learn:", "--json").json()
    assert [r["key"] for r in rows] == ["team:learn:persona"]
    assert learn(cli, redis_db, "add", "insights", "x", "--prefix", "team:learn:").exit_code == 0
    assert "team:learn:insights" in redis_db.dump()


# ---------------------------------------------------------------- bad input


def _one_line(result, code: int) -> str:
    assert (result.exit_code, result.stdout, result.stderr.count("\n")) == (code, "", 1), result.stderr
    return result.stderr


def test_a_key_of_another_shape_is_reported_and_never_overwritten(cli, redis_db):
    redis_db.command("HSET", "praison:learn:persona", "a", "b")
    redis_db.command("SET", "praison:learn:insights", b"{broken")
    redis_db.command("SET", "praison:learn:threads", json.dumps({"t_0_1": {"id": "t_0_1", "content": "ok"}}))
    before = redis_db.dump()
    listed = learn(cli, redis_db, "list", "--json")
    assert [r["id"] for r in listed.json()] == ["t_0_1"]
    url = redis_db.url()
    assert listed.stderr == (
        f"praisonmem: warning: skipped unreadable learn store {url}: key 'praison:learn:insights': not the JSON the "
        "library writes (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))\n"
        f"praisonmem: warning: skipped unreadable learn store {url}: key 'praison:learn:persona' is a hash, not the "
        "JSON string the library writes\n")
    assert _one_line(learn(cli, redis_db, "add", "persona", "x"), 4) == (
        f"praisonmem: error: {url}: key 'praison:learn:persona' is a hash, not the JSON string the library writes; "
        "not overwritten\n")
    assert _one_line(learn(cli, redis_db, "clear", "insights", "--yes"), 4).startswith(
        f"praisonmem: error: {url}: key 'praison:learn:insights': not the JSON the library writes")
    assert redis_db.dump() == before


def test_unreachable_server_and_wrong_password_are_one_line_and_never_show_the_password(cli, redis_db):
    down = _one_line(learn(cli, redis_db, "list", url=redis_db.unreachable_url), 5)
    assert down.startswith(f"praisonmem: error: {redis_db.unreachable_url}: cannot reach Redis (")
    assert down.endswith("; nothing read\n")
    wrong = "s3cret-Wrong-pw"
    url = redis_db.url("rw", password=wrong)
    for command in (("list",), ("add", "persona", "x")):
        message = _one_line(learn(cli, redis_db, *command, url=url), 5)
        assert wrong not in message and "***" in message and "refused the credentials" in message
    assert redis_db.dump() == {}
    # the right password works, and is not printed either
    good = redis_db.url("rw")
    added = learn(cli, redis_db, "add", "persona", "x", "--json", url=good)
    assert added.exit_code == 0 and redis_db.rw_password not in added.stdout + added.stderr
    listed = learn(cli, redis_db, "list", url=good)
    shown = learn(cli, redis_db, "list", "--json", url=good)
    assert redis_db.rw_password not in listed.stdout + shown.stdout
    assert shown.json()[0]["url"] == good.replace(redis_db.rw_password, "***")
    # a read-only user may read but not write: refused, nothing changed
    before = redis_db.dump()
    assert "Redis refused the command" in _one_line(learn(cli, redis_db, "add", "persona", "y",
                                                          url=redis_db.url("ro")), 4)
    assert redis_db.dump() == before


def test_bad_urls_and_options_are_usage_errors(cli, redis_db):
    for args, why in [(("--url", "http://h/"), "--url must be a redis://, rediss:// or unix:// URL"),
                      (("--url", redis_db.url(), "--scope", "shared"), "--scope does not apply to --backend redis"),
                      (("--prefix", "p:", "--backend", "file"), "--prefix does not apply to --backend file")]:
        result = cli("learn", "list", *args)
        assert (result.exit_code, result.stdout) == (2, "") and why in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1


def test_without_redis_py_the_error_says_how_to_install_it(cli, redis_db, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "redis", None)
    result = learn(cli, redis_db, "list")
    assert (result.exit_code, result.stdout, result.stderr) == (
        5, "", "praisonmem: error: Redis support needs redis-py: pip install 'praisonmem[redis]'\n")
