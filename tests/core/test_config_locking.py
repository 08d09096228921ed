"""``config set``/``unset`` are locked read-modify-writes."""

from __future__ import annotations

import stat
import subprocess
import sys
import textwrap
import time

from tests.helpers import hold_flock

WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from praisonmem.core.config import load_file, set_value

    path, key, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    lost = 0
    for n in range(1, rounds + 1):
        set_value(path, key, str(n))
        if str(load_file(path).get(key)) not in (str(n), f"{n}.0"):  # only this process writes this key
            lost += 1
    print(lost)
""")


def test_concurrent_sets_of_different_keys_lose_none(tmp_path):
    path = tmp_path / "config.toml"
    keys = {"backup.keep": "40", "lock_timeout": "40.0", "user_id": "40"}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), key, "40"], stdout=subprocess.PIPE,
                                text=True) for key in keys]
    lost = [int(w.communicate(timeout=120)[0]) for w in writers]
    assert [w.returncode for w in writers] == [0, 0, 0]
    assert lost == [0, 0, 0]
    from praisonmem.core.config import load_file

    assert {k: str(v) for k, v in load_file(path).items()} == keys  # (a path key would be stored absolute)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_config_set_waits_for_the_lock_and_gives_up_with_exit_4(cli, config):
    config.write_text('output = "table"\n')
    holder = hold_flock(config.parent / "config.toml.lock", 10)
    try:
        started = time.monotonic()
        result = cli("--lock-timeout", "0.3", "config", "set", "backup.keep", "3")
        assert time.monotonic() - started < 3
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 4
    assert result.stderr == (f"praisonmem: error: {config}: could not lock {config}.lock within 0.3s "
                             "(an agent may be writing it); nothing changed\n")
    assert config.read_text() == 'output = "table"\n'
    assert cli("config", "unset", "output").exit_code == 0
    assert config.read_text() == ""
