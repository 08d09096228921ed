#!/usr/bin/env bash
# Start-up time of praisonmem's cheapest commands against importing Typer alone: now
# benchmarks/startup.py (hyperfine, interleaved rounds, ratios); kept for the README's command.
# Run with the praisonmem venv's python as $PYTHON; extra arguments go to startup.py.
set -euo pipefail
exec "${PYTHON:-python}" "$(dirname "$0")/startup.py" "$@"
