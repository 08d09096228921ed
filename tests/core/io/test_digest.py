"""core.io.digest: hashlib's SHA-256 and MD5, without loading OpenSSL."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from praisonmem.core.io import digest

SAMPLES = [b"", b"agent", "dir:/home/café-日本:Weather Bot".encode(), bytes(range(256)) * 40, b"\x00" * 65]


@pytest.mark.parametrize("data", SAMPLES)
def test_digests_are_hashlibs(data):
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert digest.md5_hex(data) == hashlib.md5(data).hexdigest()


def test_the_history_ids_praisonaiagents_gives_stay_the_same():
    from praisonmem.core.sessions.stores.projects import short_hash
    from praisonmem.core.sessions.workspace import history_id, legacy_ids

    assert history_id("global", "Global Bot") == "history_d465a9b7"  # examples/home's global session
    assert legacy_ids("Weather Bot") == {
        "sha256": "history_" + hashlib.sha256(b"Weather Bot").hexdigest()[:8],
        "md5": "history_" + hashlib.md5(b"Weather Bot").hexdigest()[:8]}
    assert short_hash("path:/x") == hashlib.sha256(b"path:/x").hexdigest()[:8]


def test_openssl_is_not_loaded():
    code = ("import sys\n"
            "from praisonmem.core.io.digest import md5_hex, sha256_hex\n"
            "sha256_hex(b'x'), md5_hex(b'x')\n"
            "print('hashlib' in sys.modules, '_hashlib' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False False\n"
