"""A database password given on the command line or in the config never reaches the output: masked by
what libpq parses (an unencoded '@' ends libpq's userinfo early), and a libpq keyword/value string is
never echoed with its password, wherever praisonmem prints a store location."""

from __future__ import annotations

import json

import pytest

SECRET = "s3cr3tPW"


@pytest.mark.parametrize("args", [
    ["session", "list", "--store", f"postgresql://pm:ab@{SECRET}@127.0.0.1:1/db"],
    ["upsonic", "sessions", "--db", f"postgresql://pm:ab@{SECRET}@127.0.0.1:1/db"],
    ["session", "list", "--store", f"postgresql://pm:ab/{SECRET}@127.0.0.1:1/db"],
])
def test_an_unencoded_at_or_slash_in_a_url_password_is_refused_before_libpq_reads_it(cli, fixture_home, args):
    """libpq would take 'ab' as the password and 's3cr3tPW@127.0.0.1' as the host, and print that host in
    its error: the URL is refused first, the whole password masked."""
    for extra in ([], ["--json"]):
        result = cli("--home", fixture_home, *args, *extra)
        message = ("invalid PostgreSQL URL postgresql://pm:***@127.0.0.1:1/db: an '@' in the user name, password, "
                   "database name or an option must be percent-encoded (%40), as must a '/' in the user name or "
                   "password (%2F)")
        assert (result.exit_code, result.stdout) == (2, "")
        if extra:
            assert json.loads(result.stderr) == {"error": {"code": "usage", "message": message, "exit_code": 2}}
        else:
            assert result.stderr == f"praisonmem: error: {message}\n"


@pytest.mark.parametrize("conninfo, shown", [
    (f"host=localhost password={SECRET} dbname=x", "host=localhost password=*** dbname=x"),
    (f"host=localhost password='{SECRET} and more' dbname=x", "host=localhost password=*** dbname=x"),
    (f"host=localhost password = '{SECRET}\\'s' dbname=x", "host=localhost password = *** dbname=x"),
    (f"host=localhost password={SECRET}\\ x dbname=x", "host=localhost password=*** dbname=x"),
])
def test_a_keyword_value_string_as_a_store_is_shown_masked(cli, fixture_home, conninfo, shown):
    listing = cli("--home", fixture_home, "session", "list", "--store", conninfo)
    assert (listing.exit_code, listing.stdout) == (2, "")
    assert listing.stderr == f"praisonmem: error: unknown store '{shown}'; this home has: json\n"
    path = cli("--home", fixture_home, "session", "list", "--store", f"/nonexistent/{conninfo}.db")
    assert path.exit_code != 0 and SECRET not in path.stderr and path.stderr.count("\n") == 1
    upsonic = cli("--home", fixture_home, "upsonic", "sessions", "--db", conninfo, "--json")
    assert upsonic.exit_code == 3 and SECRET not in upsonic.stderr
    assert json.loads(upsonic.stderr)["error"]["message"].startswith(shown)


@pytest.mark.parametrize("conninfo", [f"host=localhost password='{SECRET} x' dbname=x",
                                      f"host=localhost password=ab:{SECRET}:cd dbname=x"])
def test_a_keyword_value_string_in_the_config_is_shown_masked(cli, config, fixture_home, conninfo):
    results = [cli("--home", fixture_home, "config", "set", "store", conninfo),
               cli("--home", fixture_home, "config", "show"), cli("--home", fixture_home, "config", "show", "--json"),
               cli("--home", fixture_home, "config", "get", "store"),
               cli("--home", fixture_home, "workspace", "paths"),
               cli("--home", fixture_home, "workspace", "paths", "--json"),
               cli("--home", fixture_home, "session", "list")]
    assert [r.exit_code for r in results] == [0, 0, 0, 0, 0, 0, 2]
    assert all(SECRET not in r.stdout + r.stderr and ":cd" not in r.stdout + r.stderr for r in results)
    assert results[3].stdout == "host=localhost password=*** dbname=x\n"
    assert results[-1].stderr == ("praisonmem: error: unknown store 'host=localhost password=*** dbname=x'; this "
                                  "home has: json\n")
    assert SECRET in config.read_text()  # stored as given: only its display is masked
