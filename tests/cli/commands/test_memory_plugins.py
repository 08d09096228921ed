"""A third-party provider installed by pip from a tiny wheel, used through the CLI."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

ENTRY_POINTS = """[praisonmem.providers]
demo = demo_provider:DemoProvider
leaky = demo_provider:LeakyProvider
failing = demo_provider:FailingProvider
minimal = demo_provider:MinimalProvider
broken = demo_provider:DoesNotExist
"""


def build_wheel(directory: Path) -> Path:
    """A real wheel of tests/fixtures/plugin/demo_provider.py with its entry points."""
    info = "praisonmem_demo_provider-0.1.0.dist-info"
    files = {
        "demo_provider.py": (FIXTURES / "plugin" / "demo_provider.py").read_bytes(),
        f"{info}/METADATA": b"Metadata-Version: 2.1\nName: praisonmem-demo-provider\nVersion: 0.1.0\n",
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: praisonmem-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": ENTRY_POINTS.encode(),
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = directory / "praisonmem_demo_provider-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plugin")
    wheel = build_wheel(root)
    target = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--disable-pip-version-check", "--target", str(target), str(wheel)], check=True)
    return target


@pytest.fixture
def run(site, tmp_path):
    def invoke(*args: str) -> subprocess.CompletedProcess:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
        return subprocess.run([sys.executable, "-m", "praisonmem", "--memory-dir", str(tmp_path / "mem"), *args],
                              capture_output=True, text=True, env=env, cwd=tmp_path)
    return invoke


def test_providers_lists_the_plugin_and_what_it_supports(run):
    infos = {i["name"]: i for i in json.loads(run("memory", "providers", "--json").stdout)}
    assert infos["demo"]["supports"] == ["store_short_term", "store_long_term", "search", "list", "delete",
                                         "reset_short_term", "reset_long_term"]
    assert infos["demo"]["source"] == "entry point demo_provider:DemoProvider (praisonmem-demo-provider)"
    assert infos["minimal"]["supports"] == ["store_short_term", "store_long_term", "search", "list"]
    assert infos["broken"]["error"].startswith("cannot load: AttributeError")
    assert {"file", "sqlite"} <= set(infos)


def test_store_search_list_delete_reset_through_the_plugin(run):
    stored = run("memory", "store", "likes green tea", "--provider", "demo", "--user-id", "ann", "--json")
    assert stored.returncode == 0, stored.stderr
    [item] = json.loads(stored.stdout)
    assert item["metadata"] == {"user_id": "ann"}
    hits = json.loads(run("memory", "search", "tea", "--provider", "demo", "--user-id", "ann", "--json").stdout)
    assert [h["item"]["id"] for h in hits] == [item["id"]]
    listed = json.loads(run("memory", "list", "--provider", "demo", "--user-id", "ann", "--json").stdout)
    assert [r["type"] for r in listed] == ["short_term"]
    assert run("memory", "delete", item["id"], "--provider", "demo", "--user-id", "ann", "--yes").returncode == 0
    assert json.loads(run("memory", "list", "--provider", "demo", "--user-id", "ann", "--json").stdout) == []
    assert run("memory", "reset", "--all", "--provider", "demo", "--user-id", "ann", "--yes").returncode == 0


def test_search_never_shows_another_users_rows_even_when_the_provider_leaks(run):
    run("memory", "store", "secret of bob", "--provider", "leaky", "--user-id", "bob")
    run("memory", "store", "secret of ann", "--provider", "leaky", "--user-id", "ann")
    hits = json.loads(run("memory", "search", "secret", "--provider", "leaky", "--user-id", "ann", "--json").stdout)
    assert [h["item"]["text"] for h in hits] == ["secret of ann"]
    listed = json.loads(run("memory", "list", "--provider", "leaky", "--user-id", "ann", "--json").stdout)
    assert [r["item"]["text"] for r in listed] == ["secret of ann"]


def test_a_provider_that_raises_on_store_is_an_error_naming_it(run):
    result = run("memory", "store", "x", "--provider", "failing")
    assert result.returncode == 5
    assert result.stderr == ("praisonmem: error: provider 'failing' failed in store_short_term: "
                             "ConnectionError: backend unreachable\n")


def test_unsupported_operations_exit_4_and_say_so(run):
    reset = run("memory", "reset", "--provider", "minimal", "--yes")
    assert reset.returncode == 4
    assert "provider 'minimal' does not support resetting short-term memory" in reset.stderr
    delete = run("memory", "delete", "1", "--provider", "minimal", "--yes")
    assert delete.returncode == 4 and "does not support delete" in delete.stderr
    entity = run("memory", "search", "x", "--type", "entity", "--provider", "minimal")
    assert entity.returncode == 4 and "has no entity memory" in entity.stderr


def test_unknown_and_broken_providers(run):
    unknown = run("memory", "store", "x", "--provider", "nope")
    assert unknown.returncode == 2 and "unknown provider 'nope' (available: file, sqlite, chroma, mem0-history, demo" in unknown.stderr
    broken = run("memory", "store", "x", "--provider", "broken")
    assert broken.returncode == 5 and "provider 'broken' failed to load" in broken.stderr


LOADED = """
import sys
from praisonmem.cli.app import run
code = run(sys.argv[1:])
print(code, "demo_provider" in sys.modules)
"""


@pytest.mark.parametrize("setting", ['provider = "demo"\n', 'provider = "file"\n'])
def test_a_configured_provider_is_checked_without_loading_any_plug_in(site, tmp_path, setting):
    config = tmp_path / "config.toml"
    config.write_text(setting)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
               PRAISONMEM_CONFIG=str(config))
    done = subprocess.run([sys.executable, "-c", LOADED, "workspace", "id"], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert done.stdout.splitlines()[-1] == "0 False", done.stderr


def test_a_configured_provider_that_is_not_installed_is_refused_naming_the_installed_ones(run, tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('provider = "nope"\n')
    monkeypatch.setenv("PRAISONMEM_CONFIG", str(config))
    result = run("workspace", "id")
    assert result.returncode == 2
    assert result.stderr == ("praisonmem: error: config provider must be an installed provider (file, sqlite, chroma, "
                             "mem0-history, demo, leaky, failing, minimal, broken), got 'nope'\n")
