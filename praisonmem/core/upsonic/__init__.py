"""Upsonic 0.77.3's storage (sessions and user memory): SqliteStorage over plain sqlite3, PostgresStorage over
psycopg 3 (imported only for a postgresql:// URL), JSONStorage's directory of table files, RedisStorage over
redis-py (imported only for a redis:// URL), never unpickling.

The commands: :mod:`.store` (``open_store``, the backend-neutral ``Store`` readers, ``edit_user_memory``; the
backends are :mod:`.sqlite_backend` and :mod:`.postgres_backend`, both on :mod:`.schema`'s tables, and
:mod:`.json_backend` and :mod:`.redis_backend`, both on :mod:`.records`' documents), :mod:`.transfer`
(``export_to``, ``plan_import``, ``plan_convert``) and :mod:`.migrate` (``migrate``, store to store);
:mod:`.convert` maps messages between Upsonic's pydantic-ai parts and PraisonAI sessions (``parts`` for
showing them).

Names are loaded on first use (:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "schema": ("UPSONIC_VERSION", "SessionType", "decode"),
    "store": ("Store", "edit_user_memory", "is_upsonic_document_store", "open_store", "parse_value"),
    "sqlite_backend": ("session_ddl", "user_memory_ddl"),
    "postgres_backend": ("pg_session_ddl", "pg_user_memory_ddl"),
    "transfer": ("export", "export_to", "plan_convert", "plan_import", "read_export", "run_import",
                 "write_converted"),
    "convert": ("from_praisonai", "opaque", "parts", "to_praisonai"),
    "migrate": ("migrate", "plan_migrate"),
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from praisonmem.core.upsonic.convert import from_praisonai, opaque, parts, to_praisonai
    from praisonmem.core.upsonic.migrate import migrate, plan_migrate
    from praisonmem.core.upsonic.postgres_backend import pg_session_ddl, pg_user_memory_ddl
    from praisonmem.core.upsonic.sqlite_backend import session_ddl, user_memory_ddl
    from praisonmem.core.upsonic.schema import UPSONIC_VERSION, SessionType, decode
    from praisonmem.core.upsonic.store import (Store, edit_user_memory, is_upsonic_document_store, open_store,
                                               parse_value)
    from praisonmem.core.upsonic.transfer import (export, export_to, plan_convert, plan_import, read_export,
                                                  run_import, write_converted)
