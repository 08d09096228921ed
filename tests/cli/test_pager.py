"""Long output on a terminal goes through a pager, as git's and gh's does, and never otherwise.

Each command runs on a real pty with a set size. The pager is a shell command that records what it was given
(``cat > FILE``), so a test sees whether it ran and what it read; ``$PRAISONMEM_PAGER`` wins over ``$PAGER``;
``--no-pager``, the config key ``pager = false`` and a stdout that is not a terminal mean no pager; a text that
fits the screen is written straight to it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import read_pty

EXAMPLES = REPO / "examples" / "home"
SGR = re.compile("\x1b\\[[0-9;?]*[A-Za-z]")
SHOW = ["--home", str(EXAMPLES), "session", "show", "compacted-demo"]  # 38 lines


def on_a_terminal(args: list[str], cwd: Path, env: dict[str, str], *, lines: int = 20, columns: int = 100,
                  stdout: Path | None = None) -> tuple[int, str]:
    """``python -m praisonmem ARGS`` on a pty ``lines`` × ``columns`` (stdout to the file ``stdout`` when
    given); the exit code and what the terminal received, styling removed."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "PAGER", "PRAISONMEM_PAGER",
                                                                "LESS")}
    out = open(stdout, "wb") if stdout is not None else None
    try:
        proc = subprocess.Popen([sys.executable, "-m", "praisonmem", *args], cwd=cwd,
                                env={**base, "TERM": "xterm-256color", **env}, stdin=slave,
                                stdout=slave if out is None else out, stderr=slave)
    finally:
        if out is not None:
            out.close()
    os.close(slave)
    text = SGR.sub("", read_pty(master, proc, args).decode("utf-8"))
    return proc.wait(timeout=30), text.replace("\r\n", "\n")


def recorder(tmp_path: Path, name: str = "paged") -> tuple[str, Path]:
    """A pager that keeps what it reads in a file: its command line, and the file."""
    target = tmp_path / name
    return f"cat > '{target}'", target


def test_a_long_transcript_goes_through_the_pager_and_only_there(tmp_path):
    pager, paged = recorder(tmp_path)
    code, screen = on_a_terminal(SHOW, tmp_path, {"PAGER": pager})
    assert code == 0
    assert screen == ""  # all of it went to the pager
    direct = on_a_terminal(SHOW + ["--no-pager"], tmp_path, {})[1]
    assert SGR.sub("", paged.read_text(encoding="utf-8")) == direct  # what the terminal shows without it
    assert direct.count("\n") == 38 and direct.startswith("Session     compacted-demo\n")


@pytest.mark.parametrize("how", ["--no-pager", "config", "piped", "fits"])
def test_no_pager_when_told_so_or_not_on_a_terminal_or_when_it_fits(tmp_path, how):
    pager, paged = recorder(tmp_path)
    env = {"PAGER": pager}
    args = list(SHOW)
    lines = 20
    stdout = None
    if how == "--no-pager":
        args.append("--no-pager")
    elif how == "config":
        config = tmp_path / "config.toml"
        config.write_text("pager = false\n", encoding="utf-8")
        env["PRAISONMEM_CONFIG"] = str(config)
    elif how == "piped":
        stdout = tmp_path / "out.txt"
    else:
        lines = 60
    code, screen = on_a_terminal(args, tmp_path, env, lines=lines, stdout=stdout)
    assert code == 0
    assert not paged.exists()
    shown = stdout.read_text(encoding="utf-8") if stdout is not None else screen
    assert shown.startswith("Session     compacted-demo\n") and shown.count("\n") == 38


def test_praisonmem_pager_wins_over_pager_and_a_config_command_over_pager(tmp_path):
    ours, ours_file = recorder(tmp_path, "ours")
    theirs, theirs_file = recorder(tmp_path, "theirs")
    assert on_a_terminal(SHOW, tmp_path, {"PAGER": theirs, "PRAISONMEM_PAGER": ours})[0] == 0
    assert ours_file.exists() and not theirs_file.exists()
    ours_file.unlink()
    config = tmp_path / "config.toml"
    config.write_text(f'pager = "{ours}"\n', encoding="utf-8")
    assert on_a_terminal(SHOW, tmp_path, {"PAGER": theirs, "PRAISONMEM_CONFIG": str(config)})[0] == 0
    assert ours_file.exists() and not theirs_file.exists()
    ours_file.unlink()
    assert on_a_terminal(SHOW, tmp_path, {"PAGER": theirs, "PRAISONMEM_PAGER": "false"})[0] == 0  # none at all
    assert not ours_file.exists() and not theirs_file.exists()


def test_cat_or_an_empty_pager_means_none(tmp_path):
    for pager in ("cat", ""):
        code, screen = on_a_terminal(SHOW, tmp_path, {"PAGER": pager})
        assert code == 0 and screen.startswith("Session     compacted-demo\n")


def test_a_long_listing_is_paged_with_its_notes_after_the_table_and_json_never(tmp_path):
    pager, paged = recorder(tmp_path)
    args = ["--home", str(EXAMPLES), "session", "list"]
    code, screen = on_a_terminal(args, tmp_path, {"PAGER": pager}, lines=10, columns=80)
    assert (code, screen) == (0, "")
    text = SGR.sub("", paged.read_text(encoding="utf-8")).splitlines()
    assert text[0] == "ID                                    AGENT     MSGS  UPDATED           SCOPE"
    assert text[-2:] == ["praisonmem: not shown in 80 columns: USER, TITLE, ARCHIVED, CREATED, MODEL,",
                         "  TOKENS, COST; --wide shows every column, --columns picks them"]
    paged.unlink()
    code, screen = on_a_terminal(args + ["--json"], tmp_path, {"PAGER": pager}, lines=10)
    assert code == 0 and screen.lstrip().startswith("[") and not paged.exists()
    code, screen = on_a_terminal(args + ["--limit", "2"], tmp_path, {"PAGER": pager}, lines=10)  # fits: no pager
    assert code == 0 and screen.startswith("ID ") and not paged.exists()


def test_check_and_search_are_paged_too(tmp_path):
    pager, paged = recorder(tmp_path)
    code, screen = on_a_terminal(["--home", str(EXAMPLES), "check"], tmp_path, {"PAGER": pager}, lines=5)
    assert code == 0 and screen == ""
    assert "quarantined by the library" in paged.read_text(encoding="utf-8")
    paged.unlink()
    code, screen = on_a_terminal(["--home", str(EXAMPLES), "session", "search", "the"], tmp_path,
                                 {"PAGER": pager}, lines=5)
    assert code == 0 and screen == "" and paged.read_text(encoding="utf-8")


def test_a_pager_quitting_early_is_not_an_error(tmp_path):
    # `true` reads nothing and exits, as a reader pressing q at once: what is left cannot be written to it
    big = tmp_path / "home"
    (big / "sessions").mkdir(parents=True)
    messages = [{"role": "user", "content": f"line {n} " + "x" * 200} for n in range(2000)]
    (big / "sessions" / "big.json").write_text(json.dumps({"session_id": "big", "messages": messages}),
                                                encoding="utf-8")
    code, screen = on_a_terminal(["--home", str(big), "session", "show", "big"], tmp_path, {"PAGER": "true"})
    assert (code, screen) == (0, "")


def test_a_pager_that_is_not_there_is_said_and_the_text_shown(tmp_path):
    code, screen = on_a_terminal(SHOW, tmp_path, {"PAGER": "no-such-pager-anywhere"})
    assert code == 0
    lines = screen.replace("\n  ", " ").splitlines()  # the warning, wrapped at spaces to the terminal, rejoined
    lines = [line for line in lines if "no-such-pager-anywhere" in line]
    assert lines[-1] == ("praisonmem: warning: could not run the pager 'no-such-pager-anywhere' (command not found); "
                         "set PRAISONMEM_PAGER, or use --no-pager")
    assert "Session     compacted-demo\n" in screen


def test_the_pager_key_takes_true_false_or_a_command(cli, tmp_path):
    assert cli("config", "set", "pager", "false").exit_code == 0
    assert cli("config", "get", "pager", "--json").json()["value"] is False
    assert cli("config", "set", "pager", "less -R").exit_code == 0
    assert cli("config", "get", "pager", "--json").json()["value"] == "less -R"
    assert cli("config", "set", "pager", "on").exit_code == 0
    assert cli("config", "get", "pager", "--json").json()["value"] is True


def test_a_long_help_is_paged_on_a_terminal(tmp_path):
    pager, paged = recorder(tmp_path)
    code, screen = on_a_terminal(["session", "list", "--help"], tmp_path, {"PAGER": pager}, lines=20, columns=80)
    assert (code, screen) == (0, "")
    assert "Usage: praisonmem session list [OPTIONS]" in SGR.sub("", paged.read_text(encoding="utf-8"))
    paged.unlink()
    code, screen = on_a_terminal(["session", "list", "--help"], tmp_path, {"PAGER": pager, "PRAISONMEM_PAGER": "0"})
    assert code == 0 and "Usage: praisonmem session list [OPTIONS]" in screen and not paged.exists()


def test_no_pager_before_the_command_too(tmp_path):
    pager, paged = recorder(tmp_path)
    code, screen = on_a_terminal(["--no-pager", *SHOW], tmp_path, {"PAGER": pager})
    assert code == 0 and screen.startswith("Session     compacted-demo\n") and not paged.exists()
