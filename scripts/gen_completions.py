#!/usr/bin/env python3
"""Regenerate completions/ from the app: bash, zsh and fish scripts.

Each script is what ``praisonmem completion <shell>`` prints (praisonmem/cli/completion.py's ``script``), run
through this interpreter, so the committed files and the command never differ. ``--check`` compares instead of
writing (exit 1 on drift).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from _generated import write_or_check

ROOT = Path(__file__).resolve().parent.parent
FILES = {"bash": "praisonmem.bash", "zsh": "_praisonmem", "fish": "praisonmem.fish"}


def script(shell: str) -> str:
    return subprocess.run([sys.executable, "-m", "praisonmem", "completion", shell], capture_output=True, text=True,
                          check=True, cwd=ROOT).stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed files differ")
    ap.add_argument("--out", type=Path, default=ROOT / "completions")
    args = ap.parse_args()
    files = {args.out / name: script(shell) for shell, name in FILES.items()}
    return write_or_check(files, check=args.check, generator="gen_completions.py")


if __name__ == "__main__":
    sys.exit(main())
