"""The walk shared with a forked helper (a large tree): the same report as one process walking it all, whatever the
helper does (it fails, it sends garbage: the parent walks its share itself); an interrupted walk leaves no helper
behind."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from praisonmem.core.locate import walk as walk_module
from praisonmem.core.locate.model import Report
from praisonmem.core.locate.walk import Context, walk

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "praisonai-1.7.17"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A home and a project the real library wrote, among plain directories, in several branches."""
    root = tmp_path_factory.mktemp("split")
    for branch in ("a", "b", "c"):
        shutil.copytree(FIXTURES / "home", root / branch / "home")
        shutil.copytree(FIXTURES / "project", root / branch / "project")
        for d in range(12):
            plain = root / branch / "src" / f"pkg{d:02d}"
            plain.mkdir(parents=True)
            (plain / "data.json").write_text(json.dumps({"name": f"pkg{d}"}))
            (plain / "x.py").write_text("x = 1\n")
    return root


def report_of(root: Path, split_after: int) -> tuple[dict, int]:
    ctx = Context(Report(), split_after=split_after)
    walk(str(root), 6, ctx)
    report = ctx.report
    report.stores.sort(key=lambda s: (s.path, s.kind))
    return report.to_json(), report.files_visited


def forks(monkeypatch) -> list[int]:
    made: list[int] = []
    real = os.fork

    def fork() -> int:
        pid = real()
        if pid:
            made.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return made


def reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_shared_walk_reports_what_one_process_does(tree, monkeypatch):
    alone = report_of(tree, 0)
    assert len(alone[0]["stores"]) > 10 and alone[1] > 100
    made = forks(monkeypatch)
    for split_after in (1, 2, 7, 40):
        assert report_of(tree, split_after) == alone, split_after
    assert len(made) == 4 and all(reaped(pid) for pid in made)


@pytest.mark.parametrize("helper", [
    lambda fd, *args: os._exit(3),  # dies
    lambda fd, *args: (os.write(fd, b"\x80\x04not a pickle"), os._exit(0)),  # says nothing that parses
    lambda fd, *args: (os.kill(os.getpid(), 9)),  # killed
])
def test_a_failed_helper_s_share_is_walked_by_the_parent(tree, monkeypatch, helper):
    alone = report_of(tree, 0)
    made = forks(monkeypatch)
    monkeypatch.setattr(walk_module, "_helper_main", helper)
    assert report_of(tree, 3) == alone
    assert len(made) == 1 and reaped(made[0])


def test_an_interrupted_walk_kills_and_reaps_its_helper(tree, monkeypatch):
    made = forks(monkeypatch)
    parent = os.getpid()
    real = walk_module._classify
    seen = []

    def classify(path, listing, ctx):
        seen.append(path)
        if os.getpid() == parent and made and len(seen) > 5:
            raise KeyboardInterrupt
        return real(path, listing, ctx)

    monkeypatch.setattr(walk_module, "_classify", classify)
    with pytest.raises(KeyboardInterrupt):
        report_of(tree, 2)
    assert len(made) == 1 and reaped(made[0])


def test_without_a_process_to_fork_one_process_walks_it_all(tree, monkeypatch):
    alone = report_of(tree, 0)

    def fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", fork)
    assert report_of(tree, 2) == alone
