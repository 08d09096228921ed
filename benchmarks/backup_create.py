#!/usr/bin/env python3
"""praisonmem backup create of the 10k home vs tar czf of the same files.

On the 10k home (10,000 sessions x 20 messages, with their lock sidecars), in
interleaved rounds, each writing a new archive into an empty dir (removed after):

* praisonmem: ``backup create --include sessions -o DIR/backup.tar.gz``;
* tar czf: ``tar czf DIR/sessions.tar.gz -C HOME -T LIST``, LIST the session files
  (``sessions/*.json``, the files the backup holds; gzip's default level 6).

Goal (README.md, The rows): <= 2x tar czf. Checked: the backup holds every session file of the
home byte for byte and no other session file (plus its manifest), and tar's archive
lists the same files.
"""

from __future__ import annotations

import shutil
import sys
import tarfile
from pathlib import Path

import _bench
import _data
from _bench import Context, Row, Sample

ROUNDS = 7


def body(ctx: Context) -> list[Row]:
    size = ctx.sessions
    home = _data.session_home(ctx.data_dir, size)
    _data.tidy_home(home)
    files = _data.session_files(home)
    listing = ctx.data_dir / "scratch" / "tar-files.txt"
    listing.parent.mkdir(parents=True, exist_ok=True)
    listing.write_text("".join(f"sessions/{p.name}\n" for p in files), encoding="utf-8")
    out = ctx.data_dir / "scratch" / "backup-out"
    print(f"backup create, {size:,} sessions ({sum(p.stat().st_size for p in files) / 1e6:.0f} MB), "
          f"{_bench.load_line()}", file=sys.stderr)

    def fresh_out() -> Path:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        return out

    def ours() -> tuple[_bench.Run, Path]:
        target = fresh_out() / "backup.tar.gz"
        return ctx.pm_run("backup", "create", "--include", "sessions", "-o", str(target), home=home), target

    def theirs() -> tuple[_bench.Run, Path]:
        target = fresh_out() / "sessions.tar.gz"
        return _bench.run(["tar", "czf", str(target), "-C", str(home), "-T", str(listing)], env=ctx.env,
                          cwd=ctx.cwd), target

    _, archive = ours()
    verify(archive, files)
    _, archive = theirs()
    with tarfile.open(archive) as tar:
        assert sorted(tar.getnames()) == [f"sessions/{p.name}" for p in files]

    def praisonmem() -> dict[str, Sample]:
        result, target = ours()
        assert target.stat().st_size > 0
        return {"praisonmem": result.sample}

    def tar_czf() -> dict[str, Sample]:
        result, target = theirs()
        assert target.stat().st_size > 0
        return {"tar czf": result.sample}

    load_before = _bench.load_line()
    try:
        samples = _bench.interleave([praisonmem, tar_czf], ctx.rounds)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    details = _bench.details(samples, load_before, sessions=size)
    return [_bench.ratio_row(f"backup create, {size:,}-session home", samples, "praisonmem", "tar czf", 2.0,
                             checked="every session file in the backup, byte for byte", details=details)]


def verify(archive: Path, files: list[Path]) -> None:
    expected = {f"home/sessions/{p.name}": p for p in files}
    seen = set()
    with tarfile.open(archive) as tar:
        for member in tar:
            if member.name == "manifest.json":
                continue
            assert member.name in expected, f"unexpected member {member.name}"
            assert tar.extractfile(member).read() == expected[member.name].read_bytes(), member.name
            seen.add(member.name)
    assert seen == set(expected), f"{len(set(expected) - seen)} session files missing from the backup"


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body)
