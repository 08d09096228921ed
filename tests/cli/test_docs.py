"""Generated docs stay true: completions and man pages match the app, render, and work in real shells."""

from __future__ import annotations

import os
import re
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


# read by the code but not for the user to set: Click's completion hand-shake, Android's platform check
NOT_SETTINGS = {"_PRAISONMEM_COMPLETE", "ANDROID_DATA", "ANDROID_ROOT"}


def test_the_man_pages_environment_section_names_every_variable_the_code_reads():
    from praisonmem.core.config import CONFIG_ENV, KEYS

    read = {CONFIG_ENV} | {spec.env for spec in KEYS.values()}
    for source in (REPO / "praisonmem").rglob("*.py"):
        text = source.read_text(encoding="utf-8")
        read |= set(re.findall(r"(?:environ|env)(?:\.get\(|\[)\s*[\"']([A-Z][A-Z0-9_]+)[\"']", text))
        for names in re.findall(r"^[A-Z_]*ENV[A-Z_, ]* = (\"[A-Z].*)$", text, re.M):  # ENV_STORE, ENV_URL = "..."
            read |= set(re.findall(r"\"([A-Z][A-Z0-9_]+)\"", names))
    main = unroff((MAN / "praisonmem.1").read_text(encoding="utf-8"))
    environment = main[main.index(".SH ENVIRONMENT"):main.index(".SH FILES")]
    named = set(re.findall(r"[A-Z][A-Z0-9_]{2,}", " ".join(re.findall(r"^\\fB(.*)\\fR$", environment, re.M))))
    assert {"PAGER", "PRAISONMEM_PAGER", "NO_COLOR", "COLUMNS", "PRAISONAI_CONVERSATION_STORE", "MEM0_DIR"} <= read
    assert sorted(read - NOT_SETTINGS - named) == []


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
DOCS = REPO / "docs"
PAGES = {path.name: path.read_text(encoding="utf-8") for path in sorted(DOCS.glob("*.md"))}
MANUAL = "\n".join(PAGES.values())


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
def test_every_command_appears_in_the_manual(path):
    assert f"{' '.join(path)} " in MANUAL or f"{' '.join(path)}\n" in MANUAL, " ".join(path)


def test_the_readme_is_a_landing_page_whose_index_names_every_group():
    assert len(README) <= 20_000, f"README.md is {len(README):,} characters; the manual belongs in docs/"
    index = README.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in index.splitlines() if line.startswith("| `praisonmem ")]
    named = {row.split("`")[1].split()[1] for row in rows}
    groups = set(typer.main.get_command(app).commands)
    assert named == groups, f"the README's command index lacks {sorted(groups - named)}, or names no group {sorted(named - groups)}"
    for row in rows:  # each row links its group's page
        assert re.search(r"\]\(docs/[\w.-]+\.md\)", row), row


LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(text: str) -> set[str]:
    """GitHub's anchors of a page's headings (outside code blocks)."""
    found, fence = set(), False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


@pytest.mark.parametrize("name", ["README.md", *(f"docs/{n}" for n in PAGES)])
def test_every_link_of_the_docs_leads_somewhere(name):
    page = REPO / name
    text = page.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://")):
            continue
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        assert path.exists(), f"{name}: link to {target}: no such file"
        if anchor:
            assert anchor in anchors(path.read_text(encoding="utf-8")), f"{name}: link to {target}: no such heading"


def test_the_manual_index_lists_every_page():
    index = PAGES["README.md"]
    listed = set(re.findall(r"\]\(([\w.-]+\.md)\)", index))
    assert listed == set(PAGES) - {"README.md"}, (sorted(set(PAGES) - {"README.md"} - listed), sorted(listed - set(PAGES)))


def manual_exit_codes() -> dict[int, str]:
    section = PAGES["exit-codes-and-json.md"].split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    return {int(code): text.strip() for code, text in rows if code.strip().isdigit()}


def test_the_manual_exit_code_table_is_exit_codes():
    from praisonmem.core.errors import EXIT_CODES

    assert manual_exit_codes() == EXIT_CODES


def test_the_quick_start_commands_are_the_ones_ci_and_the_docs_test_run():
    """The README's two commands, exactly: CI's last line runs the test command; the docs test runs the other."""
    run_the_example = "pip install . && praisonmem --home examples/home session list"
    install_and_test = "pip install '.[test,compat]' && python -m pytest"
    quick_start = README.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    assert f"```sh\n{run_the_example}\n```" in quick_start and f"```sh\n{install_and_test}\n```" in quick_start
    assert (REPO / ".ci" / "run").read_text(encoding="utf-8").rstrip().splitlines()[-1] == install_and_test
    assert ("README.md", quick_start_line(run_the_example), [run_the_example]) in BLOCKS


def quick_start_line(command: str) -> int:
    return README.splitlines().index(command) + 1


def test_the_readme_tour_is_real_output():
    """The tour's output is what its commands print against examples/home today (regenerate with the script)."""
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_readme_tour.py"), "--check"],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr


# ------------------------------------------------ every example line of the README and docs/ runs as written

# An example block's first line says where it runs, and is itself what a reader types from the repository root:
# `export PRAISONAI_HOME=$PWD/examples/<home>` (and, for memory, `cd examples/project`).
SETUP = re.compile(r"^(?:export PRAISONAI_HOME=\$PWD/examples/[\w./-]+|cd examples/[\w./-]+)(?:\s|$)")
# A line naming a server cannot run here: the test says so, and checks that nothing else is left out.
SERVER = re.compile(r"\b(?:postgres(?:ql)?(?:\+\w+)?|mysql|rediss?|unix)://")
EXPECTED_EXIT = re.compile(r"\bexit (\d+)\b")
INVOKES = re.compile(r"(?:^|[|&;(]\s*|\$\()praisonmem ")
INSTALL = re.compile(r"^pip install \.? && ")


def comment_of(line: str) -> str:
    """The part of a shell line after an unquoted ``#`` that starts a word."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[i + 1:]
    return ""


def example_blocks() -> list[tuple[str, int, list[str]]]:
    """Every ```sh block of the README and docs/: (page, line number, its lines with continuations joined)."""
    found = []
    for name, text in [("README.md", README), *((f"docs/{n}", t) for n, t in PAGES.items())]:
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            if lines[i].strip() == "```sh":
                start, body = i + 1, []
                i += 1
                while lines[i].strip() != "```":
                    if body and body[-1].endswith("\\"):
                        body[-1] = body[-1][:-1] + " " + lines[i].strip()
                    else:
                        body.append(lines[i])
                    i += 1
                found.append((name, start + 1, body))
            i += 1
    return found




def is_example(block: list[str]) -> bool:
    """A block that runs praisonmem (the others install, test or benchmark it)."""
    return any(INVOKES.search(line.strip()) and not line.strip().startswith("#") for line in block)


def run_block(block: list[str], root: Path) -> list[tuple[str, int, int]]:
    """Run one block in bash from ``root`` (a fresh copy of examples/): (line, expected exit, exit) per line."""
    shutil.copytree(REPO / "examples", root / "examples", symlinks=True)
    user, bin_dir = root / "user", root / "bin"
    user.mkdir()
    bin_dir.mkdir()
    (bin_dir / "praisonmem").write_text(f'#!/bin/sh\nexec {sys.executable} -m praisonmem "$@"\n')
    (bin_dir / "praisonmem").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRAISONAI", "PRAISONMEM", "MEM0", "XDG_"))}
    env.update(HOME=str(user), PATH=f"{bin_dir}:{os.environ['PATH']}", PYTHONPATH=str(REPO), NO_COLOR="1",
               PRAISONMEM_CONFIG=str(user / "config.toml"))
    rc_file = root / "exit-codes"
    script, checked = ["set -o pipefail"], []
    for line in block:
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if SETUP.match(text):
            script.append(f"{text} || exit 99")
            continue
        expected = int(m[1]) if (m := EXPECTED_EXIT.search(comment_of(text))) else 0
        text = INSTALL.sub("", text)  # the quick start's `pip install . && praisonmem …`: praisonmem is installed
        if SERVER.search(text):
            continue
        command = text
        if expected == 130:  # a command that runs until Ctrl-C: Ctrl-C it
            command = re.sub(r"(^|[|&;]\s*)praisonmem ", r"\1timeout --preserve-status -s INT 5 praisonmem ", command)
        script.append(f"{{ {command}\n}} </dev/null >/dev/null 2>>{root}/stderr; echo $? >>{rc_file}")
        checked.append((text, expected))
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode != 99, f"the block's first line failed: {done.stderr}"
    codes = [int(c) for c in rc_file.read_text().split()] if rc_file.exists() else []
    assert len(codes) == len(checked), done.stderr
    return [(text, expected, code) for (text, expected), code in zip(checked, codes)]


BLOCKS = [(page, start, block) for page, start, block in example_blocks() if is_example(block)]


@pytest.fixture(scope="module")
def block_results(tmp_path_factory) -> dict[tuple[str, int], list[tuple[str, int, int]] | str]:
    """Every block run once, several at a time (each in its own copy of examples/): its lines' exit codes."""
    from concurrent.futures import ThreadPoolExecutor

    def one(item):
        page, start, block = item
        try:
            return (page, start), run_block(block, tmp_path_factory.mktemp("example"))
        except (AssertionError, subprocess.TimeoutExpired) as exc:
            return (page, start), str(exc)

    with ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as pool:
        return dict(pool.map(one, BLOCKS))


@pytest.mark.parametrize("page, start, block", BLOCKS, ids=[f"{p}:{s}" for p, s, _ in BLOCKS])
def test_every_example_says_where_it_runs_and_runs(page, start, block, block_results):
    first = next((line.strip() for line in block if line.strip()), "")
    examples = [line for line in block if INVOKES.search(line.strip()) and not line.strip().startswith("#")]
    says_its_home = all("--home examples/" in line for line in examples)
    assert SETUP.match(first) or says_its_home, (f"{page}:{start}: an example block's first line says which shipped "
                                                 f"home it runs against (export PRAISONAI_HOME=$PWD/examples/<home>, "
                                                 f"or cd examples/<dir>)")
    result = block_results[page, start]
    assert not isinstance(result, str), f"{page}:{start}: {result}"
    wrong = [f"`{text}` exited {code}, expected {expected}" for text, expected, code in result if code != expected]
    assert not wrong, f"{page}:{start}:\n" + "\n".join(wrong)
