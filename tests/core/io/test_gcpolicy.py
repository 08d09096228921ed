"""The collector policy is set in one place, by the console script; a program importing the core gets the
default, under which praisonmem never unfreezes what that program froze."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

PACKAGE = REPO / "praisonmem"


def test_only_the_entry_point_configures_the_policy():
    callers = sorted(p.relative_to(REPO).as_posix() for p in PACKAGE.rglob("*.py")
                     if "gcpolicy.configure(" in p.read_text(encoding="utf-8"))
    assert callers == ["praisonmem/__main__.py"]


def test_a_program_importing_the_core_keeps_its_frozen_objects():
    # a pre-fork server: it froze its own objects, then uses the core, which builds many young objects
    code = ("import gc\n"
            "import praisonmem\n"
            "from praisonmem.core.io import gcpolicy\n"
            "mine = [[i] for i in range(1000)]\n"
            "gc.freeze()\n"
            "frozen = gc.get_freeze_count()\n"
            "with gcpolicy.no_gc():\n"
            "    young = [[i] for i in range(3 * gcpolicy.YOUNG_MANY)]\n"
            "with gcpolicy.quiet_gc():\n"
            "    gcpolicy.to_oldest()\n"
            "print(hasattr(praisonmem, 'CLI'), gcpolicy.start_up_frozen(), gc.get_freeze_count() == frozen > 0)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout == "False False True\n"
