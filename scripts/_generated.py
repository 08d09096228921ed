"""Shared by the generators: write the files, or with --check report the ones that drifted."""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(files: dict[Path, str], *, check: bool, generator: str, stale: list[Path] = ()) -> int:
    drift = [str(p) for p in stale]
    for target, text in files.items():
        if check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                drift.append(str(target))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    if drift:
        print(f"out of date (run scripts/{generator}): " + ", ".join(drift), file=sys.stderr)
        return 1
    return 0
