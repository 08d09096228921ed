"""No comment, docstring, help text, page or test cites a document its reader does not have: a spec section, an
issue number, the design notes or a file outside the repository. What a line means is said in the line itself,
or by a README section. Every tree of the repository is scanned: the package (library and CLI), the README, the
pages, the completions, the scripts, the tests and the benchmarks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

SCANNED = ["praisonmem", "README.md", "docs", "man", "completions", "scripts", "tests", "benchmarks"]
SUFFIXES = {".py", ".md", ".1", ".sh", ".bash", ".fish", ".txt", ".toml", ".cfg"}
CITATION = re.compile("|".join([
    "\u00a7",  # a section sign: "spec §4.1"
    r"\bspec-\d+\b",  # "spec-11"
    r"\bissues?\s+#?\d+",  # "issue 14", "issues 11/12"
    r"\bdesign\.md\b",
    r"\.\./shared\b", r"/work/shared\b", r"\bspec/[\w.-]+\.md\b",  # the notes outside the repository
    r"\bmust[- ]show\b", r"\bresearch note\b",  # an issue's own words
]), re.IGNORECASE)


def scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        root = REPO / name
        if root.is_file():
            files.append(root)
            continue
        for path in sorted(root.rglob("*")) if root.is_dir() else []:
            relative = path.relative_to(REPO).as_posix()
            if not path.is_file() or path.resolve() == Path(__file__).resolve() or "__pycache__" in relative:
                continue
            if relative.startswith("tests/fixtures/") and not (path.name == "README.md"
                                                                 or relative.startswith("tests/fixtures/tools/")):
                continue  # what the real libraries wrote, kept byte for byte
            if path.suffix in SUFFIXES or path.name == "_praisonmem":
                files.append(path)
    return files


def test_the_scan_reaches_every_tree():
    files = {p.relative_to(REPO).as_posix() for p in scanned_files()}
    for sample in ("praisonmem/cli/commands/session.py", "praisonmem/core/io/parallel.py",
                   "praisonmem/core/sessions/stores/jsondir.py", "benchmarks/startup.py", "benchmarks/RESULTS.md",
                   "README.md", "man/praisonmem-session.1",
                   "completions/_praisonmem", "scripts/gen_manpages.py", "tests/conftest.py",
                   "tests/fixtures/tools/gen_praisonai_home.py", "tests/fixtures/praisonai-4.7.19-home/README.md"):
        assert sample in files


# The path out of the repository is split so that this file does not hold it itself.
@pytest.mark.parametrize("text", ["(spec \u00a74.1)", "see spec-11", "(issue 14, item 13)", "Issues 11/12",
                                  "design.md's picture", "../" + "shared/cli-contract.md", "spec/upsonic-storage.md",
                                  "must-show"])
def test_each_form_of_citation_is_caught(text):
    assert CITATION.search(text)


def test_no_file_cites_a_document_outside_the_repository():
    found = []
    for path in scanned_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            match = CITATION.search(line)
            if match:
                found.append(f"{path.relative_to(REPO)}:{number}: {match[0]!r} in {line.strip()[:100]}")
    assert not found, "citations of documents the reader does not have:\n" + "\n".join(found)
