"""SHA-256 and MD5 hex digests of short strings (history ids, project ids) without loading OpenSSL.

``import hashlib`` loads OpenSSL's libcrypto (≈ 2.5 ms, a tenth of what ``session list`` on a small
home costs beyond importing Typer); CPython's own implementations of the same functions, which
hashlib itself falls back to when OpenSSL is missing, load in 0.1 ms. Same digests by definition;
hashlib where an interpreter has neither module.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from functools import cache
from typing import Any


# Where CPython keeps each: _sha2 since 3.12, _sha256 before (asking for a module that is not there costs a
# search of the whole sys.path).
MODULES = {"sha256": "_sha2" if sys.version_info >= (3, 12) else "_sha256", "md5": "_md5"}


@cache
def _constructor(name: str) -> Callable[[bytes], Any]:
    try:
        return getattr(importlib.import_module(MODULES[name]), name)
    except (ImportError, AttributeError):
        import hashlib

        return getattr(hashlib, name)


def sha256_hex(data: bytes) -> str:
    return _constructor("sha256")(data).hexdigest()


def md5_hex(data: bytes) -> str:
    return _constructor("md5")(data).hexdigest()
