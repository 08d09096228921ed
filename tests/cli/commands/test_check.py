"""praisonmem check from the command line: exit codes, the JSON report, the default roots."""

from __future__ import annotations


def test_a_clean_home_passes_with_its_json_report(cli, fixture_home):
    clean = cli("check", fixture_home, "--json")
    report = clean.json()
    assert clean.exit_code == 0 and report["ok"] is True and report["errors"] == 0
    assert set(report) == {"ok", "strict", "roots", "files_checked", "errors", "warnings", "info", "findings"}
    assert set(report["findings"][0]) == {"severity", "file", "message", "code", "fix"}


def test_strict_fails_on_warnings(cli, fixture_home):
    assert cli("check", fixture_home, "--strict").exit_code == 1
    assert cli("check", fixture_home).exit_code == 0


def test_an_error_finding_exits_1_naming_the_file(cli, fixture_home):
    target = fixture_home / "sessions" / "my_chat.json"
    target.write_bytes(b"{")
    broken = cli("check", fixture_home)
    assert broken.exit_code == 1
    assert f"\nerror    {target}\n         invalid JSON at line 1 column 2" in broken.stdout
    assert broken.stdout.splitlines()[-1].endswith(": 1 error, 4 warnings, 2 notes")  # 2: name-only history


def test_check_defaults_to_the_resolved_home(cli, fixture_home, monkeypatch):
    monkeypatch.setenv("PRAISONAI_HOME", str(fixture_home))
    report = cli("check", "--json").json()
    assert report["roots"] == [str(fixture_home)]


def test_check_with_nothing_to_check_fails_so_ci_notices(cli, tmp_path):
    result = cli("check")
    assert result.exit_code == 3 and "nothing to check" in result.stderr and result.stdout == ""
    (tmp_path / "empty-home").mkdir()
    result = cli("--home", tmp_path / "empty-home", "check")
    assert result.exit_code == 3 and "nothing to check" in result.stderr
    assert cli("check", "").exit_code == 2
