"""Per-invocation state shared by every command: the root options and the settings
(flag > environment > config file > default), resolved lazily and once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from praisonmem.cli.output import Output
    from praisonmem.core.config import Settings
    from praisonmem.core.io.cache import Cache
    from praisonmem.core.paths import Paths


@dataclass
class State:
    """One invocation's root options, and its settings and paths once resolved."""

    home: str | None = None
    memory_dir: str | None = None
    no_color: bool = False
    lock_timeout_flag: float | None = None
    no_cache: bool = False
    json_default: bool = False  # config/env ``output = "json"``: every command as if --json were given
    home_must_exist: bool = False  # a --home that does not exist fails the command (a typo must fail a script)
    format: str | None = None  # a listing's --format, --columns and --wide (cli/options.py, table_options)
    columns: str | None = None
    wide: bool = False
    no_pager: bool = False
    _paths: Paths | None = field(default=None, repr=False)
    _settings: Settings | None = field(default=None, repr=False)
    _cache: Cache | None = field(default=None, repr=False)

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from praisonmem.core.config import Settings

            self._settings = Settings()
        return self._settings

    def setting(self, key: str, flag: Any = None) -> Any:
        return self.settings.get(key, flag).value

    @property
    def paths(self) -> Paths:
        if self._paths is None:
            from praisonmem.core.paths import resolve

            config_home = config_memory = None
            if self.home is None and not self.settings.env.get("PRAISONAI_HOME"):
                config_home = self.settings.file.get("home")
            if self.memory_dir is None and not self.settings.env.get("PRAISONMEM_MEMORY_DIR"):
                config_memory = self.settings.file.get("memory_dir")
            paths = resolve(self.home, self.memory_dir, env=self.settings.env, config_home=config_home,
                            config_memory_dir=config_memory)
            if self.home_must_exist and self.home is not None and not paths.data.path.exists():
                from praisonmem.core.errors import NotFound

                raise NotFound(f"--home {paths.data.path}: no such directory (check the path; 'praisonmem workspace "
                               "paths' shows what each option resolves to)")
            self._paths = paths
        return self._paths

    def creating_home(self) -> State:
        """This state for a command that may create the home (import, restore): a --home that does not exist
        is where it writes, not a typo."""
        self.home_must_exist = False
        return self

    def with_home(self, home: str | None) -> State:
        """This state with another ``--home`` (a command's own ``--home`` option), when one is given."""
        if home is None:
            return self
        import dataclasses

        return dataclasses.replace(self, home=home, _paths=None, _cache=None, home_must_exist=False)

    @property
    def cache(self) -> Cache:
        """praisonmem's cache (off with ``--no-cache``, ``cache = false`` or ``PRAISONMEM_CACHE=0``): one per
        command, so what it has to say about its directory is said once."""
        if self._cache is None:
            from praisonmem.cli.output import note
            from praisonmem.core.io.cache import Cache

            enabled = bool(self.setting("cache", False if self.no_cache else None))
            directory = self.setting("cache_dir")
            self._cache = Cache(directory, enabled=enabled, note=note) if directory is not None else \
                Cache.default(enabled=enabled, note=note)
        return self._cache

    @property
    def lock_timeout(self) -> float:
        return self.setting("lock_timeout", self.lock_timeout_flag)

    def output(self, as_json: bool = False, as_ndjson: bool = False, as_csv: bool = False) -> Output:
        """The command's output: ``--format``, ``--json``, ``--ndjson`` or ``--csv`` (more than one of them, naming
        different formats, is a usage error), else a table (tsv when piped), or JSON when ``output = "json"`` is
        configured and neither ``--columns`` nor ``--wide`` asks for a table."""
        from praisonmem.cli.output import Output
        from praisonmem.core.errors import UsageError

        asked = {name: given for name, given in (("--json", "json" if as_json else None),
                                                 ("--ndjson", "ndjson" if as_ndjson else None),
                                                 ("--csv", "csv" if as_csv else None),
                                                 (f"--format {self.format}", self.format)) if given}
        if len(set(asked.values())) > 1:
            raise UsageError(f"conflicting output formats: {' and '.join(asked)} (give one)")
        shaped = self.columns is not None or self.wide
        fmt = next(iter(asked.values()), "json" if self.json_default and not shaped else None)
        if shaped and fmt in ("json", "ndjson"):
            option = "--columns" if self.columns is not None else "--wide"
            raise UsageError(f"{option} shapes a table, tsv or csv, not {fmt} (which has every field)")
        return Output(no_color=self.no_color, fmt=fmt, columns=self.columns, wide=self.wide)


def state_of(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, State) else State()
