"""Benchmark data: deterministic generators shared by every script.

Two corpora, both in the library's exact on-disk format
(``json.dumps(indent=2, ensure_ascii=False)``, no trailing newline):

* a PraisonAI home of N sessions x M messages (:func:`session_home`), each
  ``X.json`` with the empty ``X.json.lock`` sidecar the library leaves beside every
  file it writes. One seeded random stream over sessions in order, so the 1k home
  is the first 1,000 sessions of the 10k home, which is the first 10,000 of the
  100k home; the session files are those of the project's earlier benchmark
  (commit 19983ea) byte for byte;
* a FileMemory project with one user ``bench`` of 100,000 items
  (:func:`memory_project`): 20k short-term, 60k long-term, 10k entities and 10k
  episodic items spread over the last 7 local days.

Data is written under a data dir (``--dir``, else a fresh temp dir) and reused
when a marker file beside it records the same parameters and generator version.
Episodic file names are dates relative to the day of generation (the library
searches the last 7 days), so the marker records that day and a memory project
from another day is regenerated.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

GENERATOR_VERSION = 2
USER = "bench"
REPO = Path(__file__).resolve().parent.parent
EXAMPLE_HOME = REPO / "examples" / "home"
SMALL_SESSION = "my_chat"  # a small session of the example home, for the start-up rows

SESSION_WORDS = "weather hotel lisbon paris agent memory session tool answer question café 日本".split()
MEMORY_WORDS = ("dark mode editor tea green Lisbon trip hotel user prefers café 日本 python rust note meeting "
                "deadline friday project alpha beta").split()


def dumps(data: object) -> str:
    """The library's serialisation."""
    return json.dumps(data, indent=2, ensure_ascii=False)


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(data), encoding="utf-8")


def _ready(marker: Path, params: dict) -> bool:
    try:
        return json.loads(marker.read_text(encoding="utf-8")) == params
    except (OSError, ValueError):
        return False


def _fresh(target: Path, marker: Path) -> None:
    marker.unlink(missing_ok=True)
    shutil.rmtree(target, ignore_errors=True)


# -- sessions -----------------------------------------------------------------------------------

def session_doc(rng: random.Random, i: int, messages: int) -> dict:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    created = start + timedelta(minutes=i)
    msgs = []
    for j in range(messages):
        msgs.append({"role": "user" if j % 2 == 0 else "assistant",
                     "content": " ".join(rng.choice(SESSION_WORDS) for _ in range(rng.randint(5, 40))),
                     "timestamp": created.timestamp() + j * 1.5, "metadata": {}})
    return {"session_id": f"bench-{i:05}", "messages": msgs, "created_at": created.isoformat(),
            "updated_at": (created + timedelta(seconds=messages * 2)).isoformat(),
            "agent_name": f"Agent {i % 17}", "user_id": f"user{i % 5}",
            "metadata": {"model": "gpt-4o-mini", "total_tokens": 18 * messages, "cost": 0.0001,
                         "source": "chat"},
            "gateway_session_id": None, "agent_id": None, "runtime_state": {}, "archived_messages": [],
            "model": "gpt-4o-mini", "total_tokens": 18 * messages, "cost": 0.0001, "source": "chat"}


def write_sessions(sessions_dir: Path, sessions: int, messages: int, seed: int = 1) -> None:
    if sessions > 100_000:
        raise ValueError("session ids have 5 digits: at most 100,000 sessions")
    rng = random.Random(seed)
    sessions_dir.mkdir(parents=True, exist_ok=True)
    for i in range(sessions):
        doc = session_doc(rng, i, messages)
        (sessions_dir / f"{doc['session_id']}.json").write_text(dumps(doc), encoding="utf-8")
        (sessions_dir / f"{doc['session_id']}.json.lock").touch()  # the library's sidecar, left by every write


def session_home(data_dir: Path, sessions: int, messages: int = 20, seed: int = 1) -> Path:
    """A PraisonAI home (``<home>/sessions/*.json``), generated unless already there."""
    home = data_dir / f"home-{sessions}x{messages}-s{seed}"
    marker = data_dir / f"{home.name}.ready"
    params = {"kind": "sessions", "version": GENERATOR_VERSION, "sessions": sessions, "messages": messages,
              "seed": seed}
    if not _ready(marker, params):
        _fresh(home, marker)
        write_sessions(home / "sessions", sessions, messages, seed)
        marker.write_text(json.dumps(params), encoding="utf-8")
    return home


def session_files(home: Path) -> list[Path]:
    """The generated session files (not lock sidecars or anything a command left)."""
    return sorted(p for p in (home / "sessions").iterdir() if p.name.endswith(".json") and p.name.startswith("bench-"))


def tidy_home(home: Path) -> None:
    """Remove everything but the generated session files and their lock sidecars."""
    keep = {name for p in session_files(home) for name in (p.name, p.name + ".lock")}
    for entry in (home / "sessions").iterdir():
        if entry.name not in keep:
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    for entry in home.iterdir():
        if entry.name != "sessions":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


# -- FileMemory ---------------------------------------------------------------------------------

def memory_item(rng: random.Random, i: int, importance: float) -> dict:
    content = " ".join(rng.choice(MEMORY_WORDS) for _ in range(rng.randint(3, 14)))
    created = 1796000000.0 + i
    return {"id": hashlib.sha256(f"{content}{i}".encode()).hexdigest()[:16], "content": content, "metadata": {},
            "created_at": created, "updated_at": created, "access_count": 0, "importance": importance}


def write_memory_user(user: Path, short: int, long: int, entities: int, episodic: int, seed: int = 7,
                      today: datetime | None = None) -> None:
    rng = random.Random(seed)
    _write(user / "config.json", {"short_term_limit": short, "long_term_limit": long, "episodic_retention_days": 30,
                                  "enable_summarization": False, "summarization_threshold": 50,
                                  "importance_threshold": 0.7, "auto_promote": True})
    _write(user / "short_term.json", [memory_item(rng, i, 0.5) for i in range(short)])
    _write(user / "long_term.json", [memory_item(rng, i, rng.choice([0.6, 0.8, 0.9])) for i in range(long)])
    _write(user / "entities.json", {f"e{i:06}": {"id": f"e{i:06}", "name": rng.choice(MEMORY_WORDS) + str(i),
                                                 "entity_type": "thing", "attributes": {"note": rng.choice(MEMORY_WORDS)},
                                                 "relationships": [], "created_at": 1.0, "updated_at": 1.0}
                                    for i in range(entities)})
    today = today or datetime.now()
    per_day = episodic // 7
    for day in range(7):
        date = (today - timedelta(days=day)).strftime("%Y-%m-%d")
        _write(user / "episodic" / f"{date}.json", [memory_item(rng, i, 0.5) for i in range(per_day)])


def memory_project(data_dir: Path, short: int = 20_000, long: int = 60_000, entities: int = 10_000,
                   episodic: int = 10_000, seed: int = 7) -> Path:
    """A project dir whose ``./.praisonai/memory/bench`` holds the FileMemory items."""
    project = data_dir / f"memory-{short}-{long}-{entities}-{episodic}-s{seed}"
    marker = data_dir / f"{project.name}.ready"
    params = {"kind": "memory", "version": GENERATOR_VERSION, "short": short, "long": long, "entities": entities,
              "episodic": episodic, "seed": seed, "day": datetime.now().strftime("%Y-%m-%d")}
    if not _ready(marker, params):
        _fresh(project, marker)
        write_memory_user(memory_user_dir(project), short, long, entities, episodic, seed)
        marker.write_text(json.dumps(params), encoding="utf-8")
    return project


MEMORY_FULL = {"short": 20_000, "long": 60_000, "entities": 10_000, "episodic": 10_000}
MEMORY_QUICK = {"short": 400, "long": 1_200, "entities": 200, "episodic": 210}


def memory_user_dir(project: Path) -> Path:
    return project / ".praisonai" / "memory" / USER


def tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def scratch(data_dir: Path, name: str) -> Path:
    """An empty directory under the data dir (removed first if it exists)."""
    path = data_dir / "scratch" / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def isolated_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """Environment for every timed process: private HOME and caches, no telemetry, no colour.

    praisonmem's cache lives in PRAISONMEM_CACHE_DIR, or else the platformdirs
    user cache dir under XDG_CACHE_HOME / HOME: all three point under the data dir.
    Bytecode is written as an installed package has it (pip compiles every module): with
    PYTHONDONTWRITEBYTECODE set (as some shells and CI set it), a module edited since its .pyc
    was written would be compiled again on every timed run, and the newer code would pay for
    its size rather than its speed.
    """
    user_home = data_dir / "user-home"
    user_home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PRAISONAI", "PRAISONMEM", "XDG_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=str(user_home), XDG_CACHE_HOME=str(data_dir / "xdg-cache"),
               XDG_CONFIG_HOME=str(data_dir / "xdg-config"), PRAISONMEM_CACHE_DIR=str(data_dir / "praisonmem-cache"),
               DO_NOT_TRACK="1", PRAISONAI_TELEMETRY_DISABLED="true", NO_COLOR="1", COLUMNS="100")
    env.update(extra)
    return env


def wipe_caches(data_dir: Path) -> None:
    """Forget praisonmem's cache (both places it may live): the next run is a cold one."""
    for name in ("praisonmem-cache", "xdg-cache"):
        shutil.rmtree(data_dir / name, ignore_errors=True)
