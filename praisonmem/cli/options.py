"""Options shared by many commands, defined once."""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
NdjsonFlag = Annotated[bool, typer.Option("--ndjson", help="Print one JSON object a line (streamed).")]
LimitOption = Annotated[int, typer.Option("--limit", min=0, metavar="N", help="Show at most N (0 = all).")]
DryRunFlag = Annotated[bool, typer.Option("--dry-run", help="Print what would change; change nothing.")]
YesFlag = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def _complete_users(ctx: typer.Context, incomplete: str) -> list[str]:
    from praisonmem.cli.completion import users

    return users(ctx, incomplete)


UserIdOption = Annotated[str | None, typer.Option("--user-id", metavar="U", autocompletion=_complete_users,
                                                  help="Memory user (default: 'default', as the praisonai CLI).")]
def _complete_providers(ctx: typer.Context, incomplete: str) -> list[str]:
    from praisonmem.cli.completion import providers

    return providers(ctx, incomplete)


def complete_memory_types(ctx: typer.Context, incomplete: str) -> list[str]:
    from praisonmem.cli.completion import memory_types

    return memory_types(ctx, incomplete)


ProviderOption = Annotated[str | None, typer.Option("--provider", metavar="P", autocompletion=_complete_providers,
                                                    help="file (default), sqlite, chroma (alias rag), or a plug-in "
                                                         "(see 'memory providers').")]
MetaOption = Annotated[list[str] | None, typer.Option("--meta", metavar="KEY=VALUE",
                                                      help="Metadata to store (repeatable; values are strings).")]


def parse_pairs(values: list[str] | None, option: str) -> dict[str, str]:
    """``KEY=VALUE`` options into a dict; anything else is a usage error naming the option."""
    from praisonmem.core.errors import UsageError

    pairs: dict[str, str] = {}
    for value in values or []:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise UsageError(f"{option} must be KEY=VALUE, got '{value}'")
        pairs[key] = rest
    return pairs


# ---------------------------------------------------------------- the store a session command uses


def _complete_stores(ctx: typer.Context, incomplete: str) -> list[str]:
    from praisonmem.cli.completion import stores

    return stores(ctx, incomplete)


StoreOption = Annotated[str | None, typer.Option(
    "--store", metavar="STORE", autocompletion=_complete_stores,
    help="Which store: one of the home's, as 'session list' names them (json: the JSON files; sessions.db: the "
         "gateway's database; project:<id>: a praisonai project's store; unified: the REPL/TUI's files; legacy-run: "
         "run_*/ directories), or a store elsewhere by where it is: a directory of JSON files, sqlite:///PATH or a "
         ".db file, postgresql://... or mysql://USER@HOST:PORT/DB (default: the config key store, else every store "
         "of the home; import writes json).")]
TablePrefixOption = Annotated[str | None, typer.Option(
    "--table-prefix", metavar="PREFIX", help="A conversation store's table prefix (default praison_).")]
SchemaOption = Annotated[str | None, typer.Option(
    "--schema", metavar="SCHEMA", help="A PostgreSQL conversation store's schema (default public).")]


@dataclass(frozen=True)
class StoreChoice:
    """What ``--store``, ``--table-prefix`` and ``--schema`` said: the one store choice of every session command
    (:func:`store_options` gives a command the three)."""

    store: str | None = None
    table_prefix: str | None = None
    schema: str | None = None

    def where(self, ctx: typer.Context) -> str | None:
        """The core's ``store`` argument: --store, else the config key store, else PraisonAI's own environment
        (a home's label, a ``Location`` with the table prefix and schema, or None for every store of the home)."""
        from praisonmem.cli.state import state_of

        state = state_of(ctx)
        value = state.setting("store", self.store)
        if value is None and self.table_prefix is None and self.schema is None and not state.settings.env.get(
                "PRAISONAI_CONVERSATION_STORE"):
            return None  # the home's stores (nothing more to import)
        from praisonmem.core import sessions

        return sessions.store_location(value, state.settings.env, table_prefix=self.table_prefix,
                                       schema=self.schema)


_STORE_PARAMETERS = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)
                     for name, annotation in (("store", StoreOption), ("table_prefix", TablePrefixOption),
                                              ("schema", SchemaOption))]


class _WithStoreOptions:
    """A command whose ``store: StoreChoice`` parameter is ``--store``, ``--table-prefix`` and ``--schema`` on the
    command line. Typer builds a command from its callback's signature; this one shows the three options in
    ``store``'s place, worked out only when Typer asks (so a command not invoked evaluates no annotation, and
    imports nothing they name)."""

    def __init__(self, command: Callable[..., Any]) -> None:
        self.command = command
        self.__name__, self.__qualname__ = command.__name__, command.__qualname__
        self.__module__, self.__doc__ = command.__module__, command.__doc__
        self._signature: inspect.Signature | None = None

    @property
    def __signature__(self) -> inspect.Signature:
        if self._signature is None:
            signature = inspect.signature(self.command, eval_str=True)  # a __signature__ is taken as it is
            parameters = []
            for parameter in signature.parameters.values():
                if parameter.name == "store":
                    parameters += _STORE_PARAMETERS
                else:
                    parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))
            if len(parameters) != len(signature.parameters) + 2:
                raise TypeError(f"{self.__name__} has no 'store: StoreChoice' parameter")
            self._signature = signature.replace(parameters=parameters)
        return self._signature

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name: p.annotation for p in self.__signature__.parameters.values()}

    def __call__(self, **kwargs: Any) -> Any:
        choice = StoreChoice(kwargs.pop("store"), kwargs.pop("table_prefix"), kwargs.pop("schema"))
        return self.command(**kwargs, store=choice)


def store_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give ``command`` the store options (:class:`StoreChoice`): its ``store: StoreChoice`` parameter becomes
    ``--store``, ``--table-prefix`` and ``--schema``, in that place of ``--help``, and the command is called with
    the :class:`StoreChoice` they make. The one way a session command takes a store."""
    return _WithStoreOptions(command)

ExportOutputOption = Annotated[str, typer.Option("--output", "-o", metavar="FILE",
                                                 help="Write here instead of stdout: '-' is stdout, a regular file "
                                                      "is replaced atomically.")]


# ---------------------------------------------------------------- how a listing is shown


class Format(str, enum.Enum):
    """``--format``: a terminal's table, tab- or comma-separated rows, a JSON array or one JSON object a line."""

    table = "table"
    tsv = "tsv"
    csv = "csv"
    json = "json"
    ndjson = "ndjson"


FormatOption = Annotated[Format | None, typer.Option(
    "--format", metavar="FORMAT", case_sensitive=False,
    help="table, tsv, csv, json or ndjson (default: a table on a terminal, tsv when piped; --json and --ndjson "
         "are short for the last two).")]
ColumnsOption = Annotated[str | None, typer.Option(
    "--columns", metavar="A,B,...", help="Only these columns, in this order (the header's names, any case).")]
WideFlag = Annotated[bool, typer.Option("--wide", help="Every column, nothing cut (lines may be wider than the "
                                                       "terminal).")]
NoPagerFlag = Annotated[bool, typer.Option("--no-pager", help="Never page the output (also: config pager = false).")]

_TABLE_PARAMETERS = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
                     for name, default, annotation in (("output_format", None, FormatOption),
                                                       ("columns", None, ColumnsOption), ("wide", False, WideFlag),
                                                       ("no_pager", False, NoPagerFlag))]
_PAGER_PARAMETERS = _TABLE_PARAMETERS[-1:]


class _WithOptions:
    """A command with more options than its callback takes: they go into the invocation's state (where
    :meth:`praisonmem.cli.state.State.output` reads them), before ``--json`` in ``--help``, and the command's
    stdout is paged when longer than the screen (:mod:`praisonmem.cli.pager`)."""

    def __init__(self, command: Callable[..., Any], parameters: list[inspect.Parameter]) -> None:
        self.command, self.parameters = command, parameters
        self.__name__, self.__qualname__ = command.__name__, command.__qualname__
        self.__module__, self.__doc__ = command.__module__, command.__doc__
        self._signature: inspect.Signature | None = None

    @property
    def __signature__(self) -> inspect.Signature:
        if self._signature is None:
            signature = inspect.signature(self.command, eval_str=True)
            parameters = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in signature.parameters.values()]
            names = [p.name for p in parameters]
            at = names.index("as_json") if "as_json" in names else len(parameters)
            parameters[at:at] = self.parameters
            self._signature = signature.replace(parameters=parameters)
        return self._signature

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name: p.annotation for p in self.__signature__.parameters.values()}

    def __call__(self, **kwargs: Any) -> Any:
        from praisonmem.cli.output import stdout_is_tty
        from praisonmem.cli.state import state_of

        values = {p.name: kwargs.pop(p.name) for p in self.parameters}
        state = state_of(kwargs["ctx"])
        if "output_format" in values:
            fmt = values["output_format"]
            state.format = fmt.value if fmt is not None else None
            state.columns, state.wide = values["columns"], values["wide"]
        state.no_pager = state.no_pager or values["no_pager"]
        machine = kwargs.get("as_json") or kwargs.get("as_ndjson") or state.format in ("json", "ndjson")
        if machine or state.no_pager or not stdout_is_tty():  # nothing to page: the pager is not even imported
            return self.command(**kwargs)
        from praisonmem.cli import pager

        with pager.paging(state, machine=False):
            return self.command(**kwargs)


def table_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a listing ``--format``, ``--columns``, ``--wide`` and ``--no-pager``. The command prints its rows with :meth:`praisonmem.cli.output.Output.records` and ``.table``, which
    honour them."""
    return _WithOptions(command, _TABLE_PARAMETERS)


def paged(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command whose output people read (a transcript, search hits, findings) ``--no-pager``, and page
    its output on a terminal when longer than the screen."""
    return _WithOptions(command, _PAGER_PARAMETERS)
