"""``praisonmem completion``: the shell completion scripts, printed or installed."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import DryRunFlag, JsonFlag
from praisonmem.cli.output import render_outcome
from praisonmem.cli.state import state_of

app = typer.Typer(help="Print or install the shell completion script (bash, zsh, fish).\n\nExample:\n\n"
                       "    praisonmem completion install bash", no_args_is_help=True)


def _print(shell: str) -> None:
    from praisonmem.cli.app import completion_script

    typer.echo(completion_script(shell), nl=False)


@app.command("bash")
def bash_command() -> None:
    """Print the bash completion script (source it, or see 'completion install').

    Example:

        praisonmem completion bash > ~/.local/share/bash-completion/completions/praisonmem
    """
    _print("bash")


@app.command("zsh")
def zsh_command() -> None:
    """Print the zsh completion script (an autoloadable _praisonmem that also works when sourced).

    Example:

        praisonmem completion zsh > ~/.zfunc/_praisonmem
    """
    _print("zsh")


@app.command("fish")
def fish_command() -> None:
    """Print the fish completion script.

    Example:

        praisonmem completion fish | source
    """
    _print("fish")


def _complete_shells(incomplete: str) -> list[str]:
    from praisonmem.core.completion import SHELLS

    return [s for s in SHELLS if s.startswith(incomplete)]


@app.command("install")
def install_command(
    ctx: typer.Context,
    shell: Annotated[str, typer.Argument(metavar="SHELL", help="bash, zsh or fish.",
                                         autocompletion=_complete_shells)],
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Write the completion script where the shell loads it from, for this user.

    bash: $BASH_COMPLETION_USER_DIR/completions/praisonmem, else
    ${XDG_DATA_HOME:-~/.local/share}/bash-completion/completions/praisonmem
    (bash-completion loads it on first use). zsh:
    ${ZDOTDIR:-~}/.zfunc/_praisonmem (that directory must be on fpath before
    compinit). fish: ${XDG_CONFIG_HOME:-~/.config}/fish/completions/praisonmem.fish.
    Written atomically, 0600 (directories it creates 0700); a script already
    up to date is left alone; a symlink there is refused.

    Example:

        praisonmem completion install zsh --dry-run
    """
    from praisonmem.cli.app import completion_script
    from praisonmem.core.completion import SHELLS, plan_install
    from praisonmem.core.errors import UsageError

    if shell not in SHELLS:
        raise UsageError(f"unknown shell '{shell}' (choose {', '.join(SHELLS)})")
    plan = plan_install(shell, completion_script(shell))
    return render_outcome(state_of(ctx).output(as_json), plan.run(dry_run=dry_run))
