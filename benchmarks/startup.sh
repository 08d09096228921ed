#!/usr/bin/env bash
# Wall time of praisonmem's cheapest commands against importing Typer alone.
# Needs hyperfine (Debian package 'hyperfine'). Run from the repository root
# with the praisonmem venv's python on PATH or as $PYTHON.
set -euo pipefail
PYTHON=${PYTHON:-python}
BIN=$(dirname "$(command -v "$PYTHON")")
cd "$(mktemp -d)"  # outside any git repository, as a user's home would be
hyperfine -N --warmup 3 --runs "${RUNS:-30}" \
  "$PYTHON -c 'import typer'" \
  "$BIN/praisonmem --version" \
  "$BIN/praisonmem workspace id" \
  "$BIN/praisonmem --home $OLDPWD/examples/home session list --json"
