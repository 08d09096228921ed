"""Generated docs stay true: completions and man pages match the app, render, and work in real shells."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import typer

from praisonmem.cli.app import app
from tests.conftest import REPO

MAN = REPO / "man"
COMPLETIONS = REPO / "completions"


def require(tool: str) -> str:
    """The tool's path; a skip without it, unless CI demands the shells (PRAISONMEM_REQUIRE_SHELLS)."""
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("PRAISONMEM_REQUIRE_SHELLS"):
            pytest.fail(f"{tool} is required here (PRAISONMEM_REQUIRE_SHELLS is set) but not installed")
        pytest.skip(f"{tool} not installed")
    return path


@pytest.mark.parametrize("script", ["gen_completions.py", "gen_manpages.py"])
def test_committed_files_match_a_fresh_generation(script):
    result = subprocess.run([sys.executable, str(REPO / "scripts" / script), "--check"], capture_output=True,
                            text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr


def leaves(command, path):
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        yield path, command
        return
    for name, sub in subcommands.items():
        yield from leaves(sub, [*path, name])


def unroff(text: str) -> str:
    return text.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")


def test_every_command_and_option_appears_in_its_man_page():
    root = typer.main.get_command(app)
    main = unroff((MAN / "praisonmem.1").read_text(encoding="utf-8"))
    for param in root.params:
        for name in param.opts:
            assert name in main, name
    count = 0
    for path, command in leaves(root, ["praisonmem"]):
        page = unroff((MAN / f"praisonmem-{path[1]}.1").read_text(encoding="utf-8"))
        title = " ".join(path)
        assert title in page, title
        section = page[page.index(title):]
        for param in command.params:
            for name in param.opts if param.param_type_name == "option" else [param.metavar or param.name.upper()]:
                assert name in section, (title, name)
        count += 1
    assert count >= 40
    for section in ("EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"):
        assert f".SH {section}" in main
    for variable in ("PRAISONAI_HOME", "PRAISONAI_GLOBAL_SESSIONS", "NO_COLOR", "PRAISONMEM_CONFIG"):
        assert variable in main


@pytest.mark.parametrize("page", sorted(p.name for p in MAN.glob("*.1")))
def test_man_pages_render_without_warnings(page):
    man = require("man")
    result = subprocess.run([man, "--warnings", "-l", str(MAN / page)], capture_output=True, text=True,
                            env=dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat"))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert "praisonmem" in result.stdout


class Terminal:
    """A shell in a detached tmux session: type keys, read the screen."""

    def __init__(self, shell_command: str, home: Path) -> None:
        self.tmux = require("tmux")
        self.name = f"pm-{uuid.uuid4().hex[:8]}"
        bin_dir = Path(sys.executable).parent
        if not (bin_dir / "praisonmem").exists():
            pytest.skip("the praisonmem console script is not installed beside this Python")
        env = {"HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin", "TERM": "xterm", "LANG": "C.UTF-8"}
        subprocess.run([self.tmux, "-L", self.name, "new-session", "-d", "-s", self.name, "-x", "220", "-y", "50",
                        "env", "-i", *[f"{k}={v}" for k, v in env.items()], *shell_command.split()], check=True)

    def keys(self, *keys: str) -> None:
        subprocess.run([self.tmux, "-L", self.name, "send-keys", "-t", self.name, *keys], check=True)

    def screen(self) -> str:
        return subprocess.run([self.tmux, "-L", self.name, "capture-pane", "-p", "-t", self.name],
                              capture_output=True, text=True, check=True).stdout

    def wait_for(self, *needles: str, timeout: float = 15.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if all(n in text for n in needles) or time.monotonic() > deadline:
                return text
            time.sleep(0.2)

    def close(self) -> None:
        subprocess.run([self.tmux, "-L", self.name, "kill-server"], capture_output=True)


SHELLS = {
    "bash": ("bash --norc --noprofile", f"source {COMPLETIONS / 'praisonmem.bash'}", ["Tab", "Tab"]),
    "zsh": ("zsh -f", f"fpath=({COMPLETIONS} $fpath); autoload -U compinit; compinit -u", ["Tab"]),
    "fish": ("fish --no-config", f"source {COMPLETIONS / 'praisonmem.fish'}", ["Tab"]),
}


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_completion_scripts_complete_in_real_shells(shell, tmp_path):
    require(shell)
    command, setup, list_keys = SHELLS[shell]
    term = Terminal(command, tmp_path)
    try:
        term.keys(setup, "Enter")
        term.keys("clear", "Enter")
        time.sleep(0.5)
        term.keys("praisonmem ses", "Tab")
        screen = term.wait_for("praisonmem session")
        assert "praisonmem session" in screen, screen
        term.keys("C-u")
        term.keys("clear", "Enter")
        time.sleep(0.3)
        term.keys("praisonmem session ", *list_keys)
        screen = term.wait_for("list", "show", "search", "rename", "adopt", "prune")
        for subcommand in ("list", "show", "search", "rename", "adopt", "delete", "prune", "export", "import"):
            assert subcommand in screen, (subcommand, screen)
    finally:
        term.close()


def test_the_wheel_installs_every_completion_script_and_man_page():
    import tomllib

    shared = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"][
        "shared-data"]
    generated = {f"completions/{p.name}" for p in COMPLETIONS.iterdir()} | {f"man/{p.name}" for p in MAN.glob("*.1")}
    assert set(shared) == generated
    assert shared["completions/praisonmem.bash"] == "share/bash-completion/completions/praisonmem"
    assert shared["completions/_praisonmem"] == "share/zsh/site-functions/_praisonmem"
    assert shared["completions/praisonmem.fish"] == "share/fish/vendor_completions.d/praisonmem.fish"
    assert all(shared[f"man/{p.name}"] == f"share/man/man1/{p.name}" for p in MAN.glob("*.1"))


def _complete(words: str, env: dict[str, str]) -> list[str]:
    """What the completion scripts ask praisonmem for (Click's bash protocol), as a shell would."""
    import os
    import sys

    done = subprocess.run([sys.executable, "-m", "praisonmem"], capture_output=True, text=True, check=True,
                          env={**os.environ, **env, "_PRAISONMEM_COMPLETE": "complete_bash",
                               "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)})
    return done.stdout.split()


def test_session_ids_complete_from_the_home_a_command_would_use(fixture_home, config):
    assert "my_chat" in _complete(f"praisonmem --home {fixture_home} session show my", {})
    assert _complete("praisonmem session show my", {}) == []  # the default home is empty
    config.write_text(f'home = "{fixture_home}"\n')
    assert "my_chat" in _complete("praisonmem session show my", {})  # config home, as `session show` uses


def test_session_ids_complete_from_every_store_of_the_home_once(gateway_home):
    offered = _complete(f"praisonmem --home {gateway_home.home} session show g", {})
    assert sorted(offered) == ["gw-1", "gw-legacy"]  # gw-1 only in sessions.db; gw-legacy in both, offered once
    # the praisonai CLI's: a project store's session, the REPL/TUI's (also in sessions.db, offered once), a run
    assert _complete(f"praisonmem --home {gateway_home.home} session show proj", {}) == ["proj-sess-1"]
    assert sorted(_complete(f"praisonmem --home {gateway_home.home} session show tui", {})) == ["tui0001a",
                                                                                               "tui0002b"]
    assert _complete(f"praisonmem --home {gateway_home.home} session show run_", {}) == ["run_20261128_110000_ec9910"]


def test_store_labels_complete_from_the_home(gateway_home, fixture_home):
    for prefix, labels in (("j", ["json"]), ("s", ["sessions.db"]), ("pro", ["project:8ccfb8a2"]), ("u", ["unified"]),
                           ("l", ["legacy-run"]), ("x", [])):
        assert _complete(f"praisonmem --home {gateway_home.home} session list --store {prefix}", {}) == labels
    assert _complete(f"praisonmem --home {gateway_home.home} session show x --store pro", {}) == ["project:8ccfb8a2"]
    assert _complete(f"praisonmem --home {fixture_home} session list --store s", {}) == []  # no sessions.db there


# ---------------------------------------------------------------- docs that cannot drift (sqlite-utils' test_docs)

README = (REPO / "README.md").read_text(encoding="utf-8")


def groups_and_commands():
    """Every group (with its path) and every command below it."""
    root = typer.main.get_command(app)
    found = [(["praisonmem"], root)]

    def walk(command, path):
        for name, sub in (getattr(command, "commands", None) or {}).items():
            found.append(([*path, name], sub))
            walk(sub, [*path, name])

    walk(root, ["praisonmem"])
    return found


COMMANDS = [(path, command) for path, command in groups_and_commands() if not getattr(command, "commands", None)]


@pytest.mark.parametrize("path, command", groups_and_commands(), ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_every_command_and_group_help_has_an_example(path, command):
    assert command.help, path
    head, _, example = command.help.partition("Example:")
    assert head.strip() and example.strip().startswith(" ".join(path[:2])), path


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_every_command_appears_in_the_readme(path):
    assert f"{' '.join(path)} " in README or f"{' '.join(path)}\n" in README, " ".join(path)


def readme_exit_codes() -> dict[int, str]:
    section = README.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    return {int(code): text.strip() for code, text in rows if code.strip().isdigit()}


def test_the_readme_exit_code_table_is_exit_codes():
    from praisonmem.core.errors import EXIT_CODES

    assert readme_exit_codes() == EXIT_CODES
