"""``mysql://`` URLs: parsed as praisonai's MySQLConversationStore reads them (its defaults for what is left out),
options checked, and the password masked in every form praisonmem prints."""

from __future__ import annotations

import pytest

from praisonmem.core.errors import UsageError
from praisonmem.core.io import mysqlurl, pgurl


@pytest.fixture(autouse=True)
def _forget():
    pgurl.forget()
    yield
    pgurl.forget()


def test_a_full_url_and_the_librarys_defaults():
    u = mysqlurl.parse("mysql://app:s%40cr%2Ft@db.internal:3307/chat")
    assert (u.host, u.port, u.user, u.password, u.database, u.unix_socket) == (
        "db.internal", 3307, "app", "s@cr/t", "chat", None)
    assert str(u) == repr(u).split("display='")[1].split("'")[0] == "mysql://app:***@db.internal:3307/chat"
    d = mysqlurl.parse("mysql://")
    assert (d.host, d.port, d.user, d.password, d.database) == ("localhost", 3306, "root", "", "praisonai")


def test_the_socket_and_the_timeout_options():
    u = mysqlurl.parse("mysql://app@localhost/chat?unix_socket=/run/mysqld/mysqld.sock&connect_timeout=3")
    assert (u.unix_socket, u.connect_timeout) == ("/run/mysqld/mysqld.sock", 3)
    for bad, text in (("mysql://a@h/db?sslmode=require", "unsupported option 'sslmode'"),
                      ("mysql://a@h/db?connect_timeout=soon", "whole seconds"),
                      ("mysql://a:p@h:notaport/db", "invalid MySQL URL"),
                      ("mysql://a:p#w@h/db", "invalid MySQL URL")):
        with pytest.raises(UsageError, match=text):
            mysqlurl.parse(bad)


@pytest.mark.parametrize("url", ["mysql://app:Sup3r-Secret@db/chat", "mysql+pymysql://app:Sup3r%2DSecret@db/chat",
                                 "mariadb://app:Sup3r-Secret@db:3306/chat?unix_socket=/s"])
def test_the_password_is_masked_everywhere_once_parsed(url):
    u = mysqlurl.parse(url)
    assert "Sup3r" not in u.display and "***" in u.display
    assert pgurl.mask("Access denied for user 'app' (using password Sup3r-Secret)") == (
        "Access denied for user 'app' (using password ***)")


def test_a_bad_url_error_masks_the_password():
    with pytest.raises(UsageError) as err:
        mysqlurl.parse("mysql://app:Sup3r-Secret@db:99999999/chat")
    assert "Sup3r-Secret" not in err.value.message and "***" in err.value.message


def test_translate_gives_one_line_per_error_number():
    u = mysqlurl.parse("mysql://app:Sup3r-Secret@db/chat")
    cases = {1142: (5, "may not write"), 1205: (4, "locked by another writer"), 1213: (4, "try again"),
             1146: (3, "doesn't exist"), 1406: (2, "refused a value"), 2013: (5, "the connection failed")}
    for code, (exit_code, text) in cases.items():
        err = mysqlurl.translate(Exception(code, "Table 'x' doesn't exist Sup3r-Secret"), u, writing=True)
        assert err.exit_code == exit_code and text in err.message and "Sup3r" not in err.message
        assert "\n" not in err.message
