#!/usr/bin/env python3
"""Regenerate completions/ from the app: bash, zsh and fish scripts.

Each script is what ``_PRAISONMEM_COMPLETE=source_<shell> praisonmem`` prints,
run through this interpreter. The zsh file starts with ``#compdef praisonmem``
(Typer's starts with a blank line, which compinit ignores) and dispatches both
ways: completing when autoloaded from site-functions, registering itself with
``compdef`` when sourced. ``--check`` compares instead of writing (exit 1 on drift).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from _generated import write_or_check

ROOT = Path(__file__).resolve().parent.parent
FILES = {"bash": "praisonmem.bash", "zsh": "_praisonmem", "fish": "praisonmem.fish"}
ZSH_DISPATCH = """
if [ "$funcstack[1]" = "_praisonmem" ]; then
  _praisonmem_completion "$@"
else
  compdef _praisonmem_completion praisonmem
fi
"""


def script(shell: str) -> str:
    env = dict(os.environ, _PRAISONMEM_COMPLETE=f"source_{shell}")
    text = subprocess.run([sys.executable, "-m", "praisonmem"], env=env, capture_output=True, text=True,
                          check=True).stdout
    if shell == "zsh":
        body = text.strip().splitlines()
        assert body[0] == "#compdef praisonmem", body[0]
        body = [line for line in body if not line.startswith("compdef ")]
        text = "\n".join(body).rstrip() + "\n" + ZSH_DISPATCH
    return text.strip() + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed files differ")
    ap.add_argument("--out", type=Path, default=ROOT / "completions")
    args = ap.parse_args()
    files = {args.out / name: script(shell) for shell, name in FILES.items()}
    return write_or_check(files, check=args.check, generator="gen_completions.py")


if __name__ == "__main__":
    sys.exit(main())
