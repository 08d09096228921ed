"""PraisonAI's own environment naming a MySQL conversation store, read as its factory reads it."""

from __future__ import annotations

import pytest

from praisonmem.core.errors import UsageError
from praisonmem.core.sessions.stores.locate import from_environment


@pytest.mark.parametrize("name", ["mysql", "MySQL", "async_mysql", "aiomysql", "mysql_async"])
def test_the_mysql_family_and_the_librarys_defaults(name):
    assert from_environment({"PRAISONAI_CONVERSATION_STORE": name}) == "mysql://root@localhost:3306/praisonai"
    assert from_environment({"PRAISONAI_CONVERSATION_STORE": name, "PRAISONAI_CONVERSATION_URL": "mysql://a@h/d",
                             "POSTGRES_URL": "mysql://b@h/d"}) == "mysql://a@h/d"
    # the library falls back to POSTGRES_URL whatever the store, and takes host, user, ... from any scheme
    assert from_environment({"PRAISONAI_CONVERSATION_STORE": name,
                             "POSTGRES_URL": "postgresql://b:pw@h:5/d"}) == "mysql://b:pw@h:5/d"


def test_what_the_library_declares_but_never_reads_is_not_read():
    env = {"PRAISONAI_CONVERSATION_STORE": "mysql", "MYSQL_URL": "mysql://x@elsewhere/db", "MYSQL_HOST": "elsewhere"}
    assert from_environment(env) == "mysql://root@localhost:3306/praisonai"


@pytest.mark.parametrize("name", ["mongodb", "MongoDB", "motor"])
def test_mongodb_is_one_line(name):
    with pytest.raises(UsageError, match="MongoDB stores are not supported"):
        from_environment({"PRAISONAI_CONVERSATION_STORE": name})


def test_a_path_is_no_mysql_url():
    with pytest.raises(UsageError, match="names a MySQL store but PRAISONAI_CONVERSATION_URL is not a URL"):
        from_environment({"PRAISONAI_CONVERSATION_STORE": "mysql", "PRAISONAI_CONVERSATION_URL": "./conv.db"})
