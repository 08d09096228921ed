"""SIGKILL a write at its write system calls, then rerun it: the rerun ends exactly where an uninterrupted run does.

One uninterrupted run is traced to list the write-type system calls the
praisonmem process makes (each ``openat`` that can create or write, ``write``,
``pwrite64``, ``fsync``, ``fdatasync``, ``rename``, ``unlink``, ``ftruncate`` …).
Then, for each of them (or, for the longer writes, a sample that keeps the
calls on both sides of every fsync, rename, unlink and truncate: each commit,
VACUUM, checkpoint and file replace), a fresh copy of the home is changed by
a run that strace kills on entering exactly that call
(``-e inject=<syscall>:signal=KILL:when=N``), and the same command is run again.
The rerun must complete (exit 0; or, when the kill came after the last change,
the command's "nothing left to do" code), every session and spill file must
parse, the state must be exactly the uninterrupted run's (the files, the rows of
``sessions_index.db`` and ``sessions.db``, the memory databases), and no byte of
the text a delete or redaction removes may be left in any file (``-wal`` and the
index included). The reruns run in-process with every temp file the killed run
left taken as older than a minute, as a rerun later on would find them.

strace needs ptrace; without it the test is skipped, unless
PRAISONMEM_REQUIRE_STRACE=1 (CI), where it fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import PRAISONAI_FIXTURES, REPO
from tests.eras import era_full_home, era_workspace
from tests.helpers import ERAS, spill
from tests.indexstate import copy_of, holding, rows, terms

WRITE_CALLS = ("openat", "open", "creat", "write", "pwrite64", "writev", "fsync", "fdatasync", "rename",
               "renameat", "renameat2", "unlink", "unlinkat", "mkdir", "mkdirat", "fchmod", "fchmodat", "chmod",
               "ftruncate", "truncate", "link", "linkat", "symlink", "symlinkat")
WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
# the calls that end a phase (a durable write, a replace, a removal, a truncated -wal): killed before and after each
BOUNDARIES = ("fsync", "fdatasync", "rename", "renameat", "renameat2", "unlink", "unlinkat", "ftruncate", "truncate")
LINE = re.compile(r"^(\d+) +([a-z0-9_]+)\((.*)$")
SECRET = "ghp_Zq3vLm8Rt2Wx9Kp4Nd7Bf1Hs6Jc0Ya5Ge2Ui"  # a GitHub token by the secret rules' pattern
SECRET_TERM = SECRET[4:].lower()  # what FTS5 keeps of it: '_' separates tokens, terms are lower-cased
GONE = "zebracornish"  # a word only the deleted or replaced session has


def strace_or_skip() -> str:
    strace = shutil.which("strace")
    problem = None
    if strace is None:
        problem = "strace is not installed (Debian package strace)"
    else:
        probe = subprocess.run([strace, "-f", "-qq", "-o", os.devnull, "true"], capture_output=True, text=True)
        if probe.returncode != 0:
            problem = f"strace cannot trace here (ptrace refused?): {probe.stderr.strip()}"
    if problem is None:
        return strace
    if os.environ.get("PRAISONMEM_REQUIRE_STRACE"):
        pytest.fail(f"PRAISONMEM_REQUIRE_STRACE is set but {problem}")
    pytest.skip(problem)


def environment() -> dict[str, str]:
    # No bytecode writes: they would add write calls to one run and not the next.
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(REPO), "COLUMNS": "200"}


def praisonmem(home: Path, args: list[str], *, cwd: Path, strace: list[str] | None = None
               ) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "praisonmem", "--home", str(home), *args]
    return subprocess.run((strace or []) + command, cwd=cwd, env=environment(), capture_output=True, text=True,
                          timeout=120)


def write_calls(trace: Path) -> list[tuple[str, int]]:
    """``(syscall, N)`` for each write-type call of the traced main process, N counting all calls of that name."""
    counts: dict[str, int] = {}
    found = []
    main = None
    for line in trace.read_text().splitlines():
        match = LINE.match(line)
        if not match or "resumed>" in line:
            continue
        pid, name, rest = match.groups()
        main = main or pid
        if pid != main:
            continue
        counts[name] = counts.get(name, 0) + 1
        if name not in ("openat", "open") or any(flag in rest for flag in WRITE_FLAGS):
            found.append((name, counts[name]))
    return found


def kill_points(calls: list[tuple[str, int]], limit: int | None) -> list[tuple[str, int]]:
    """Every call; or, when there are more than ``limit``, the first and last and the calls on both sides of each
    boundary (thinned evenly to ``limit`` if they are more), the rest of ``limit`` spread evenly over the others."""
    if limit is None or len(calls) <= limit:
        return calls
    keep = {0, len(calls) - 1}
    for i, (name, _) in enumerate(calls):
        if name in BOUNDARIES:
            keep |= {i, min(i + 1, len(calls) - 1)}
    chosen = sorted(keep)
    if len(chosen) > limit:
        chosen = sorted({chosen[round(j * (len(chosen) - 1) / (limit - 1))] for j in range(limit)})
    others = [i for i in range(len(calls)) if i not in keep]
    room = limit - len(chosen)
    if room > 0 and others:
        chosen = sorted(set(chosen) | {others[round(j * (len(others) - 1) / max(room - 1, 1))] for j in range(room)})
    return [calls[i] for i in chosen]


def home_state(root: Path) -> dict[str, object]:
    """Every session and spill file, parsed (a file that does not parse fails the test here)."""
    state: dict[str, object] = {}
    for sub in ("sessions", "state/session_spill"):
        for path in sorted((root / sub).glob("*.json")):
            state[f"{sub}/{path.name}"] = json.loads(path.read_text(encoding="utf-8"))
    return state


def with_index(root: Path) -> dict[str, object]:
    """The session files and every row of the directory's search index."""
    return {**home_state(root), "index": rows(root / "sessions" / "sessions_index.db")}


def transcript_rows(root: Path) -> dict[str, object]:
    """Every row of sessions.db as stored (read from a copy of it and its -wal)."""
    with copy_of(root / "sessions" / "sessions.db") as conn:
        return {"sessions.db": sorted(conn.execute("SELECT * FROM sessions"))}


def leftovers(root: Path) -> list[str]:
    """Temp files and hot journals under ``root``: a rerun leaves none of what the killed run left."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.name.endswith((".tmp", "-journal")) and p.is_file())


class Crash:
    """Kill ``args`` at its write calls on fresh copies of a home built once, and rerun it in-process.

    The commands run in ``work`` (``cwd``), or with ``in_home`` in each copy itself (for paths relative to it);
    ``prepare`` resets what lies outside the home before each run."""

    def __init__(self, tmp_path: Path, cli: Callable, monkeypatch: pytest.MonkeyPatch,
                 build: Callable[[Path, Path], None], args: list[str], *, cwd: Path | None = None,
                 in_home: bool = False, prepare: Callable[[], None] = lambda: None) -> None:
        from praisonmem.core.io import jsonfile

        self.strace = strace_or_skip()
        self.tmp, self.cli, self.args, self.monkeypatch = tmp_path, cli, args, monkeypatch
        self.work = cwd or tmp_path / "work"
        self.work.mkdir(exist_ok=True)
        self.in_home, self.prepare = in_home, prepare
        self.template = tmp_path / "template"
        build(self.template, self.work)
        # a rerun comes later than the kill: every temp file the killed run left is older than a minute by then
        monkeypatch.setattr(jsonfile, "LEFTOVER_AGE", -1.0)

    def fresh(self, name: str) -> Path:
        self.prepare()
        home = self.tmp / name
        shutil.copytree(self.template, home, symlinks=True)
        self.monkeypatch.chdir(home if self.in_home else self.work)
        return home

    def run(self, state: Callable[[Path], dict], *, limit: int | None = None, done: tuple[int, ...] = (3,),
            removed: tuple[bytes, ...] = (), terms_removed: tuple[str, ...] = (), minimum: int = 10,
            normalise: Callable[[dict], dict] = lambda s: s) -> int:
        """The crash loop; ``done``: the exit codes a rerun may give when the kill came after the last change
        (then the state must already be the final one).
        The number of kill points."""
        reference = self.fresh("reference")
        trace = self.tmp / "trace.txt"
        finished = praisonmem(reference, self.args, cwd=Path.cwd(),
                              strace=[self.strace, "-f", "-qq", "-o", str(trace), "-e", f"trace={','.join(WRITE_CALLS)}"])
        assert finished.returncode == 0, finished.stderr
        expected = normalise(state(reference))
        self.clean(reference, removed, terms_removed)
        calls = write_calls(trace)
        assert len(calls) >= minimum, calls
        points = kill_points(calls, limit)
        for name, n in points:
            home = self.fresh(f"{name}-{n}")
            killed = praisonmem(home, self.args, cwd=Path.cwd(),
                                strace=[self.strace, "-f", "-qq", "-o", os.devnull, "-e", f"trace={name}",
                                        "-e", f"inject={name}:signal=KILL:when={n}"])
            assert killed.returncode in (-9, 137), (name, n, killed.returncode, killed.stderr)
            rerun = self.cli("--home", home, *self.args)
            assert rerun.exit_code == 0 or (rerun.exit_code in done and normalise(state(home)) == expected), \
                (name, n, rerun.exit_code, rerun.stderr)
            assert normalise(state(home)) == expected, (name, n, rerun.stdout, rerun.stderr)
            assert leftovers(home) == [], (name, n)
            self.clean(home, removed, terms_removed, (name, n))
            shutil.rmtree(home)
        return len(points)

    @staticmethod
    def clean(home: Path, removed: tuple[bytes, ...], terms_removed: tuple[str, ...], where: object = None) -> None:
        for needle in removed:
            assert holding(home, needle) == [], (where, needle)
        for index in home.rglob("sessions_index.db"):
            assert terms(index).isdisjoint(terms_removed), (where, index)


# ---------------------------------------------------------------- JSON sessions (the existing moves)


def test_rename_killed_at_any_write_is_finished_by_the_rerun(tmp_path, cli, monkeypatch):
    def build(home: Path, work: Path) -> None:
        (home / "sessions").mkdir(parents=True)
        for name in ("my_chat.json", "compacted-demo.json"):
            shutil.copy(PRAISONAI_FIXTURES / "home" / "sessions" / name, home / "sessions" / name)
        spill(home, "my_chat", "my_chat", "a turn spilled after a failed write", "and another")

    count = Crash(tmp_path, cli, monkeypatch, build, ["session", "rename", "my_chat", "kept/chat", "--force"]
                  ).run(home_state)
    assert count >= 12


def test_adopt_of_both_name_only_files_killed_at_any_write_is_finished_by_the_rerun(tmp_path, cli, monkeypatch):
    def build(home: Path, work: Path) -> None:
        (home / "sessions").mkdir(parents=True)
        for era, stem in (("1.5.122", "history_e60a461d"), ("1.6.157", "history_8fe938c0")):
            shutil.copy(ERAS / era / "home" / "sessions" / f"{stem}.json", home / "sessions" / f"{stem}.json")
            spill(home, stem, stem, f"spilled for {stem}")

    count = Crash(tmp_path, cli, monkeypatch, build, ["session", "adopt", "Legacy Bot", "--workspace", "."]
                  ).run(home_state)
    assert count >= 20


def test_adopt_merge_into_a_compacted_history_killed_at_any_write_is_finished_by_the_rerun(tmp_path, cli,
                                                                                          monkeypatch):
    from praisonmem.core.sessions import history_id, workspace_id

    def build(home: Path, work: Path) -> None:
        (home / "sessions").mkdir(parents=True)
        shutil.copy(ERAS / "1.6.157" / "home" / "sessions" / "history_8fe938c0.json", home / "sessions")
        compacted = json.loads((PRAISONAI_FIXTURES / "home" / "sessions" / "compacted-demo.json").read_text())
        target = history_id(workspace_id(work), "Legacy Bot")
        (home / "sessions" / f"{target}.json").write_text(json.dumps({**compacted, "session_id": target}))

    def without_updated_at(state: dict) -> dict:
        return {k: {**v, "updated_at": None} if k.startswith("sessions/") else v for k, v in state.items()}

    count = Crash(tmp_path, cli, monkeypatch, build, ["session", "adopt", "Legacy Bot", "--merge", "--workspace", "."]
                  ).run(home_state, normalise=without_updated_at)
    assert count >= 10


def huge_home(home: Path, work: Path) -> None:
    """A session file above the size from which rename and retitle stream it (a message at a time), with turns
    spilled for it, beside a small one."""
    from praisonmem.core.layout import HUGE_SESSION as THRESHOLD

    (home / "sessions").mkdir(parents=True)
    base = json.loads((PRAISONAI_FIXTURES / "home" / "sessions" / "my_chat.json").read_text(encoding="utf-8"))
    turn = {"role": "user", "content": "lisbon weather café 日本 " * 20, "timestamp": 1796000000.0, "metadata": {}}
    count = THRESHOLD // len(json.dumps(turn, indent=2, ensure_ascii=False).encode()) + 100
    doc = {**base, "messages": [{**turn, "timestamp": 1796000000.0 + i} for i in range(count)]}
    path = home / "sessions" / "my_chat.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    assert path.stat().st_size > THRESHOLD
    shutil.copy(PRAISONAI_FIXTURES / "home" / "sessions" / "compacted-demo.json", home / "sessions")
    spill(home, "my_chat", "my_chat", "a turn spilled after a failed write")


def test_rename_of_a_huge_session_killed_at_any_write_is_finished_by_the_rerun(tmp_path, cli, monkeypatch):
    count = Crash(tmp_path, cli, monkeypatch, huge_home, ["session", "rename", "my_chat", "kept/chat", "--force"]
                  ).run(home_state, limit=24)
    assert count >= 12


def test_retitle_of_a_huge_session_killed_at_any_write_is_finished_by_the_rerun(tmp_path, cli, monkeypatch):
    def without_updated_at(state: dict) -> dict:
        return {k: {**v, "updated_at": None} if k.startswith("sessions/") else v for k, v in state.items()}

    count = Crash(tmp_path, cli, monkeypatch, huge_home, ["session", "rename", "my_chat", "--title", "Big one"]
                  ).run(home_state, limit=16, normalise=without_updated_at)
    assert count >= 6


# ---------------------------------------------------------------- JSON sessions with sessions_index.db

INDEXED = """
import json, sys
from praisonaiagents.session import SqliteSessionStore
store = SqliteSessionStore(session_dir=sys.argv[1])
for sid, texts in json.loads(sys.argv[2]).items():
    for i, text in enumerate(texts):
        store.add_message(sid, "user" if i % 2 == 0 else "assistant", text)
store.search("words")  # the backfill: every session indexed, with its route row
"""


def indexed_home(home: Path, work: Path) -> None:
    """A JSON directory the real SqliteSessionStore wrote and indexed: 'chat' holds a secret and a word no other
    session has, 'other' neither."""
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    texts = {"chat": [f"my token is {SECRET} please keep it", f"noted, the {GONE} plan"],
             "other": ["nothing secret here", "just words"]}
    subprocess.run([sys.executable, "-c", INDEXED, str(sessions), json.dumps(texts)], check=True, env=environment(),
                   cwd=work, capture_output=True)
    assert (sessions / "sessions_index.db").is_file()
    spill(home, "chat", "chat", f"spilled: {SECRET}")


def test_redact_with_the_search_index_killed_anywhere_leaves_no_secret_after_the_rerun(tmp_path, cli, monkeypatch):
    crash = Crash(tmp_path, cli, monkeypatch, indexed_home, ["session", "redact", "chat", "--yes"])
    count = crash.run(with_index, limit=26, done=(), removed=(SECRET.encode(), SECRET_TERM[-14:].encode()),
                      terms_removed=(SECRET_TERM,))
    assert count >= 20


def test_delete_with_the_search_index_killed_anywhere_leaves_none_of_it_after_the_rerun(tmp_path, cli, monkeypatch):
    crash = Crash(tmp_path, cli, monkeypatch, indexed_home, ["session", "delete", "chat", "--force", "--yes"])
    count = crash.run(with_index, limit=24, removed=(GONE.encode(),), terms_removed=(GONE, SECRET_TERM))
    assert count >= 12


def test_rename_with_the_search_index_killed_anywhere_moves_its_rows_once_the_rerun_is_done(tmp_path, cli,
                                                                                          monkeypatch):
    crash = Crash(tmp_path, cli, monkeypatch, indexed_home, ["session", "rename", "chat", "kept", "--force"])
    count = crash.run(with_index, limit=26)
    assert count >= 20


def test_import_replacing_an_indexed_session_killed_anywhere_is_finished_by_the_rerun(tmp_path, cli, monkeypatch):
    export = tmp_path / "export.json"
    new = {"session_id": "chat", "messages": [{"role": "user", "content": "a fresh start", "timestamp": 1.0,
                                               "metadata": {}}], "updated_at": "2026-11-30T12:00:00+00:00"}
    fresh = {"session_id": "brand-new", "messages": [{"role": "user", "content": "hello index", "timestamp": 2.0,
                                                      "metadata": {}}], "updated_at": "2026-11-30T12:00:00+00:00"}
    export.write_text(json.dumps({"version": 1, "sessions": [new, fresh]}))
    crash = Crash(tmp_path, cli, monkeypatch, indexed_home,
                  ["session", "import", str(export), "--on-conflict", "replace", "--yes"])
    count = crash.run(with_index, limit=26, done=(), removed=(GONE.encode(),), terms_removed=(GONE,))
    assert count >= 16


# ---------------------------------------------------------------- sessions.db

TRANSCRIPTS = """
import json, sys
from praisonaiagents.session import SqliteTranscriptStore
store = SqliteTranscriptStore(session_dir=sys.argv[1])
for sid, texts in json.loads(sys.argv[2]).items():
    for i, text in enumerate(texts):
        store.add_message(sid, "user" if i % 2 == 0 else "assistant", text)
"""


def transcript_home(home: Path, work: Path) -> None:
    """A sessions.db the real SqliteTranscriptStore wrote (no JSON files beside it): 'gw-chat' holds a secret and a
    word no other row has."""
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    texts = {"gw-chat": [f"my token is {SECRET} and the {GONE} plan " + "padding " * 300, "noted"],
             "gw-keep": ["nothing secret here", "just words"]}
    subprocess.run([sys.executable, "-c", TRANSCRIPTS, str(sessions), json.dumps(texts)], check=True,
                   env=environment(), cwd=work, capture_output=True)
    assert (sessions / "sessions.db").is_file() and not list(sessions.glob("*.json"))


def test_sessions_db_delete_killed_anywhere_is_scrubbed_by_the_rerun(tmp_path, cli, monkeypatch):
    crash = Crash(tmp_path, cli, monkeypatch, transcript_home,
                  ["session", "delete", "gw-chat", "--store", "sessions.db", "--force", "--yes"])
    count = crash.run(transcript_rows, limit=30, removed=(GONE.encode(), SECRET.encode()))
    assert count >= 20


def test_sessions_db_redact_killed_anywhere_is_scrubbed_by_the_rerun(tmp_path, cli, monkeypatch):
    crash = Crash(tmp_path, cli, monkeypatch, transcript_home,
                  ["session", "redact", "gw-chat", "--store", "sessions.db", "--yes"])
    count = crash.run(transcript_rows, limit=30, done=(), removed=(SECRET.encode(),))
    assert count >= 20


# ---------------------------------------------------------------- migrate, restore, config


def memory_state(repo: Path) -> Callable[[Path], dict]:
    def state(home: Path) -> dict:
        found: dict[str, object] = {**home_state(home)}
        memory = repo / ".praisonai"
        for path in sorted(memory.rglob("*.json")):
            found[str(path.relative_to(memory))] = json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(memory.glob("*_*.db")):
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                table = "short_term_memory" if path.name.startswith("short") else "long_term_memory"
                found[path.name] = conn.execute(f"SELECT content, metadata, timestamp FROM {table}").fetchall()
            finally:
                conn.close()
        return found
    return state


def test_migrate_of_the_era_homes_killed_anywhere_is_finished_by_the_rerun(tmp_path, cli, monkeypatch):
    # the workspace is the cwd: one repository for every run, its .praisonai reset from a copy before each
    repo = era_workspace(tmp_path, "1.6.157")
    pristine = tmp_path / "pristine-praisonai"
    shutil.copytree(repo / ".praisonai", pristine)

    def build(home: Path, work: Path) -> None:
        (tmp_path / "eras").mkdir()
        shutil.move(era_full_home(tmp_path / "eras", "1.5.122", "1.6.157"), home)

    def reset() -> None:
        shutil.rmtree(repo / ".praisonai")
        shutil.copytree(pristine, repo / ".praisonai")

    crash = Crash(tmp_path, cli, monkeypatch, build, ["migrate", "--yes"], cwd=repo, prepare=reset)
    count = crash.run(memory_state(repo), limit=56, done=(0,))  # both sides of every boundary (about 53)
    assert count >= 45


def test_restore_killed_anywhere_is_finished_by_the_rerun(tmp_path, cli, monkeypatch):
    source = tmp_path / "source"
    shutil.copytree(PRAISONAI_FIXTURES / "home", source)
    archive = tmp_path / "backup.tar.gz"
    made = cli("--home", source, "--memory-dir", tmp_path / "no-memory", "backup", "create", "-o", archive)
    assert made.exit_code == 0, made.stderr
    with tarfile.open(archive) as tar:
        assert any(m.name.endswith("my_chat.json") for m in tar.getmembers())

    def build(home: Path, work: Path) -> None:
        home.mkdir()

    def restored(home: Path) -> dict:
        target = home / "restored"
        return {str(p.relative_to(target)): p.read_bytes() for p in sorted(target.rglob("*"))
                if p.is_file() and not p.name.endswith(".lock")}

    crash = Crash(tmp_path, cli, monkeypatch, build, ["backup", "restore", str(archive), "--to", "restored", "--yes"],
                  in_home=True)
    from praisonmem.core.backup import restore

    monkeypatch.setattr(restore, "STALE_TEMP", -1.0)  # the rerun comes later: the killed run's temp file is stale
    count = crash.run(restored, limit=30, done=(0,))
    assert count >= 20


def test_restore_sweeps_its_own_leftovers(tmp_path, cli, monkeypatch):
    from praisonmem.core.backup import restore

    source = tmp_path / "source"
    shutil.copytree(PRAISONAI_FIXTURES / "home", source)
    archive = tmp_path / "backup.tar.gz"
    assert cli("--home", source, "--memory-dir", tmp_path / "m", "backup", "create", "-o", archive).exit_code == 0
    target = tmp_path / "restored"
    assert cli("backup", "restore", archive, "--to", target, "--yes").exit_code == 0
    gone = subprocess.Popen(["true"])
    gone.wait()  # a process that has ended: the pid a killed restore leaves in its temp file's name
    session = next((target / "home" / "sessions").glob("my_chat.json"))
    left = session.with_name(f".{session.name}.restore-{gone.pid}-deadbeef.tmp")  # what a killed restore leaves
    left.write_bytes(session.read_bytes())
    near = session.with_name(f".{session.name}.killedab.tmp")  # another writer's pattern: not restore's to remove
    near.write_bytes(b"{}")
    monkeypatch.setattr(restore, "STALE_TEMP", -1.0)  # as if a minute had passed
    assert cli("backup", "restore", archive, "--to", target, "--on-conflict", "replace", "--yes").exit_code == 0
    assert (left.exists(), near.exists()) == (False, True)


def test_config_set_killed_anywhere_leaves_its_password_nowhere_but_the_config(tmp_path, cli, monkeypatch, config):
    config.write_text('store = "json"\n')
    original = config.read_bytes()
    url = "postgresql://mem:s3cret-pw@db.example/mem"

    def build(home: Path, work: Path) -> None:
        home.mkdir()

    def settings(home: Path) -> dict:
        return {"config": config.read_text(),
                "beside": sorted(p.name for p in config.parent.iterdir() if p.name != "config.toml.lock")}

    crash = Crash(tmp_path, cli, monkeypatch, build, ["config", "set", "upsonic.db", url],
                  prepare=lambda: config.write_bytes(original))
    count = crash.run(settings)
    assert count >= 6
    assert [p.name for p in config.parent.iterdir() if b"s3cret-pw" in p.read_bytes()] == ["config.toml"]
