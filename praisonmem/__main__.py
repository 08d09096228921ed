"""``python -m praisonmem``, and the console script's entry point."""

import gc
import sys


def entry() -> None:
    """Import the CLI and run it. A Ctrl-C while the imports run (most of start-up) ends the same way as
    one during a command: one line and exit 130 (``EXIT_INTERRUPTED``), no traceback."""
    if sys.stdin is None or sys.stdout is None or sys.stderr is None:  # a descriptor closed by the caller (>&-)
        from praisonmem.cli import streams

        streams.stand_in()
    gc.disable()  # what the imports build is not garbage: no collection looks at it while they run
    try:
        from praisonmem.cli import interrupts

        interrupts.install()
        from praisonmem.cli import app
        from praisonmem.core.io import gcpolicy
    except BaseException as exc:
        handler = sys.modules.get("praisonmem.cli.interrupts")
        if not (isinstance(exc, KeyboardInterrupt) or handler is not None and handler.seen()):
            raise  # not a Ctrl-C (one that Python wrapped, e.g. in __set_name__, counts as one)
        try:
            if "--json" in sys.argv or "--ndjson" in sys.argv:  # the error object app._report writes
                sys.stderr.write('{"error": {"code": "interrupted", "message": "interrupted", "exit_code": 130}}\n')
            else:
                sys.stderr.write("praisonmem: error: interrupted\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # a stderr that takes nothing changes no exit code
            pass
        sys.exit(130)
    # What the imports built (Typer's and praisonmem's modules, classes, functions) lives until the process
    # ends: the collector need not walk it again in each collection of the run, nor at exit (≈ 10 ms of the
    # ≈ 72 that `praisonmem workspace id` took). So is what building the invoked command imports and makes
    # (app.FREEZE_BUILT); what the command creates as it runs is collected as ever.
    gc.freeze()
    gc.enable()
    gcpolicy.configure(frozen=True)  # what it froze is praisonmem's own, frozen for speed only: the core may unfreeze
    app.FREEZE_BUILT = True
    app.main()


if __name__ == "__main__":
    entry()
