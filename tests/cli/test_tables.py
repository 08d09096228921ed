"""What a listing shows and how: the columns kept at each terminal width and the note naming the ones left out,
``--wide``, ``--columns`` and ``--format`` on every listing, and conflicting formats refused alike everywhere.

The terminal tests run on a real pty of the given width (tests/cli/test_table_fit.py's ``on_a_terminal``) over
the shipped homes: examples/home (the quick start's) and the praisonai 4.7.19 gateway home (five stores).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.cli.test_table_fit import on_a_terminal
from tests.conftest import FIXTURES, PRAISONAI_FIXTURES, REPO, UPSONIC_DB

EXAMPLES = REPO / "examples" / "home"
GATEWAY = FIXTURES / "praisonai-4.7.19-home" / "home"
MEMORY = PRAISONAI_FIXTURES / "project" / ".praisonai" / "memory"
HINT = "--wide shows every column, --columns picks them"

# The gateway home at each width: the header, then the note on stderr (a terminal's width, broken at spaces).
GATEWAY_AT = {
    80: ("ID                          AGENT     TITLE     MSGS  UPDATED           SCOPE",
         ["praisonmem: not shown in 80 columns: USER, ARCHIVED, CREATED, MODEL, TOKENS,",
          "  COST, STORE, PAIR; --wide shows every column, --columns picks them"]),
    100: ("ID                          AGENT      TITLE      MSGS  UPDATED           SCOPE     STORE",
          ["praisonmem: not shown in 100 columns: USER, ARCHIVED, CREATED, MODEL, TOKENS, COST, PAIR; --wide",
           "  shows every column, --columns picks them"]),
    120: ("ID                          AGENT        TITLE                  MSGS  UPDATED           SCOPE     STORE",
          ["praisonmem: not shown in 120 columns: USER, ARCHIVED, CREATED, MODEL, TOKENS, COST, PAIR; --wide shows "
           "every column,", "  --columns picks them"]),
    200: ("ID                          AGENT        USER     TITLE                  MSGS  ARCHIVED  UPDATED           "
          "SCOPE     MODEL        TOKENS  COST      STORE             PAIR",
          ["praisonmem: not shown in 200 columns: CREATED; --wide shows every column, --columns picks them"]),
}


def screen(args: list[str], cwd: Path, columns: int) -> list[str]:
    code, lines = on_a_terminal(args, cwd, columns)
    assert code == 0, lines
    while lines and not lines[-1]:
        lines.pop()
    return lines


@pytest.mark.parametrize("columns", sorted(GATEWAY_AT))
def test_session_list_keeps_what_people_read_and_names_what_it_left_out(tmp_path, columns):
    lines = screen(["--home", str(GATEWAY), "session", "list"], tmp_path, columns)
    header, note = GATEWAY_AT[columns]
    assert lines[0] == header
    assert lines[-len(note):] == note
    assert all(cell_len(line) <= columns for line in lines), [line for line in lines if cell_len(line) > columns]
    for sid in ("run_20261128_110000_ec9910", "bot_telegram_42", "proj-sess-1", "tui0002b"):  # ids whole
        assert any(line.startswith(sid + " ") for line in lines), sid


def test_session_list_at_80_columns_exactly(tmp_path):
    assert screen(["--home", str(GATEWAY), "session", "list"], tmp_path, 80) == [
        "ID                          AGENT     TITLE     MSGS  UPDATED           SCOPE",
        "─" * 80,
        "bot_slack_7                                     2     2026-11-30 12:00  explicit",
        "proj-sess-1                 Coder     Refacto…  2     2026-11-30 11:00  explicit",
        "enc-1                                 Card…     5     2026-11-30 10:00  explicit",
        "bot_telegram_42             Support…            3     2026-11-30 09:00  explicit",
        "enc-db-1                              IBAN…     2     2026-11-29 11:00  explicit",
        "gw-legacy                                       3     2026-11-29 10:30  explicit",
        "agent-chat-1                Billing…  Subscri…  4     2026-11-29 10:00  explicit",
        "gw-1                                            2     2026-11-29 09:00  explicit",
        "run_20261128_110000_ec9910            old run   2     2026-11-28 11:00  explicit",
        "tui0002b                              Café ✓…   2     2026-11-28 10:30  explicit",
        "tui0002b                              Café ✓…   2     2026-11-28 10:30  explicit",
        "tui0001a                              Refund…   2     2026-11-28 10:00  explicit",
        "tui0001a                              Refund…   2     2026-11-28 10:00  explicit",
        "db5b5fab                              branch…   1     2026-11-28 10:00  explicit",
        "db5b5fab                              branch…   1     2026-11-28 10:00  explicit",
        "gw-legacy                                       2     2026-11-28 09:30  explicit",
        "bot_telegram_42             Support…            2     2026-11-28 09:00  explicit",
        *GATEWAY_AT[80][1],
    ]


def test_the_quick_starts_home_at_80_columns_keeps_agent_msgs_and_scope_beside_36_cell_ids(tmp_path):
    """Beside a whole UUID there is room for AGENT, MSGS, UPDATED and SCOPE or for a cut title: the title goes
    (named in the note), the columns that tell sessions apart stay, and every id is whole."""
    lines = screen(["--home", str(EXAMPLES), "session", "list"], tmp_path, 80)
    assert lines[0] == "ID                                    AGENT     MSGS  UPDATED           SCOPE"
    assert lines[2] == "531bcd72-9714-4bca-8431-340003ceed28            2     2026-11-30 14:49  explicit"
    assert "history_fea3173a                      Weather…  4     2026-11-30 14:49  other" in lines
    assert lines[-2:] == ["praisonmem: not shown in 80 columns: USER, TITLE, ARCHIVED, CREATED, MODEL,",
                          "  TOKENS, COST; --wide shows every column, --columns picks them"]
    assert all(cell_len(line) <= 80 for line in lines)
    wider = screen(["--home", str(EXAMPLES), "session", "list"], tmp_path, 100)  # room for a title again
    assert wider[0].split() == ["ID", "AGENT", "TITLE", "MSGS", "UPDATED", "SCOPE"]


def test_nothing_is_left_out_when_everything_fits(tmp_path):
    lines = screen(["--home", str(EXAMPLES), "session", "list", "--limit", "2"], tmp_path, 200)
    assert lines[0].split() == ["ID", "AGENT", "USER", "TITLE", "MSGS", "ARCHIVED", "CREATED", "UPDATED", "SCOPE",
                                "MODEL", "TOKENS", "COST"]
    assert not any("not shown" in line for line in lines)


def test_wide_drops_nothing_and_cuts_nothing(tmp_path):
    lines = screen(["--home", str(GATEWAY), "session", "list", "--wide", "--limit", "3"], tmp_path, 80)
    assert lines[0] == ("ID           AGENT  USER     TITLE           MSGS  ARCHIVED  CREATED           UPDATED         "
                        "  SCOPE     MODEL        TOKENS  COST     STORE             PAIR")
    assert lines[3] == ("proj-sess-1  Coder  praison  Refactor utils  2     0         2026-11-30 11:00  2026-11-30 11:00"
                        "  explicit  gpt-4o-mini  33      $0.0001  project:8ccfb8a2")
    assert cell_len(lines[3]) > 80  # wider than the terminal: --wide's promise
    assert lines[-1] == "praisonmem: showing 3 of 17 sessions; --limit 0 shows all"  # and no note of left-out columns
    assert not any("not shown" in line for line in lines)


def test_columns_picks_and_orders_and_nothing_is_left_out(tmp_path):
    lines = screen(["--home", str(EXAMPLES), "session", "list", "--columns", "title,ID,Store", "--limit", "3"],
                   tmp_path, 80)
    assert lines == [
        "TITLE                      ID                                    STORE",
        "─" * 70,
        "Main conversation          531bcd72-9714-4bca-8431-340003ceed28  json",
        "Fork of Main conversation  7ca18a8d-7365-46f5-9df9-26d536f25633  json",
        "                           interrupted-stream                    json",
        "praisonmem: showing 3 of 12 sessions; --limit 0 shows all",
    ]


def test_backup_list_names_its_directory_once_and_each_archive_by_name(cli, tmp_path):
    backups = tmp_path / "a-rather-long-directory-name-for-the-backups-of-this-machine" / "backups"
    for _ in range(2):
        assert cli("--home", EXAMPLES, "backup", "create", "-o", backups, "-q").exit_code == 0
    names = [Path(r["file"]).name for r in cli("backup", "list", backups, "--json").json()]
    assert len(names) == 2
    lines = screen(["backup", "list", str(backups)], tmp_path, 80)
    assert lines[0] == f"{backups}/"  # whole on one line, however wide
    assert lines[1].split() == ["FILE", "CREATED", "SIZE", "FILES"]
    assert [line.split()[0] for line in lines[3:]] == names
    piped = cli("backup", "list", backups).stdout.splitlines()  # a script still gets each whole path
    assert [line.split("\t")[0] for line in piped[1:]] == [str(backups / n) for n in names]


# -- --format, the same on every listing ---------------------------------------------------------------------


def test_tsv_and_csv_hold_the_picked_columns_whole(cli):
    args = ["--home", EXAMPLES, "session", "list", "--columns", "id,title,msgs", "--limit", "3"]
    assert cli(*args, "--format", "tsv").stdout == (
        "ID\tTITLE\tMSGS\n531bcd72-9714-4bca-8431-340003ceed28\tMain conversation\t2\n"
        "7ca18a8d-7365-46f5-9df9-26d536f25633\tFork of Main conversation\t1\ninterrupted-stream\t\t2\n")
    assert cli(*args, "--format", "csv").stdout == (
        "ID,TITLE,MSGS\n531bcd72-9714-4bca-8431-340003ceed28,Main conversation,2\n"
        "7ca18a8d-7365-46f5-9df9-26d536f25633,Fork of Main conversation,1\ninterrupted-stream,,2\n")
    assert cli(*args[:-2], "--limit", "0", "--format", "csv").stdout.count("\n") == 13  # a header and 12 rows


def test_csv_quotes_what_needs_it(cli):
    rows = list(csv.reader(io.StringIO(cli("--home", GATEWAY, "session", "list", "--format", "csv",
                                           "--columns", "id,pair").stdout)))
    assert rows[0] == ["ID", "PAIR"]
    assert ["bot_telegram_42", "differs from sessions.db"] in rows


def test_format_table_when_piped_fits_columns(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    lines = cli("--home", GATEWAY, "session", "list", "--format", "table", "--limit", "2").stdout.splitlines()
    assert lines[:4] == ["ID           AGENT  MSGS  UPDATED              SCOPE", "─" * 55,  # no room for a title
                         "bot_slack_7         2     2026-11-30 12:00:00  explicit",
                         "proj-sess-1  Coder  2     2026-11-30 11:00:00  explicit"]


@pytest.mark.parametrize("short", ["json", "ndjson"])
def test_format_json_and_ndjson_are_the_shorthands(cli, short):
    args = ["--home", EXAMPLES, "session", "list"]
    assert cli(*args, "--format", short).stdout == cli(*args, f"--{short}").stdout
    assert json.loads(cli(*args, "--format", short).stdout.splitlines()[0])


def test_format_beats_the_configured_json_and_columns_asks_for_a_table(cli, monkeypatch):
    monkeypatch.setenv("PRAISONMEM_OUTPUT", "json")
    args = ["--home", EXAMPLES, "session", "list", "--limit", "1"]
    assert cli(*args).stdout.startswith("[")
    assert cli(*args, "--format", "tsv").stdout.startswith("ID\tAGENT\t")
    assert cli(*args, "--columns", "id").stdout == "ID\n531bcd72-9714-4bca-8431-340003ceed28\n"


@pytest.fixture
def listings(tmp_path, cli) -> dict[str, list[str]]:
    """Every listing's command line, each run where it has something to list."""
    backups = tmp_path / "backups"
    assert cli("--home", EXAMPLES, "backup", "create", "-o", backups, "-q").exit_code == 0
    memory = ["--memory-dir", str(MEMORY)]
    db = tmp_path / "data.db"
    shutil.copy(UPSONIC_DB, db)
    return {
        "session list": ["--home", str(EXAMPLES), "session", "list"],
        "memory list": [*memory, "memory", "list", "--user-id", "alice"],
        "memory search": [*memory, "memory", "search", "Lisbon", "--user-id", "alice"],
        "memory users": [*memory, "memory", "users"],
        "memory providers": ["memory", "providers"],
        "episodic get": [*memory, "episodic", "get", "--user-id", "alice"],
        "learn list": ["--home", str(EXAMPLES), "learn", "list"],
        "upsonic sessions": ["upsonic", "sessions", "--db", str(db)],
        "backup list": ["backup", "list", str(backups)],
        "config show": ["config", "show"],
        "usage": ["--home", str(EXAMPLES), "usage"],
        "locate": ["--home", str(EXAMPLES), "locate", str(EXAMPLES)],
    }


LISTINGS = ["session list", "memory list", "memory search", "memory users", "memory providers", "episodic get",
            "learn list", "upsonic sessions", "backup list", "config show", "usage", "locate"]


@pytest.mark.parametrize("name", LISTINGS)
def test_every_listing_takes_format_columns_and_wide(cli, listings, name):
    args = listings[name]
    tsv = cli(*args, "--format", "tsv")
    assert tsv.exit_code == 0, tsv.stderr
    header = tsv.stdout.splitlines()[0].split("\t")
    first = header[0].lower().replace(" ", "-")
    picked = cli(*args, "--format", "csv", "--columns", first)
    assert picked.exit_code == 0, picked.stderr
    assert picked.stdout.splitlines()[0].upper() == header[0]  # usage's CSV is headed by its JSON names
    rows = [line.split("\t")[0] for line in tsv.stdout.splitlines()[1:]]
    if name == "usage":  # its CSV has no totals row and no summary line
        rows = rows[:rows.index("TOTAL")]
    assert [row[0] for row in csv.reader(io.StringIO(picked.stdout))][1:] == rows
    assert cli(*args, "--wide").exit_code == 0
    assert json.loads(cli(*args, "--format", "json").stdout) == json.loads(cli(*args, "--json").stdout)


@pytest.mark.parametrize("name", LISTINGS)
def test_an_unknown_column_is_one_line_naming_the_valid_ones(cli, listings, name):
    args = listings[name]
    header = cli(*args, "--format", "tsv").stdout.splitlines()[0].split("\t")
    result = cli(*args, "--columns", f"{header[0]},nosuch")
    assert result.exit_code == 2
    assert result.stdout == ""
    valid = ",".join(h.lower().replace(" ", "-") for h in header)
    assert result.stderr == f"praisonmem: error: --columns: unknown column 'nosuch' (valid: {valid})\n"


@pytest.mark.parametrize("name", LISTINGS)
@pytest.mark.parametrize("flags, said", [
    (["--json", "--ndjson"], "--json and --ndjson"),
    (["--format", "csv", "--json"], "--json and --format csv"),
    (["--ndjson", "--format", "tsv"], "--ndjson and --format tsv"),
])
def test_conflicting_formats_are_refused_alike_everywhere(cli, listings, name, flags, said):
    result = cli(*listings[name], *flags)
    assert result.exit_code == 2
    assert result.stdout == ""
    if "--json" in flags or "--ndjson" in flags:  # asked for JSON: the error is JSON too, as every error is
        assert json.loads(result.stderr) == {"error": {"code": "usage", "exit_code": 2,
                                                       "message": f"conflicting output formats: {said} (give one)"}}


def test_conflicting_formats_without_json_are_one_plain_line(cli):
    result = cli("--home", EXAMPLES, "usage", "--csv", "--format", "tsv")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "praisonmem: error: conflicting output formats: --csv and --format tsv (give one)\n"
    same = cli("--home", EXAMPLES, "usage", "--csv", "--format", "csv")  # the same format twice is no conflict
    assert same.exit_code == 0 and same.stdout.startswith("day,sessions,")


def test_a_format_not_known_and_columns_with_json_are_usage_errors(cli):
    bad = cli("--home", EXAMPLES, "session", "list", "--format", "xml")
    assert (bad.exit_code, bad.stdout) == (2, "")
    assert bad.stderr == ("praisonmem: error: invalid value for '--format': 'xml' is not one of 'table', 'tsv', "
                          "'csv', 'json', 'ndjson'. (see 'praisonmem session list --help')\n")
    both = cli("--home", EXAMPLES, "session", "list", "--json", "--columns", "id")
    assert both.exit_code == 2
    assert json.loads(both.stderr)["error"]["message"] == \
        "--columns shapes a table, tsv or csv, not json (which has every field)"


def test_usage_csv_columns_are_its_json_names(cli):
    result = cli("--home", EXAMPLES, "usage", "--csv", "--columns", "day,total_tokens")
    assert result.stdout == "day,total_tokens\n2026-11-30,1506\n"
