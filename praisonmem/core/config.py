"""praisonmem's own settings: a TOML file, environment variables, and their precedence.

The file is ``platformdirs.user_config_dir("praisonmem")/config.toml`` (on Linux the XDG rule,
computed without importing platformdirs: :func:`praisonmem.core.paths.user_dir`), or
``$PRAISONMEM_CONFIG``. Every setting resolves as flag > environment > config file
> default, and remembers which of them applied (``workspace paths`` and ``config
show`` say so). An unknown key, a wrong type, or a file that is not TOML is a
usage error naming the key (or the line).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from praisonmem.core.errors import NotFound, PraisonMemError, UsageError

if TYPE_CHECKING:
    from praisonmem.core.result import Outcome

CONFIG_ENV = "PRAISONMEM_CONFIG"


def _str(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise UsageError(f"config {key} must be a non-empty string, got {value!r}")
    if "\0" in value:  # no path, URL or name can hold one; the OS would refuse it later, less clearly
        raise UsageError(f"config {key} must not contain a NUL character, got {value!r}")
    return value


def _database(key: str, value: Any) -> str:
    """A file path, or a database URL that parses (its password is never shown: :func:`masked_setting`)."""
    from praisonmem.core.io import mysqlurl, pgurl

    if pgurl.is_url(_str(key, value)):
        try:
            # a session store may be MySQL (praisonai's conversation store); Upsonic's database may not
            mysqlurl.parse(value) if key == "store" and mysqlurl.is_mysql(value) else pgurl.parse(value)
        except UsageError as exc:
            raise UsageError(f"config {key}: {exc.message}") from exc
    elif pgurl.holds_password(value):  # a keyword/value string: its password masked in any message, whole
        pgurl.remember(value)
    return value


REDIS_SCHEMES = ("redis://", "rediss://", "unix://")  # Upsonic's RedisStorage


def _upsonic_database(key: str, value: Any) -> str:
    """:func:`_database`, or a RedisStorage URL (its password remembered, so no message shows it)."""
    from praisonmem.core.io import pgurl

    if _str(key, value).lower().startswith(REDIS_SCHEMES):
        pgurl.remember(value)
        return value
    return _database(key, value)


def masked_setting(value: Any) -> Any:
    """A value as praisonmem prints it: a database URL's or keyword/value string's password masked."""
    from praisonmem.core.io import pgurl

    return pgurl.redact(value) if isinstance(value, str) and pgurl.holds_password(value) else value


def _provider(key: str, value: Any) -> str:
    from praisonmem.core.memory import provider_aliases, provider_names

    names = provider_names()  # the entry points' names: no plug-in is loaded to check a setting
    if _str(key, value) not in names and value not in provider_aliases:  # "rag": the library's name for chroma
        raise UsageError(f"config {key} must be an installed provider ({', '.join(names)}), got {value!r}")
    return value


def _output(key: str, value: Any) -> str:
    if value not in ("table", "json"):
        raise UsageError(f"config {key} must be 'table' or 'json', got {value!r}")
    return value


def _timeout(key: str, value: Any) -> float:
    import math

    try:
        number = float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        number = None
    if number is None or not math.isfinite(number) or number < 0:
        raise UsageError(f"config {key} must be a number of seconds, 0 or more, got {value!r}")
    return number


TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE_WORDS + FALSE_WORDS:
        return value.strip().lower() in TRUE_WORDS
    raise UsageError(f"config {key} must be true or false, got {value!r}")


def _pager(key: str, value: Any) -> bool | str:
    """``false`` (never page), ``true`` (``$PAGER``, else less) or the pager's command line."""
    if isinstance(value, str) and value.strip() and value.strip().lower() not in TRUE_WORDS + FALSE_WORDS:
        return value
    return _bool(key, value)


def _count(key: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise UsageError(f"config {key} must be a whole number 0 or above, got {value!r}")


def _user(key: str, value: Any) -> str:
    from praisonmem.core.memory import sanitise_user_id

    _str(key, value)
    try:
        return sanitise_user_id(value)
    except UsageError as exc:
        raise UsageError(f"config {key}: {exc.message}") from exc


@dataclass(frozen=True)
class Key:
    """A setting: its name in the file, its environment variable, its check, its default and its meaning."""

    name: str
    env: str
    check: Callable[[str, Any], Any]
    default: Any
    help: str


KEYS: dict[str, Key] = {k.name: k for k in (
    Key("home", "PRAISONAI_HOME", _str, None, "PraisonAI data dir (flag --home)"),
    Key("memory_dir", "PRAISONMEM_MEMORY_DIR", _str, None, "FileMemory base dir (flag --memory-dir)"),
    Key("user_id", "PRAISONMEM_USER_ID", _user, "default", "memory user (flag --user-id)"),
    Key("provider", "PRAISONMEM_PROVIDER", _provider, "file", "memory provider (flag --provider)"),
    Key("output", "PRAISONMEM_OUTPUT", _output, "table", "table or json (flag --json)"),
    Key("lock_timeout", "PRAISONMEM_LOCK_TIMEOUT", _timeout, 5.0, "seconds to wait for a lock (flag --lock-timeout)"),
    Key("upsonic.db", "PRAISONMEM_UPSONIC_DB", _upsonic_database, None,
        "Upsonic SQLite file, JSONStorage dir, sqlite:///PATH, postgresql:// or redis:// URL (flag --db)"),
    Key("store", "PRAISONMEM_STORE", _database, None,
        "session store: json, sessions.db, a directory, sqlite:///PATH or postgresql:// URL (flag --store)"),
    Key("backup.dir", "PRAISONMEM_BACKUP_DIR", _str, None, "where backups go (flag --output)"),
    Key("backup.keep", "PRAISONMEM_BACKUP_KEEP", _count, 0, "backups to keep, 0 = all (flag --keep)"),
    Key("cache", "PRAISONMEM_CACHE", _bool, True, "keep praisonmem's cache of derived data (flag --no-cache)"),
    Key("cache_dir", "PRAISONMEM_CACHE_DIR", _str, None, "where the cache lives (default: the user cache dir)"),
    Key("pager", "PRAISONMEM_PAGER", _pager, True,
        "page long output on a terminal: true ($PAGER, else less -FRX), false, or a command (flag --no-pager)"),
)}


def key_spec(key: str) -> Key:
    """The key's definition; an unknown key is a usage error listing the known ones."""
    if key not in KEYS:
        raise UsageError(f"unknown config key '{key}' (known: {', '.join(KEYS)})")
    return KEYS[key]


def config_path(env: Mapping[str, str] | None = None) -> tuple[Path, str]:
    """The config file and the rule that chose it."""
    env = os.environ if env is None else env
    if env.get(CONFIG_ENV):
        from praisonmem.core.paths import expand_user

        return expand_user(env[CONFIG_ENV], CONFIG_ENV), CONFIG_ENV
    from praisonmem.core.paths import user_dir

    return user_dir("config", env) / "config.toml", "platformdirs user_config_dir"


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def load_file(path: Path) -> dict[str, Any]:
    """The validated values in the file (empty when it does not exist)."""
    from praisonmem.core.io import inputfile

    try:
        raw = inputfile.read_regular(path, what="config file")
    except NotFound:
        return {}
    except UsageError as exc:  # a directory, pipe or device: named as the config file it is meant to be
        raise UsageError(f"config file {exc.message}") from exc
    except PraisonMemError as exc:  # unreadable (permissions, a symlink loop) or too large
        raise type(exc)(f"config file {exc.message}") from exc
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"config file {path} is not UTF-8 (byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"config file {path} is not valid TOML: {exc}") from exc
    values = {}
    for key, value in _flatten(data).items():
        if key not in KEYS:
            raise UsageError(f"config file {path}: unknown key '{key}' (known: {', '.join(KEYS)})")
        values[key] = KEYS[key].check(key, value)
    return values


@dataclass(frozen=True)
class Setting:
    """A setting's value and the rule that gave it."""

    value: Any
    source: str  # which rule gave the value: "flag", "env <NAME>", "config" or "default"


class Settings:
    """Resolves each key: flag > environment > config file > default."""

    def __init__(self, env: Mapping[str, str] | None = None, path: Path | None = None) -> None:
        self.env = os.environ if env is None else env
        self.path, self.path_source = (path, "given") if path is not None else config_path(self.env)
        self._file: dict[str, Any] | None = None

    @property
    def file(self) -> dict[str, Any]:
        if self._file is None:
            self._file = load_file(self.path)
        return self._file

    def get(self, key: str, flag: Any = None) -> Setting:
        spec = KEYS[key]
        if flag is not None:
            return Setting(flag, "flag")
        if self.env.get(spec.env):
            return Setting(spec.check(f"{spec.env} (environment)", self.env[spec.env]), f"env {spec.env}")
        if key in self.file:
            return Setting(self.file[key], "config")
        return Setting(spec.default, "default")

    def rows(self) -> list[dict[str, Any]]:
        """``config show``: every key, its value (:func:`masked_setting`), the rule that gave it, its environment
        variable, its meaning."""
        return [{"key": key, "value": masked_setting(setting.value), "source": setting.source, "env": spec.env,
                 "help": spec.help} for key, spec in KEYS.items() for setting in (self.get(key),)]

    def lookup(self, key: str) -> dict[str, Any]:
        """``config get``: one key's value (:func:`masked_setting`) and where it came from; :class:`NotFound` when it is
        set nowhere."""
        setting = self.get(key_spec(key).name)
        if setting.value is None:
            raise NotFound(f"config key '{key}' is not set")
        return {"key": key, "value": masked_setting(setting.value), "source": setting.source}

    def database_rows(self) -> list[dict[str, Any]]:
        """``workspace paths``: each configured database (``upsonic.db``), shown (:func:`masked_setting`), with the rule
        that gave it and whether the file exists (None for a server, which is not contacted)."""
        from praisonmem.core import sessions
        from praisonmem.core.io import pgurl

        rows = []
        for name, key in (("upsonic_db", "upsonic.db"), ("session_store", "store")):
            setting = self.get(key)
            if setting.value is None or setting.value in sessions.LIBRARY_LABELS:  # a home's store, not a place
                continue
            from praisonmem.core.io import mysqlurl

            if mysqlurl.is_mysql(setting.value):
                shown = mysqlurl.parse(setting.value).display
                rows.append({"name": name, "path": shown, "source": setting.source, "exists": None})
                continue
            if str(setting.value).lower().startswith(REDIS_SCHEMES):  # a server: not contacted
                rows.append({"name": name, "path": pgurl.redact(setting.value), "source": setting.source,
                             "exists": None})
                continue
            url = pgurl.parse(setting.value) if pgurl.is_url(setting.value) else None
            if url is not None and url.is_postgres:
                rows.append({"name": name, "path": url.display, "source": setting.source, "exists": None})
                continue
            from praisonmem.core.paths import expand_user

            path = url.path if url is not None and url.path else expand_user(setting.value, "config upsonic.db")
            rows.append({"name": name, "path": masked_setting(os.path.abspath(path)), "source": setting.source,
                         "exists": path.exists()})
        return rows


def set_value(path: Path, key: str, text: str, *, timeout: float = 5.0) -> Outcome:
    """``config set``: one key (validated) written into the file; other keys and tables are kept."""
    from praisonmem.core.result import Action, Change, Outcome  # writers only

    value = _absolute(key, key_spec(key).check(key, text))
    _rewrite(path, lambda flat: {**flat, key: value}, timeout)
    shown = masked_setting(value)
    shown = ("true" if shown else "false") if isinstance(shown, bool) else repr(shown)  # as TOML spells it
    return Outcome([Change(Action.set, f"{key} = {shown} in {path}",
                           fields={"key": key, "value": masked_setting(value), "path": str(path)})])


PATH_KEYS = ("home", "memory_dir", "upsonic.db", "backup.dir", "cache_dir")


def default_of(key: str) -> str | None:
    """What a directory key left unset resolves to (``config show``): the home and memory dir by the library's
    own rules, the backup and cache directories by praisonmem's; None for a key that names nothing unset."""
    if key in ("home", "memory_dir"):
        from praisonmem.core.paths import resolve

        paths = resolve(env={k: v for k, v in os.environ.items() if k not in ("PRAISONAI_HOME",
                                                                                "PRAISONMEM_MEMORY_DIR")})
        return os.path.abspath(paths.data.path if key == "home" else paths.memory.path)
    if key == "backup.dir":
        from praisonmem.core.paths import default_backup_dir

        return str(default_backup_dir())
    if key == "cache_dir":
        from praisonmem.core.paths import user_dir

        return str(user_dir("cache"))
    return None


def _absolute(key: str, value: Any) -> Any:
    """A relative path given to ``config set`` as the absolute path it names now: the config applies in every
    directory, so a relative one would name a different place in each (``~`` is kept: it names one place)."""
    from praisonmem.core.io import pgurl

    if key not in PATH_KEYS or not isinstance(value, str) or value.startswith("~") or pgurl.is_url(value):
        return value
    return os.path.abspath(value)


def unset_value(path: Path, key: str, *, timeout: float = 5.0) -> Outcome:
    """``config unset``: one key removed from the file (skipped when it is not there)."""
    from praisonmem.core.result import Action, Change, Outcome  # writers only

    key_spec(key)
    removed: list[bool] = []

    def drop(flat: dict[str, Any]) -> dict[str, Any] | None:
        removed.append(key in flat)
        return {k: v for k, v in flat.items() if k != key} if key in flat else None

    _rewrite(path, drop, timeout)
    fields = {"key": key, "removed": removed[0], "path": str(path)}
    if removed[0]:
        return Outcome([Change(Action.unset, key, fields=fields)])
    return Outcome([Change(Action.skipped, key, "was not set", fields=fields)])


def _rewrite(path: Path, change: Callable[[dict[str, Any]], dict[str, Any] | None], timeout: float) -> None:
    """Read-modify-write under the file's sidecar flock, so concurrent ``config set`` runs of
    different keys never undo each other; replaced atomically, 0600."""
    import tomli_w

    from praisonmem.core.io import jsonfile  # writers only: keeps every command's start-up light

    with jsonfile.locked(path, timeout):
        flat = change(load_file(path))
        if flat is None:
            return
        nested: dict[str, Any] = {}
        for key, value in flat.items():
            head, _, tail = key.partition(".")
            if tail:
                nested.setdefault(head, {})[tail] = value
            else:
                nested[key] = value
        plain = {k: v for k, v in nested.items() if not isinstance(v, dict)}
        tables = {k: v for k, v in nested.items() if isinstance(v, dict)}
        jsonfile.replace_atomically(path, tomli_w.dumps({**plain, **tables}).encode("utf-8"))
