"""What ``check`` says the library does with a session file it cannot load is what praisonaiagents 1.7.17 does:
it quarantines a file that is not UTF-8 or not JSON, but re-raises an ``OSError`` (permission denied, an I/O
error), so that file stays as it is, a load gives an empty history and every write of it fails (the turn being
added goes to the spill dir); an error its loader does not catch (nesting too deep) escapes it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.compat.conftest import last_json, run_library

TRY = """
    import builtins, json, os, sys
    target = os.path.abspath(sys.argv[1])
    real_open = builtins.open
    if sys.argv[2] == "denied":  # root reads anything: the error a file its user may not read gives
        def denied(file, *args, **kwargs):
            if isinstance(file, str) and os.path.abspath(file) == target:
                raise PermissionError(13, "Permission denied", file)
            return real_open(file, *args, **kwargs)

        builtins.open = denied
    from praisonaiagents.session.store import DefaultSessionStore
    from praisonaiagents.paths import get_session_spill_dir
    store = DefaultSessionStore()
    try:
        outcome = {"history": [m["content"] for m in store.get_chat_history("s")],
                   "added": store.add_message("s", "user", "a new turn")}
    except Exception as exc:
        outcome = {"raised": type(exc).__name__}
    spill = get_session_spill_dir()
    outcome["files"] = sorted(n for n in os.listdir(os.path.dirname(target)) if not n.endswith(".lock"))
    outcome["spilled"] = sorted(json.load(real_open(os.path.join(spill, n)))["messages"][0]["content"]
                                for n in os.listdir(spill)) if os.path.isdir(spill) else []
    print(json.dumps(outcome))
"""

CASES = {
    "denied": (b'{"session_id": "s", "messages": [{"role": "user", "content": "kept", "timestamp": 1}]}',
               "the library cannot read it either: it leaves the file as it is, an agent resuming the session "
               "starts with an empty history, and each write of it fails (a turn it was adding is saved to the "
               "spill dir)"),
    "truncated": (b'{"session_id": "s", "messages": [',
                  "the library quarantines it (renames it *.corrupt-<ms>) and starts an empty session"),
    "deep": (b'{"session_id": "s", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
             "the library's load fails on it with an error it does not catch (it is not quarantined)"),
}


def home_with(tmp_path: Path, data: bytes) -> Path:
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    (home / "sessions" / "s.json").write_bytes(data)
    return home


@pytest.mark.parametrize("case", list(CASES))
def test_what_check_says_is_what_the_library_does(cli, tmp_path, monkeypatch, case):
    data, consequence = CASES[case]
    home = home_with(tmp_path, data)
    target = home / "sessions" / "s.json"
    library = last_json(run_library(TRY, str(target), case, home=home))
    if case == "denied":
        assert library == {"history": [], "added": False, "files": ["s.json"], "spilled": ["a new turn"]}
        assert target.read_bytes() == data
    elif case == "truncated":
        assert library["history"] == [] and library["added"] is True
        assert [n for n in library["files"] if n.startswith("s.json.corrupt-")] != []
    else:
        assert library["raised"] == "RecursionError" and library["files"] == ["s.json"]

    home = home_with(tmp_path / "again", data)  # the library moved the truncated one away
    target = home / "sessions" / "s.json"
    if case == "denied":
        real_open = os.open

        def denied(path, flags, *args, **kwargs):
            if os.fspath(path) == str(target):
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", denied)
    result = cli("check", home / "sessions", "--json")
    [finding] = [f for f in result.json()["findings"] if f["file"] == str(target) and f["code"] == "parse"]
    assert finding["severity"] == "error"
    assert finding["message"].endswith(f": {consequence}")
    if case == "denied":
        assert finding["message"] == f"{target}: permission denied: {consequence}"
        assert "quarantine" not in json.dumps(result.json())
