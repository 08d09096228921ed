"""Memory written by praisonmem loads in the library, and the reverse; search equals FileMemory.search."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.compat.conftest import last_json, library_env, run_library

WORDS = ["dark", "mode", "Dark", "MODE", "café", "日本", "tea", "tea", "green", "Lisbon", "trip", "hotel", "user",
         "prefers", "editor", "Über", "ß", "naïve", "x", "the", "a", "Python", "rust"]


def corpus(seed: int) -> dict:
    rng = random.Random(seed)

    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))

    return {
        "short": [(sentence(), rng.choice([0.1, 0.5, 0.7, 0.9, 1.0])) for _ in range(150)],
        "long": [(sentence(), rng.choice([0.3, 0.8, 0.95])) for _ in range(150)],
        "entities": [(rng.choice(WORDS) + str(i), {"role": sentence()}) for i in range(40)],
        "episodes": [sentence() for _ in range(60)],
        "queries": [sentence() for _ in range(25)] + ["dark mode", "DARK", "日本", "tea tea", "zzz", "a", ""],
    }


BUILD_AND_SEARCH = """
    import json, sys
    from praisonaiagents.memory.file_memory import FileMemory
    data = json.loads(sys.argv[1])
    fm = FileMemory(user_id="corpus", config={"short_term_limit": 1000})
    for text, importance in data["short"]:
        fm.add_short_term(text, importance=importance)
    for text, importance in data["long"]:
        fm.add_long_term(text, importance=importance)
    for name, attrs in data["entities"]:
        fm.add_entity(name, "thing", attrs)
    for text in data["episodes"]:
        fm.add_episodic(text)
    fresh = FileMemory(user_id="corpus")
    print(json.dumps({q: fresh.search(q, limit=1000) for q in data["queries"]}))
"""


@pytest.mark.parametrize("cache", ["--no-cache", "cold", "warm"])
@pytest.mark.parametrize("seed", [1, 2])
def test_search_equals_filememory_search_on_random_corpora(cli, tmp_path, monkeypatch, seed, cache):
    """With no cache, with indexes built for each search (files this new are never cached), and from cached
    indexes (the cache told to trust new files)."""
    from praisonmem.core.io import cache as cachemod

    data = corpus(seed)
    expected = last_json(run_library(BUILD_AND_SEARCH, json.dumps(data), home=tmp_path / "h", cwd=tmp_path))
    monkeypatch.chdir(tmp_path)
    flags = ["--no-cache"] if cache == "--no-cache" else []
    if cache == "warm":
        monkeypatch.setattr(cachemod, "GRANULARITY_NS", 0)
        cli("memory", "search", "warm up", "--user-id", "corpus")
        entries = Path(os.environ["HOME"], ".cache", "praisonmem", "memory-search")
        assert len(list(entries.glob("*.bin"))) == 4  # short, long, entities, today's episodes
    for query, library_hits in expected.items():
        ours = cli(*flags, "memory", "search", query, "--user-id", "corpus", "--limit", "1000", "--json").json()
        assert [(h["type"], h["item"]["id"], h["score"]) for h in ours] == \
            [(h["type"], h["item"]["id"], h["score"]) for h in library_hits], query
        assert [h["item"] for h in ours] == [h["item"] for h in library_hits], query
        top = cli(*flags, "memory", "search", query, "--user-id", "corpus", "--json").json()
        assert [h["item"]["id"] for h in top] == [h["item"]["id"] for h in library_hits[:10]]


LOAD_FILEMEMORY = """
    import json
    from praisonaiagents.memory.file_memory import FileMemory
    fm = FileMemory(user_id="pm")
    print(json.dumps({"short": [i.id for i in fm.get_short_term()], "long": [i.id for i in fm.get_long_term()],
                      "entities": [e.id for e in fm.get_all_entities()],
                      "episodic": [i.id for i in fm.get_episodic(date="2026-03-05")],
                      "search": [r["item"]["id"] for r in fm.search("ginger", limit=50)]}))
"""


def test_filememory_loads_and_finds_what_praisonmem_stored(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    short = cli("memory", "store", "ginger tea in the morning", "--user-id", "pm").stdout.strip()
    long = cli("memory", "store", "ginger allergy: none", "--long", "--meta", "k=v", "--user-id", "pm").stdout.strip()
    cli("memory", "extract", "My name is Ginger and I prefer Python.", "--store", "--user-id", "pm")
    episode = cli("episodic", "add", "ginger shots", "--date", "2026-3-5", "--user-id", "pm").stdout.strip()
    loaded = last_json(run_library(LOAD_FILEMEMORY, home=tmp_path / "h", cwd=tmp_path))
    assert loaded["short"] == [short]
    assert long in loaded["long"] and len(loaded["long"]) == 2
    assert len(loaded["entities"]) == 1 and loaded["episodic"] == [episode]
    assert short in loaded["search"] and long in loaded["search"]


def test_praisonmem_reads_episodes_the_library_wrote(cli, tmp_path, monkeypatch):
    run_library("""
        from praisonaiagents.memory.file_memory import FileMemory
        FileMemory(user_id="ep").add_episodic("library episode", date="2026-3-5")
    """, home=tmp_path / "h", cwd=tmp_path)
    monkeypatch.chdir(tmp_path)
    rows = cli("episodic", "get", "--date", "2026-03-05", "--user-id", "ep", "--json").json()
    assert [r["item"]["content"] for r in rows] == ["library episode"]


SQLITE = """
    import json
    from praisonaiagents.memory.memory import Memory
    mem = Memory({"provider": "sqlite", "user_id": "alice"})
    mem.store_short_term("library wrote this about tea", metadata={"user_id": "alice"})
    print(json.dumps({"short": mem.search_short_term("tea", limit=10), "long": mem.search_long_term("tea", limit=10)}))
"""


def test_sqlite_provider_and_the_librarys_memory_share_files(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    [ours] = cli("memory", "store", "praisonmem wrote this about tea", "--provider", "sqlite", "--user-id", "alice",
                 "--json").json()
    cli("memory", "store", "long tea fact", "--long", "--provider", "sqlite", "--user-id", "alice")
    library = last_json(run_library(SQLITE, home=tmp_path / "h", cwd=tmp_path))
    assert ours["id"] in [r["id"] for r in library["short"]]
    assert [r["text"] for r in library["long"]] == ["long tea fact"]
    hits = cli("memory", "search", "tea", "--type", "short", "--provider", "sqlite", "--user-id", "alice",
               "--json").json()
    assert [h["item"] for h in hits] == library["short"]


AUTOMEMORY = """
    import json, sys
    from praisonaiagents.memory.auto_memory import AutoMemory
    class Null:
        pass
    out = {}
    for text in json.loads(sys.argv[1]):
        out[text] = AutoMemory(Null()).process_interaction(text, store=False)
    print(json.dumps(out))
"""

FRAGMENTS = ["My name is {N}", "I'm {N}", "call me {N}", "Name: {N}", "I prefer {T} for {W}", "I like {W}",
             "I love {W}.", "my favorite is {W}", "I am a {R}", "I work as an {R}.", "my job is {W}",
             "I live in {C}", "I am based in {C}", "I'm from {C}", "working on the {W}", "building a {W}.",
             "my project is called {W}", "using {T}", "frameworks like {W}", "tools such as {W}.", "hello there"]


def sentences(seed: int) -> list[str]:
    rng = random.Random(seed)
    fill = {"N": ["Bob", "Alice", "Zoë", "Al"], "T": ["Python", "Rust", "Go", "C++", "Haskell"],
            "W": ["systems work", "dark mode", "a CLI tool", "café apps", "x"],
            "R": ["data engineer", "teacher", "nurse"], "C": ["Lisbon", "New York", "Paris, France"]}
    out = []
    for _ in range(80):
        parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 3))]
        text = rng.choice([". ", ", and ", " and "]).join(parts)
        for key, values in fill.items():
            while "{" + key + "}" in text:
                text = text.replace("{" + key + "}", rng.choice(values), 1)
        out.append(text)
    return out


def test_extract_matches_automemory_on_random_sentences(cli, tmp_path, monkeypatch):
    texts = sentences(3) + ["My name is Bob and I prefer Rust for systems work."]
    expected = last_json(run_library(AUTOMEMORY, json.dumps(texts), home=tmp_path / "h", cwd=tmp_path))
    monkeypatch.chdir(tmp_path)
    for text in texts:
        ours = cli("memory", "extract", text, "--json").json()
        assert [{k: p[k] for k in ("type", "content", "importance", "source")} for p in ours] == expected[text], text


STORE_200 = """
    import sys
    from praisonmem.cli.app import run
    for i in range(200):
        code = run(["memory", "store", f"{sys.argv[1]} item {i}", "--long", "--user-id", "shared"])
        assert code == 0, code
"""


def test_two_praisonmem_processes_storing_concurrently_lose_nothing(tmp_path):
    env = library_env(tmp_path / "h")
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(STORE_200), name], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for name in ("left", "right")]
    for proc in procs:
        assert proc.wait(timeout=300) == 0, proc.stderr.read()
    items = json.loads((tmp_path / ".praisonai/memory/shared/long_term.json").read_text(encoding="utf-8"))
    contents = {i["content"] for i in items}
    assert contents == {f"{side} item {i}" for side in ("left", "right") for i in range(200)}
    assert len({i["id"] for i in items}) == 400


LEARN = """
    import json
    from praisonaiagents.memory.learn.stores import PersonaStore
    store = PersonaStore(user_id="alice")
    store.add("Library learned this")
    print(json.dumps([e.content for e in store._entries.values()]))
"""


def test_learn_stores_round_trip_with_the_library(cli, fixture_home):
    new_id = cli("--home", fixture_home, "learn", "add", "persona", "praisonmem learned this",
                 "--user-id", "alice").stdout.strip()
    seen = last_json(run_library(LEARN, home=fixture_home))
    assert "praisonmem learned this" in seen and "Library learned this" in seen
    rows = cli("--home", fixture_home, "learn", "list", "--store", "persona", "--json").json()
    assert {r["content"] for r in rows} == {"Prefers concise answers", "praisonmem learned this",
                                            "Library learned this"}
    assert new_id in {r["id"] for r in rows}
