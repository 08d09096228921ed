"""``praisonmem completion``: the scripts printed as completions/ holds them, installed where
each shell loads them (atomically, 0600, --dry-run), and --type/--provider values offered on Tab, through the real
bash completion machinery."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

COMPLETIONS = REPO / "completions"
FILES = {"bash": "praisonmem.bash", "zsh": "_praisonmem", "fish": "praisonmem.fish"}


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("PRAISONMEM_REQUIRE_SHELLS"):
            pytest.fail(f"{tool} is required here (PRAISONMEM_REQUIRE_SHELLS is set) but not installed")
        pytest.skip(f"{tool} not installed")
    return path


@pytest.mark.parametrize("shell", sorted(FILES))
def test_completion_prints_the_committed_script(cli, shell):
    result = cli("completion", shell)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (COMPLETIONS / FILES[shell]).read_text(encoding="utf-8")


def where(shell: str, home: Path) -> Path:
    return {"bash": home / ".local/share/bash-completion/completions/praisonmem",
            "zsh": home / ".zfunc/_praisonmem",
            "fish": home / ".config/fish/completions/praisonmem.fish"}[shell]


@pytest.mark.parametrize("shell", sorted(FILES))
def test_install_writes_the_script_where_the_shell_loads_it(cli, shell):
    home = Path(os.environ["HOME"])
    target = where(shell, home)
    dry = cli("completion", "install", shell, "--dry-run")
    assert (dry.exit_code, dry.stdout) == (0, f"would write {target} [{shell} completion]\n")
    assert not target.exists() and not (home / ".local").exists() and not (home / ".config").exists()
    done = cli("completion", "install", shell)
    assert (done.exit_code, done.stdout) == (0, f"wrote {target} [{shell} completion]\n")
    assert target.read_bytes() == (COMPLETIONS / FILES[shell]).read_bytes()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    created = target.parent
    while created != home:
        assert stat.S_IMODE(created.stat().st_mode) == 0o700, created
        created = created.parent
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no temp file left
    if shell == "zsh":
        assert done.stderr == (f"praisonmem: zsh reads it once {target.parent} is on fpath: add 'fpath=("
                               f"{target.parent} $fpath)' before 'compinit' in ~/.zshrc\n")
    else:
        assert done.stderr == ""
    again = cli("completion", "install", shell, "--json")
    assert again.exit_code == 0
    assert again.json() == [{"action": "skipped", "shell": shell, "path": str(target), "dry_run": False,
                             "detail": "already up to date"}]


def test_install_replaces_an_older_script_atomically(cli):
    target = where("bash", Path(os.environ["HOME"]))
    target.parent.mkdir(parents=True)
    target.write_text("# an older praisonmem\n")
    target.chmod(0o644)
    inode = target.stat().st_ino
    result = cli("completion", "install", "bash")
    assert result.stdout == f"wrote {target} [bash completion; it replaces an older script]\n"
    assert target.read_bytes() == (COMPLETIONS / "praisonmem.bash").read_bytes()
    assert target.stat().st_ino != inode and stat.S_IMODE(target.stat().st_mode) == 0o600  # renamed over it


def test_install_follows_xdg_and_bash_completion_user_dir(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert cli("completion", "install", "fish").exit_code == 0
    assert (tmp_path / "cfg/fish/completions/praisonmem.fish").is_file()
    monkeypatch.setenv("BASH_COMPLETION_USER_DIR", str(tmp_path / "bc"))
    assert cli("completion", "install", "bash").exit_code == 0
    assert (tmp_path / "bc/completions/praisonmem").is_file()
    monkeypatch.setenv("ZDOTDIR", str(tmp_path / "zd"))
    assert cli("completion", "install", "zsh").exit_code == 0
    assert (tmp_path / "zd/.zfunc/_praisonmem").is_file()


@pytest.mark.parametrize("shell, variable, reader", [("bash", "BASH_COMPLETION_USER_DIR", "bash-completion"),
                                                     ("zsh", "ZDOTDIR", "zsh")])
@pytest.mark.parametrize("value", ["~nosuchuser/x", "~/x", "relative/x"])
def test_install_refuses_a_directory_the_shell_would_not_read(cli, tmp_path, monkeypatch, shell, variable, reader,
                                                              value):
    """The shells use these variables as they are: a '~' in one is not expanded, so nothing may be written
    under a literal '~nosuchuser' (or the cwd, or the expanded home, where the shell never looks)."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv(variable, value)
    home = Path(os.environ["HOME"])
    before = sorted(home.rglob("*"))
    for extra in ([], ["--dry-run"]):
        result = cli("completion", "install", shell, *extra)
        assert (result.exit_code, result.stdout, result.stderr) == (
            2, "", f"praisonmem: error: {variable}={value!r} is not an absolute path ({reader} reads it as it is, "
                   "without expanding '~'): set it to an absolute path or unset it; nothing written\n")
    assert list(cwd.iterdir()) == [] and sorted(home.rglob("*")) == before


def test_install_refuses_a_symlink_and_an_unknown_shell(cli, tmp_path):
    target = where("bash", Path(os.environ["HOME"]))
    target.parent.mkdir(parents=True)
    mine = tmp_path / "dotfiles-praisonmem"
    mine.write_text("# mine\n")
    target.symlink_to(mine)
    refused = cli("completion", "install", "bash")
    assert refused.exit_code == 4 and len(refused.stderr.splitlines()) == 1
    assert "symbolic link" in refused.stderr and mine.read_text() == "# mine\n" and target.is_symlink()
    unknown = cli("completion", "install", "tcsh")
    assert (unknown.exit_code, unknown.stderr) == (2, "praisonmem: error: unknown shell 'tcsh' (choose bash, zsh, "
                                                      "fish)\n")


def bash_completes(script: Path, words: list[str], env: dict[str, str]) -> list[str]:
    """Source ``script`` in a real bash, call the function it registered for praisonmem with COMP_WORDS and
    COMP_CWORD set as readline would, and return COMPREPLY."""
    bash = require("bash")
    words_text = " ".join(f"'{w}'" for w in words)
    program = (f"source {script}; spec=$(complete -p praisonmem); fn=${{spec##*-F }}; fn=${{fn%% *}}; "
               f"COMP_WORDS=({words_text}); COMP_CWORD={len(words) - 1}; $fn praisonmem; "
               "printf '%s\\n' \"${COMPREPLY[@]}\"")
    done = subprocess.run([bash, "--norc", "--noprofile", "-c", program], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


@pytest.fixture
def shell_env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin')}"}


@pytest.mark.parametrize(("words", "offered"), [
    (["praisonmem", "memory", "list", "--type", ""], ["short", "long", "entity", "episodic", "summary"]),
    (["praisonmem", "memory", "search", "x", "--type", "e"], ["entity", "episodic"]),
    (["praisonmem", "memory", "delete", "x", "--type", "l"], ["long"]),
    (["praisonmem", "upsonic", "sessions", "--type", ""], ["agent", "team", "workflow"]),
    (["praisonmem", "completion", "install", ""], ["bash", "zsh", "fish"]),
    (["praisonmem", "comp"], ["completion"]),
])
def test_values_complete_in_real_bash(shell_env, words, offered):
    assert bash_completes(COMPLETIONS / "praisonmem.bash", words, shell_env) == offered


def test_providers_complete_in_real_bash(shell_env):
    from praisonmem.core.memory import provider_names

    offered = bash_completes(COMPLETIONS / "praisonmem.bash", ["praisonmem", "memory", "list", "--provider", ""],
                             shell_env)
    assert offered == provider_names() and offered[:2] == ["file", "sqlite"]
    assert bash_completes(COMPLETIONS / "praisonmem.bash", ["praisonmem", "memory", "users", "--provider", "s"],
                          shell_env) == ["sqlite"]


def test_bash_completion_loads_the_installed_script_by_itself(cli, shell_env, tmp_path):
    """bash-completion's own loader (as an interactive shell has it) finds the script install wrote."""
    loader = Path("/usr/share/bash-completion/bash_completion")
    if not loader.is_file():
        if os.environ.get("PRAISONMEM_REQUIRE_SHELLS"):
            pytest.fail("bash-completion is required here (PRAISONMEM_REQUIRE_SHELLS is set) but not installed")
        pytest.skip("bash-completion not installed")
    assert cli("completion", "install", "bash").exit_code == 0
    bash = require("bash")
    program = (f"source {loader}; _completion_loader praisonmem; complete -p praisonmem; "
               "COMP_WORDS=(praisonmem memory list --type ep); COMP_CWORD=4; _praisonmem_completion praisonmem; "
               "printf '%s\\n' \"${COMPREPLY[@]}\"")
    done = subprocess.run([bash, "--norc", "--noprofile", "-c", program], capture_output=True, text=True,
                          env=shell_env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["complete -o default -F _praisonmem_completion praisonmem", "episodic"]


def test_completion_json_is_not_a_script(cli):
    """--json on install is the change record; the printing commands have no --json (a script is text)."""
    result = cli("completion", "install", "fish", "--dry-run", "--json")
    assert json.loads(result.stdout)[0]["action"] == "wrote"
