"""The root ``praisonmem`` command: root options, sub-command groups, and the
one place where failures become messages and exit codes.

The sub-commands live in their own modules (:data:`SUBCOMMANDS`) and are
imported and built only when a call needs them, which keeps start-up near the
cost of importing Typer.

Every command runs through :func:`main`, which calls the Click command that
Typer builds in non-standalone mode, so that usage errors, ``PraisonMemError``
subclasses, OS errors and interrupts are all reported here: one line on stderr
(or one JSON error object when ``--json``/``--ndjson`` was given) and the exit
code from :mod:`praisonmem.core.errors`.
"""

from __future__ import annotations

import gc
import math
import os
import sys
from collections.abc import Callable, Iterator, MutableMapping
from typing import Annotated, Any

import typer
from typer.core import TyperGroup
from typer.models import DefaultPlaceholder

from praisonmem import __version__
from praisonmem.cli import streams
from praisonmem.cli.state import State
from praisonmem.core.errors import (EXIT_BROKEN_PIPE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_IO, EXIT_USAGE,
                                    PraisonMemError)

# Sub-commands in the order --help lists them, and the module whose ``app`` holds
# each. Only the one a call names is imported and built: Typer's per-command
# signature analysis is most of the start-up cost, so `praisonmem workspace id`
# must not pay for the other 45 commands.
SUBCOMMANDS = {name: f"praisonmem.cli.commands.{name}" for name in (
    "workspace", "session", "memory", "episodic", "learn", "upsonic", "state", "knowledge", "check", "migrate",
    "backup", "config", "usage", "completion", "locate", "forget", "browse")}
SINGLE = ("check", "migrate", "usage", "locate", "forget", "browse")  # one command each, not a group
# Set by the console script (this process is the CLI): what building a command imported and made lives until the
# process ends, so it is frozen out of the collector's way as what the start-up imports made is (__main__.py).
FREEZE_BUILT = False
_built: dict[str, Any] = {}


def _build(name: str) -> Any:
    """The Click command for one sub-command, imported and built on first use."""
    if name not in _built:
        import importlib

        sub_app = importlib.import_module(SUBCOMMANDS[name]).app
        _evaluate_tree(sub_app, commands=name in SINGLE)
        # `check` and `migrate` (one command, no callback) become plain commands; a group's own commands are
        # built only when looked up, like the groups themselves (each costs Typer a signature analysis).
        built = _with_quiet(typer.main.get_command(sub_app)) if name in SINGLE else _lazy_group(sub_app)
        _summary(built)
        built.name = name
        _built[name] = built
    return _built[name]


def _lazy_group(sub_app: typer.Typer) -> Any:
    """``typer.main.get_group(sub_app)`` (no completion options on sub-groups), its commands built on demand."""
    if not isinstance(sub_app.info.cls, DefaultPlaceholder):  # a group class of its own: build it as Typer does
        return typer.main.get_group(sub_app)
    infos, placeholder = sub_app.registered_commands, sub_app.info.cls
    sub_app.registered_commands, sub_app.info.cls = [], _LazyGroup
    try:
        group = typer.main.get_group(sub_app)
    finally:
        sub_app.registered_commands, sub_app.info.cls = infos, placeholder

    def builder(info: Any) -> Callable[[], Any]:
        def build() -> Any:
            _evaluate(info.callback)
            return _with_quiet(typer.main.get_command_from_info(
                info, pretty_exceptions_short=sub_app.pretty_exceptions_short,
                rich_markup_mode=sub_app.rich_markup_mode))

        return build

    builders = {info.name or typer.main.get_command_name(info.callback.__name__): builder(info) for info in infos}
    nested = {n: (lambda c=c: _with_quiet(c)) for n, c in group.commands.items()}  # sub-groups Typer built eagerly
    group.commands = _LazyCommands({**builders, **nested})
    return group


def _evaluate(callback: Callable[..., Any] | None) -> None:
    """Typer reads a callback's annotations four times as it builds its command (two signatures, two type-hint
    look-ups), and under ``from __future__ import annotations`` each read evaluates the strings anew: evaluated
    once here, to the objects each read would have made, there is nothing left for Typer to evaluate."""
    annotations = getattr(callback, "__annotations__", None)
    if annotations and any(isinstance(value, str) for value in annotations.values()):
        import inspect

        callback.__annotations__ = inspect.get_annotations(callback, eval_str=True)


def _evaluate_tree(sub_app: typer.Typer, *, commands: bool) -> None:
    """:func:`_evaluate` for what Typer builds at once: the group's callback and its sub-groups, whole (and its
    commands too when ``commands``; a lazy group's are evaluated one by one as they are built)."""
    if sub_app.registered_callback is not None:
        _evaluate(sub_app.registered_callback.callback)
    if commands:
        for info in sub_app.registered_commands:
            _evaluate(info.callback)
    for group in sub_app.registered_groups:
        if group.typer_instance is not None:
            _evaluate_tree(group.typer_instance, commands=True)


QUIET_HELP = "No notes, warnings or progress on stderr (errors still show); for cron."


def _set_quiet(ctx: Any, param: Any, value: bool) -> None:
    if value:
        from praisonmem.cli.output import set_quiet

        set_quiet(True)


def _with_quiet(command: Any) -> Any:
    """``command`` (and each command of a group) finished alike: ``-q/--quiet`` (the root's option), a one-line
    summary for the group's listing, and arguments shown by their names."""
    _summary(command)
    subcommands = getattr(command, "commands", None)
    if isinstance(subcommands, dict):
        for sub in subcommands.values():
            _with_quiet(sub)
    elif subcommands is None and not any(p.name == "quiet" for p in command.params):
        command.params.append(typer.core.TyperOption(param_decls=["--quiet", "-q"], is_flag=True, default=False,
                                                     expose_value=False, callback=_set_quiet, help=QUIET_HELP))
    for param in command.params:
        if type(param) is typer.core.TyperArgument:
            param.__class__ = _Argument  # a subclass without state of its own: only how it is shown changes
            if type(param.type) is type(typer._click.types.STRING):
                param.type = _TEXT
        elif getattr(param.type, "choices", None) and param.metavar is None:
            _name_choices(param)
    return command


def _name_choices(option: Any) -> None:
    """A choice option shown as ``--sort SORT`` with its choices in the help's words: ``<updated|created|...>``
    has no space to wrap at, and an 80-column help split it mid-word."""
    import re

    option.metavar = option.opts[0].lstrip("-").upper()
    choices = [str(getattr(c, "value", c)) for c in option.type.choices]
    said = set(re.findall(r"[\w-]+", option.help or ""))
    if not set(choices) <= said:
        option.help = f"{(option.help or '').rstrip()} One of: {', '.join(choices)}.".lstrip()


def _summary(command: Any) -> None:
    """The first paragraph of the help as one line: the listing wraps it to the terminal, never keeping the
    docstring's line breaks mid-sentence. And the examples fit an 80-column help (:func:`_fit_examples`)."""
    if command.short_help is None and command.help:
        command.short_help = " ".join(command.help.split("\n\n", 1)[0].split())
    if getattr(command, "callback", None) is not None and command.epilog is None and not hasattr(command, "commands"):
        command.epilog = _exit_codes(command)
    if command.help and "Example:" in command.help and not getattr(command, "_examples_fit", False):
        head, _, examples = command.help.partition("Example:")
        command.help = head + "Example:" + "\n".join(_fit_examples(line) for line in examples.split("\n"))
        command._examples_fit = True


def _exit_codes(command: Any) -> str:
    """The help's last paragraph: the exit codes the command can return. 1 only for a command that returns its
    own code (problems found, a batch partly failed); the others any command can meet (a --home that does not
    exist, a lock not taken in time, a disk that fails, Ctrl-C)."""
    import inspect

    from praisonmem.core.errors import EXIT_INTERNAL

    returns = inspect.signature(command.callback).return_annotation
    codes = [code for code in (0, 1, 2, 3, 4, 5, 130) if code != 1 or returns in (int, "int")]
    names = {0: "success", 1: "problems found or some items failed", 2: "usage error", 3: "not found", 4: "refused",
             5: "I/O error", 130: "interrupted"}
    return ("Exit codes: " + ", ".join(f"{code} {names[code]}" for code in codes)
            + f" ({EXIT_INTERNAL} is a bug in praisonmem).")


EXAMPLE_WIDTH = 72  # an example line, indented, in an 80-column help (Rich would break a longer one mid-command)


def _fit_examples(line: str) -> str:
    """A long example line as shell continuation lines (`` \\`` at each end), broken at spaces outside quotes, so
    that what the help shows still pastes as one command."""
    if len(line) <= EXAMPLE_WIDTH or not line.strip().startswith("praisonmem "):
        return line
    indent = line[: len(line) - len(line.lstrip())]
    words, word, quote = [], "", ""
    for char in line.strip():
        if char == " " and not quote:
            words.append(word)
            word = ""
            continue
        if char in "'\"" and quote in ("", char):
            quote = "" if quote else char
        word += char
    words.append(word)
    lines, current = [], indent + words[0]
    for word in words[1:]:
        if len(current) + 1 + len(word) + 2 > EXAMPLE_WIDTH:
            lines.append(current + " \\")
            current = indent + "    " + word
        else:
            current += " " + word
    return "\n".join([*lines, current])


class _Argument(typer.core.TyperArgument):
    """An argument shown as ``SESSION`` / ``[SESSION]`` in the usage line (Typer writes ``{SESSION}``)."""

    def make_metavar(self, ctx: Any, *, usage: bool = False) -> str:
        name = self.metavar or (self.name or "").upper()
        if name.startswith("[") or not usage:
            return name
        return name if self.required else f"[{name}]"


class _Text(typer._click.types.StringParamType):
    def get_metavar(self, param: Any, ctx: Any = None) -> str:
        return ""  # the argument's name says what it is; Typer would add "<str>"


_TEXT = _Text()


class _LazyCommands(MutableMapping):
    """A group's ``commands``: the names known up front, each command built when first looked up."""

    def __init__(self, builders: dict[str, Callable[[], Any]]) -> None:
        self._builders = builders
        self._commands: dict[str, Any] = {}

    def __iter__(self) -> Iterator[str]:
        return iter(self._builders)

    def __len__(self) -> int:
        return len(self._builders)

    def __getitem__(self, name: str) -> Any:
        if name not in self._commands:
            self._commands[name] = self._builders[name]()  # KeyError for an unknown name, as a dict
            if FREEZE_BUILT:
                gc.freeze()
        return self._commands[name]

    def __setitem__(self, name: str, command: Any) -> None:
        raise TypeError("praisonmem's commands are declared in their modules")

    def __delitem__(self, name: str) -> None:
        raise TypeError("praisonmem's commands are declared in their modules")


class _LazyGroup(TyperGroup):
    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # TyperGroup's uses .items(), which would build them all


class _LazyRoot(_LazyGroup):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = _LazyCommands({name: (lambda name=name: _build(name)) for name in SUBCOMMANDS})


app = typer.Typer(
    name="praisonmem",
    cls=_LazyRoot,
    help=(
        "Inspect, search, migrate and back up the memory of PraisonAI agents: "
        "sessions, FileMemory, episodic entries and learn stores, written safely "
        "alongside running agents.\n\n"
        "Example:\n\n"
        "    praisonmem --home examples/home session list"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"praisonmem {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    home: Annotated[
        str | None,
        typer.Option("--home", metavar="PATH", help="PraisonAI data dir for this call (wins over PRAISONAI_HOME)."),
    ] = None,
    memory_dir: Annotated[
        str | None,
        typer.Option("--memory-dir", metavar="PATH", help="FileMemory base dir (default ./.praisonai/memory)."),
    ] = None,
    no_color: Annotated[bool, typer.Option("--no-color", help="No colour (also: NO_COLOR=1).")] = False,
    lock_timeout: Annotated[
        float | None,
        typer.Option("--lock-timeout", min=0.0, metavar="SECONDS",
                     help="How long to wait for a lock held by an agent (default 5; config lock_timeout)."),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither use nor write praisonmem's cache "
                                                               "(also: config cache = false).")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", callback=_set_quiet, help=QUIET_HELP)] = False,
    no_pager: Annotated[bool, typer.Option("--no-pager", help="Never page the output (also: config pager = "
                                                               "false).")] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print 'praisonmem X.Y.Z' and exit."),
    ] = False,
) -> None:
    for option, value in (("--home", home), ("--memory-dir", memory_dir)):
        if value is not None and not value.strip():
            raise typer.BadParameter("must not be empty", param_hint=option)
    if lock_timeout is not None and not math.isfinite(lock_timeout):  # min=0 lets nan and inf through
        raise typer.BadParameter(f"must be a number of seconds, 0 or more, got {lock_timeout}",
                                 param_hint="--lock-timeout")
    state = ctx.obj if isinstance(ctx.obj, State) else State()
    state.home, state.memory_dir, state.lock_timeout_flag = home, memory_dir, lock_timeout
    state.no_color = no_color or bool(os.environ.get("NO_COLOR"))
    state.no_cache = no_cache
    state.no_pager = no_pager
    ctx.obj = state
    # `config` must work even when the config file is broken: that is how it gets fixed.
    name = ctx.invoked_subcommand
    state.home_must_exist = name not in ("workspace", "config", "completion")  # they show and set where it is
    if name is not None and name != "config":
        state.json_default = state.setting("output") == "json"


_evaluate(root)
_evaluate(_set_quiet)
_evaluate(_version)


# The zsh file starts with ``#compdef praisonmem`` (Typer's starts with a blank line, which compinit ignores) and
# dispatches both ways: completing when autoloaded from fpath, registering itself with ``compdef`` when sourced.
ZSH_DISPATCH = """
if [ "$funcstack[1]" = "_praisonmem" ]; then
  _praisonmem_completion "$@"
else
  compdef _praisonmem_completion praisonmem
fi
"""


def completion_script(shell: str) -> str:
    """The completion script for ``shell`` (bash, zsh or fish): what completions/ holds."""
    from typer._click.shell_completion import get_completion_class
    from typer._completion_classes import completion_init

    completion_init()
    text = get_completion_class(shell)(typer.main.get_command(app), {}, "praisonmem",
                                       "_PRAISONMEM_COMPLETE").source()
    if shell == "zsh":
        body = [line for line in text.strip().splitlines() if not line.startswith("compdef ")]
        text = "\n".join(body).rstrip() + "\n" + ZSH_DISPATCH
    return text.strip() + "\n"


def _wants_json(argv: list[str]) -> bool:
    formats = [value for option, value in zip(argv, argv[1:]) if option == "--format"]
    formats += [arg.partition("=")[2] for arg in argv if arg.startswith("--format=")]
    return "--json" in argv or "--ndjson" in argv or any(f.lower() in ("json", "ndjson") for f in formats)


def _configured_json(state: State | None) -> bool:
    """The config's ``output = "json"`` (read once, with the state's settings); a broken config: no."""
    if state is None:
        return False
    try:
        return state.setting("output") == "json"
    except (PraisonMemError, OSError):  # the error being reported may be this very file's
        return False


def _report(message: str, code: str, exit_code: int, as_json: bool, state: State | None = None) -> int:
    from praisonmem.core.io.pgurl import mask
    from praisonmem.core.io.safetext import json_safe, printable

    message = mask(message)  # a database password that reached a message by any path is masked here
    if as_json or _configured_json(state):
        import json

        error = {"error": {"code": code, "message": message, "exit_code": exit_code}}
        sys.stderr.write(json_safe(json.dumps(error, ensure_ascii=False)) + "\n")
    else:
        sys.stderr.write(f"praisonmem: error: {printable(message)}\n")
    return exit_code


def run(argv: list[str], state: State | None = None) -> int:
    """Run one invocation and return its exit code (the tests call this)."""
    from praisonmem.cli import output

    output.begin()  # one invocation's -q, and what it changed, do not outlive it (the tests run many in one process)
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = streams.GuardedStdout(stdout)
    if not isinstance(stderr, streams.GuardedStderr):
        sys.stderr = streams.GuardedStderr(stderr)
    try:
        return _run(argv, State() if state is None else state)
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def _run(argv: list[str], state: State) -> int:
    from typer._click import exceptions as click_exc


    if os.environ.get("_PRAISONMEM_COMPLETE"):  # a shell asking for completions or for its script
        from typer._completion_classes import completion_init

        completion_init()
    as_json = _wants_json(argv)
    for arg in argv:  # Python keeps undecodable bytes as surrogates, which no UTF-8 file can hold
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return _report(f"argument {arg!r} is not valid UTF-8 (praisonmem reads and writes UTF-8 only)",
                           "usage", EXIT_USAGE, as_json)
        if "://" in arg or "password" in arg.lower():  # even a misplaced URL's or conninfo's password is masked
            from praisonmem.core.io import pgurl

            pgurl.remember(arg)
    argv = _optional_values(argv)
    command = typer.main.get_command(app)
    try:
        if ("--help" in argv or "-h" in argv) and "--no-pager" not in argv and sys.stdout.isatty():  # as git's
            from praisonmem.cli import pager

            with pager.paging(state, machine=False):
                result = command.main(args=argv, prog_name="praisonmem", standalone_mode=False, obj=state)
        else:
            result = command.main(args=argv, prog_name="praisonmem", standalone_mode=False, obj=state)
        if result == EXIT_INTERRUPTED:  # Typer turns a Ctrl-C inside a command into a silent Exit(130)
            from praisonmem.cli import interrupts

            if interrupts.was_stopped():  # the command's own way out (session watch): nothing to report
                return EXIT_INTERRUPTED
            raise KeyboardInterrupt
        sys.stdout.flush()
        return result if isinstance(result, int) else 0  # a command returns its exit code (EXIT_CODES)
    except PraisonMemError as exc:
        return _report(exc.message, exc.code, exc.exit_code, as_json, state)
    except click_exc.NoArgsIsHelpError as exc:  # the help text is the message (Rich printed it already)
        if exc.format_message():
            sys.stderr.write(exc.format_message().rstrip("\n") + "\n")
        return EXIT_USAGE
    except click_exc.NoSuchOption as exc:
        misplaced = _root_option_hint(command, exc)
        if misplaced is not None:
            return _report(misplaced, "usage", EXIT_USAGE, as_json, state)
        return _report(_one_line(exc.format_message()) + _help_hint(exc), "usage", EXIT_USAGE, as_json, state)
    except click_exc.UsageError as exc:
        hint = ""
        if exc.ctx is not None:
            hint = f" (see '{exc.ctx.command_path} --help')"
        return _report(_one_line(exc.format_message()) + hint, "usage", EXIT_USAGE, as_json, state)
    except click_exc.ClickException as exc:
        return _report(_one_line(exc.format_message()), "usage", exc.exit_code, as_json, state)
    except typer.Exit as exc:  # --version
        return exc.exit_code
    except (KeyboardInterrupt, typer.Abort):
        from praisonmem.cli import interrupts

        interrupts.answered()
        return _report("interrupted", "interrupted", EXIT_INTERRUPTED, as_json, state)
    except (streams.StdoutClosed, BrokenPipeError):
        streams.silence(sys.stdout)
        return EXIT_BROKEN_PIPE
    except streams.StdoutFailed as exc:
        streams.silence(sys.stdout)
        return _report(_unwritten(exc.reason), "io_error", EXIT_IO, as_json, state)
    except OSError as exc:
        from praisonmem.core.errors import os_reason

        where = f"{exc.filename}: " if exc.filename else ""
        return _report(f"{where}{os_reason(exc)}", "io_error", EXIT_IO, as_json, state)


# Options whose value may be left out, per command: ``session export --redact`` alone is ``--redact standard``. The
# value is added when the next word cannot be one (none, or another option); Click has no optional values.
OPTIONAL_VALUES = {("session", "export"): {"--redact": "standard"}}


def _optional_values(argv: list[str]) -> list[str]:
    words = [a for a in argv if not a.startswith("-")]
    for (group, verb), options in OPTIONAL_VALUES.items():
        if group in words and verb in words[words.index(group) + 1:]:
            break
    else:
        return argv
    out: list[str] = []
    for n, arg in enumerate(argv):
        if arg == "--":  # after it, nothing is an option
            return out + argv[n:]
        out.append(arg)
        following = argv[n + 1] if n + 1 < len(argv) else None
        if arg in options and (following is None or (following.startswith("-") and following != "-")):
            out.append(options[arg])
    return out


def _help_hint(exc: Any) -> str:
    return f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""


def _root_option_hint(root: Any, exc: Any) -> str | None:
    """A root option (``--home``) given after a sub-command: say where it goes, with the command line."""
    if exc.ctx is None or exc.ctx.parent is None:
        return None
    for param in root.params:
        if exc.option_name in param.opts:
            value = "" if param.is_flag else f" {param.metavar or 'VALUE'}"
            fixed = exc.ctx.command_path.replace("praisonmem", f"praisonmem {exc.option_name}{value}", 1)
            return f"{exc.option_name} is an option of praisonmem itself: put it before the command, as in '{fixed}'"
    return None


def _one_line(text: str) -> str:
    """Click's message as one line of praisonmem's: no line breaks, and lower case after ``error:`` as every
    other message (``No such option`` → ``no such option``)."""
    text = " ".join(text.split())
    for said, ours in (("(Possible options:", "(possible options:"), ("Did you mean", "did you mean")):
        text = text.replace(said, ours)
    return text[:1].lower() + text[1:]


def _unwritten(reason: str) -> str:
    """The error line for output that could not be written: what the command changed first, if anything, so a
    change that was made is never taken for one that failed."""
    from praisonmem.cli.output import made

    done = made()
    if not done:
        return f"could not write the output: {reason}"
    more = f"; and {len(done) - 3} more" if len(done) > 3 else ""
    return f"{'; '.join(done[:3])}{more}, but could not write the result: {reason}"


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    state = State()
    from praisonmem.cli import interrupts  # installed by the entry point when this process is the CLI

    if not isinstance(sys.stderr, streams.GuardedStderr):  # an error line stderr cannot take changes no exit code
        sys.stderr = streams.GuardedStderr(sys.stderr)
    try:
        try:
            code = run(args, state)
        except Exception as exc:  # a bug: one line, and the traceback only on request
            if interrupts.seen():  # what a Ctrl-C broke on its way (Python wraps it in some places)
                raise KeyboardInterrupt from None
            if os.environ.get("PRAISONMEM_DEBUG"):
                raise
            code = _report(
                f"internal error: {type(exc).__name__}: {exc} (set PRAISONMEM_DEBUG=1 for a traceback)",
                "internal",
                EXIT_INTERNAL,
                _wants_json(args),
                state,
            )
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            streams.silence(sys.stdout)
            code = EXIT_BROKEN_PIPE
        except (OSError, ValueError) as exc:  # what the report of a bug left in the buffer
            streams.silence(sys.stdout)
            code = code or _report(_unwritten(streams.reason(exc)), "io_error", EXIT_IO, _wants_json(args), state)
        if interrupts.seen() and code != EXIT_INTERRUPTED:  # a Ctrl-C that Python swallowed on its way
            raise KeyboardInterrupt
    except KeyboardInterrupt:  # between the command and its exit: still the one line
        interrupts.answered()
        code = _report("interrupted", "interrupted", EXIT_INTERRUPTED, _wants_json(args))
    if argv is None:  # the process ends now: a Ctrl-C during interpreter shutdown changes nothing more
        interrupts.ignore()
    sys.exit(code)
