"""The praisonai CLI's project id, computed read-only, equals praisonai-code's own resolver (run on a copy, since
that one writes pin and id files into .git) in every case it distinguishes."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from praisonmem.core.sessions.stores.projects import normalize_remote, project_identity
from tests.helpers import git, git_env, snapshot

RESOLVE = """
    import json, sys
    from praisonai_code.cli.utils.project import resolve_project_identity
    print(json.dumps(list(resolve_project_identity(sys.argv[1]))))
"""


def repo(path, *remotes: tuple[str, str], commits: list[str] = ()):
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=git_env())
    for name, url in remotes:
        git(path, "remote", "add", name, url)
    for date in commits:
        git(path, "commit", "-q", "--allow-empty", "-m", date, date=date)
    return path


def both(oracle, path, tmp_path):
    """praisonmem's answer, then praisonai-code's, for a fresh copy of ``path`` (the resolver may write into its
    .git; praisonmem must not), and the copy."""
    copy = tmp_path / f"copy{len(list(tmp_path.glob('copy*')))}" / path.name
    shutil.copytree(path, copy, symlinks=True)
    before = snapshot(copy)
    mine = project_identity(copy)
    assert snapshot(copy) == before  # nothing written, not even into .git
    theirs = tuple(oracle.json(RESOLVE, copy, cwd=copy))
    return (None if mine is None else (mine.project_id, mine.source)), theirs, copy


def cases(tmp_path):
    yield "scp remote", repo(tmp_path / "a", ("origin", "git@GitHub.com:Acme/Demo-Repo.git"))
    yield "https remote with credentials", repo(tmp_path / "b", ("origin", "https://user:tok@github.com/Acme/Demo-Repo.git/"))
    yield "first remote when no origin", repo(tmp_path / "c", ("zeta", "ssh://git@host:2222/z/r.git"),
                                              ("alpha", "https://example.org/a/b"))
    yield "file remote", repo(tmp_path / "d", ("origin", "file:///srv/repos/project.git"))
    yield "commits only", repo(tmp_path / "e", commits=["2026-01-02T00:00:00+0000"])
    yield "a bare-path remote falls through", repo(tmp_path / "f", ("origin", "/srv/r.git"),
                                                   commits=["2026-01-03T00:00:00+0000"])
    plain = tmp_path / "g" / "sub"
    plain.mkdir(parents=True)
    yield "plain directory", plain


@pytest.mark.parametrize("case", ["scp remote", "https remote with credentials", "first remote when no origin",
                                  "file remote", "commits only", "a bare-path remote falls through",
                                  "plain directory"])
def test_the_id_is_the_one_praisonai_code_computes(oracle, tmp_path, case):
    mine, theirs, _ = both(oracle, dict(cases(tmp_path))[case], tmp_path)
    assert mine == theirs


def test_a_pinned_root_commit_wins_while_it_is_a_root(oracle, tmp_path):
    path = repo(tmp_path / "r", commits=["2026-01-02T00:00:00+0000"])
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "--orphan", "other"], check=True, env=git_env())
    git(path, "commit", "-q", "--allow-empty", "-m", "older root", date="2025-06-01T00:00:00+0000")
    roots = subprocess.run(["git", "-C", str(path), "log", "--max-parents=0", "--all", "--format=%H"],
                           capture_output=True, text=True, check=True).stdout.split()
    newer = subprocess.run(["git", "-C", str(path), "rev-parse", "master"], capture_output=True, text=True,
                           check=True).stdout.strip()
    assert newer in roots and len(roots) == 2
    (path / ".git" / "praisonai-root-commit").write_text(newer)  # pinned before the older root appeared
    assert project_identity(path).detail == newer
    mine, theirs, _ = both(oracle, path, tmp_path)
    assert mine == theirs
    (path / ".git" / "praisonai-root-commit").write_text("0" * 40)  # a pin that is no longer a root
    assert project_identity(path).detail == sorted(set(roots) - {newer})[0]  # the oldest root, as it re-pins
    mine, theirs, _ = both(oracle, path, tmp_path)
    assert mine == theirs


def test_an_empty_repository_uses_its_cached_id_and_without_one_has_no_project_yet(oracle, tmp_path):
    path = repo(tmp_path / "empty")
    mine, theirs, copy = both(oracle, path, tmp_path)
    assert mine is None  # praisonai-code creates a random id here, so no project store can belong to it yet
    assert theirs[1] == "cached-id" and (copy / ".git" / "praisonai-project").is_file()
    shutil.copy(copy / ".git" / "praisonai-project", path / ".git" / "praisonai-project")
    mine, again, _ = both(oracle, path, tmp_path)
    assert mine == theirs == again
    (path / ".git" / "praisonai-project").write_text("\n")  # an empty cached id: the resolver falls to the path
    mine, theirs, _ = both(oracle, path, tmp_path)
    assert mine == theirs and theirs[1] == "path"


def test_normalising_remotes():
    assert normalize_remote("git@GitHub.com:Acme/Demo-Repo.git") == "github.com/Acme/Demo-Repo"
    assert normalize_remote("https://user:tok@github.com/Acme/Demo-Repo.git/") == "github.com/Acme/Demo-Repo"
    assert normalize_remote("ssh://git@Host:2222/z/r.git") == "host/z/r"
    assert normalize_remote("file:///srv/r.git") == "srv/r"
    assert normalize_remote("/srv/r.git") is None and normalize_remote("") is None
