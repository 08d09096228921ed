"""Every name a package of praisonmem exports (its ``__all__``: for the lazy ``__init__``s, the tables of
``core/lazy.py``'s ``lazy_exports``) resolves by attribute access, in a fresh interpreter, to what the table says,
and still does once every submodule is imported (a submodule of the same name would shadow it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO

CHECK = r"""
import importlib, json, pkgutil, sys, types

import praisonmem

packages = ["praisonmem"] + sorted(m.name for m in pkgutil.walk_packages(praisonmem.__path__, "praisonmem.")
                                   if m.ispkg)
problems = []


def check(when):
    for name in packages:
        package = importlib.import_module(name)
        exported = getattr(package, "__all__", None)
        if exported is None:
            continue
        for attribute in exported:
            try:
                value = getattr(package, attribute)
            except Exception as exc:
                problems.append(f"{name}.{attribute} ({when}): {type(exc).__name__}: {exc}")
                continue
            if isinstance(value, types.ModuleType):
                problems.append(f"{name}.{attribute} ({when}): the submodule {value.__name__}, not the name")


check("first use")
for name in list(packages):
    for info in pkgutil.iter_modules(importlib.import_module(name).__path__, name + "."):
        importlib.import_module(info.name)
check("after every submodule is imported")
print(json.dumps({"packages": packages, "problems": problems}))
"""


def test_every_exported_name_of_every_package_resolves():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert {"praisonmem.core.sessions", "praisonmem.core.secrets", "praisonmem.core.backup"} <= set(
        report["packages"])
    assert report["problems"] == []
