"""``backup create --dry-run`` lists what a backup would hold and writes nothing; ``backup list`` before the first
backup lists nothing and exits 0."""

from __future__ import annotations

import pytest

from praisonmem.core.backup.archive import read_manifest
from tests.helpers import snapshot


def test_dry_run_lists_what_the_backup_holds_and_writes_nothing(cli, fixture_home, tmp_path):
    target = tmp_path / "backups"
    before = snapshot(fixture_home)
    preview = cli("--home", fixture_home, "backup", "create", "-o", target, "--dry-run", "--json")
    assert preview.exit_code == 0
    shown = preview.json()
    assert not target.exists() and snapshot(fixture_home) == before
    assert shown["path"] == f"{target}/praisonmem-backup-<UTC timestamp>.tar.gz" and shown["dry_run"] is True
    assert shown["files"] == len(shown["contents"]) and shown["size"] == sum(f["size"] for f in shown["contents"])
    made = cli("--home", fixture_home, "backup", "create", "-o", target, "--json").json()
    manifest = read_manifest(made["path"])
    assert [(f["path"], f["size"]) for f in shown["contents"]] == [(f["path"], f["size"]) for f in manifest["files"]]
    assert shown["files"] == made["files"]
    assert preview.stderr == (f"praisonmem: would write {target}/praisonmem-backup-<UTC timestamp>.tar.gz: "
                              f"{shown['files']} files, {shown['size'] / 1024:.1f} KiB before compression; nothing "
                              "written\n")


def test_dry_run_piped_is_the_table_of_every_file(cli, fixture_home, tmp_path):
    rows = cli("--home", fixture_home, "backup", "create", "-o", tmp_path / "b", "--dry-run", "--include", "learn",
               "--json").json()["contents"]
    piped = cli("--home", fixture_home, "backup", "create", "-o", tmp_path / "b", "--dry-run", "--include", "learn")
    assert piped.exit_code == 0 and rows
    assert piped.stdout.splitlines() == ["PATH\tSIZE\tFILE", *(f"{r['path']}\t{r['size']}\t{r['file']}" for r in rows)]
    assert not (tmp_path / "b").exists()


def test_dry_run_to_stdout_streams_nothing(cli, fixture_home):
    result = cli("--home", fixture_home, "backup", "create", "-o", "-", "--dry-run", "--include", "sessions")
    assert result.exit_code == 0 and result.stdout.startswith("PATH\tSIZE\tFILE\nhome/sessions/")
    assert result.stderr.startswith("praisonmem: would write stdout: ")


@pytest.mark.parametrize("args, code, message", [
    (["-o", "-", "--keep", "2"], 2, "--keep rotates the backups in a directory; it does not apply to -, a pipe or a "
                                    "device"),
    (["--include", "nothing"], 2, "--include takes a comma list of sessions, memory, learn, chroma, got 'nothing'"),
])
def test_dry_run_bad_inputs_say_what_the_backup_would(cli, fixture_home, tmp_path, args, code, message):
    before = snapshot(tmp_path)
    result = cli("--home", fixture_home, "backup", "create", "--dry-run", *args)
    assert (result.exit_code, result.stdout, result.stderr) == (code, "", f"praisonmem: error: {message}\n")
    assert snapshot(tmp_path) == before


def test_dry_run_onto_an_existing_archive_is_refused_as_the_backup_would_be(cli, fixture_home, tmp_path):
    taken = tmp_path / "x.tar.gz"
    taken.write_bytes(b"mine")
    result = cli("--home", fixture_home, "backup", "create", "-o", taken, "--dry-run")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == f"praisonmem: error: {taken} already exists; choose another name or a directory\n"
    assert taken.read_bytes() == b"mine"


def test_list_before_the_first_backup_lists_nothing(cli, fixture_home, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "fresh"))  # the default directory, not made yet
    piped = cli("--home", fixture_home, "backup", "list")
    assert (piped.exit_code, piped.stdout, piped.stderr) == (0, "FILE\tCREATED\tSIZE\tFILES\tPROBLEM\n", "")
    assert cli("--home", fixture_home, "backup", "list", "--json").stdout == "[]\n"
    assert not (tmp_path / "fresh").exists()


def test_list_of_a_named_directory_that_is_not_there_says_so(cli, fixture_home, tmp_path):
    result = cli("--home", fixture_home, "backup", "list", tmp_path / "typo")
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr == f"praisonmem: error: {tmp_path / 'typo'}: no such backup directory\n"


def test_list_before_the_first_backup_on_a_terminal_is_a_sentence(fixture_home, tmp_path, monkeypatch):
    from tests.cli.test_table_fit import on_a_terminal

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "fresh"))
    code, lines = on_a_terminal(["--home", str(fixture_home), "backup", "list"], tmp_path, 200)
    assert code == 0
    assert [line for line in lines if line] == [
        f"praisonmem: no backups in {tmp_path / 'fresh' / 'praisonmem' / 'backups'} yet; 'praisonmem backup "
        "create' makes one"]
