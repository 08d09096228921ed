"""A Ctrl-C while orjson initialises ends the program as interrupted, never with a crash.

orjson's module init imports standard-library modules (uuid, dataclasses, datetime, json, enum) and uses what
they return unchecked: a KeyboardInterrupt raised inside one of those imports made the process die of SIGSEGV.
fastjson imports orjson with SIGINT and SIGALRM (the CLI raises an unanswered Ctrl-C again on it) blocked, so
the signal is handled just after the import instead.
"""

from __future__ import annotations

import signal
import subprocess
import sys

from tests.conftest import REPO

# A fresh interpreter where none of orjson's own imports is loaded yet: the first module orjson's init asks the
# import system for, a finder answers by sending this process SIGINT, as a Ctrl-C landing at that moment would.
CHILD = """
import signal, sys

# Python leaves SIGINT ignored when it starts ignored (a shell's background job): the Ctrl-C tested needs its handler.
signal.signal(signal.SIGINT, signal.default_int_handler)

class CtrlCDuringOrjsonInit:
    tripped = False

    def find_spec(self, name, path=None, target=None):
        if not self.tripped and "orjson" in sys.modules and not name.startswith("orjson"):
            CtrlCDuringOrjsonInit.tripped = True
            signal.raise_signal(signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlCDuringOrjsonInit())
try:
    from praisonmem.core.io import fastjson
except KeyboardInterrupt:
    import orjson
    print(CtrlCDuringOrjsonInit.tripped, orjson.dumps({"a": [1]}), signal.pthread_sigmask(signal.SIG_BLOCK, []))
    sys.exit(130)
print("not interrupted", CtrlCDuringOrjsonInit.tripped)
"""


def test_ctrl_c_during_orjson_init_is_a_keyboard_interrupt_after_it():
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode != -signal.SIGSEGV, "orjson's init crashed on a Ctrl-C"
    assert (done.returncode, done.stdout, done.stderr) == (130, "True b'{\"a\":[1]}' set()\n", "")


def test_the_import_leaves_the_signal_mask_as_it_found_it():
    code = ("import signal\n"
            "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n"
            "from praisonmem.core.io import fastjson\n"
            "print(sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout == f"[{signal.SIGUSR1!r}]\n"


def test_orjson_is_imported_in_one_place():
    importers = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "praisonmem").rglob("*.py")
                       if "import orjson" in p.read_text(encoding="utf-8"))
    assert importers == ["praisonmem/core/io/fastjson.py"]
