#!/bin/sh
# Run the lock tests against the lowest filelock pyproject.toml allows, in a throwaway
# venv (not part of CI: it needs PyPI). Usage: scripts/check_filelock_floor.sh [PYTHON]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
python=${1:-python3}
floor=$(sed -n 's/^ *"filelock>=\([0-9.]*\)".*/\1/p' "$root/pyproject.toml")
[ -n "$floor" ] || { echo "no filelock floor found in pyproject.toml" >&2; exit 2; }
venv=$(mktemp -d "${TMPDIR:-/tmp}/praisonmem-filelock-floor.XXXXXX")
trap 'rm -rf "$venv"' EXIT
"$python" -m venv "$venv"
"$venv/bin/pip" install -q "filelock==$floor" pytest
"$venv/bin/pip" install -q --no-deps "$root"
"$venv/bin/pip" install -q "typer>=0.26,<0.29" "rich>=13" "tomli-w>=1.0" "platformdirs>=4"
"$venv/bin/python" -c "import filelock; print('filelock', filelock.__version__)"
cd "$root"
DO_NOT_TRACK=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    tests/cli/test_symlinked_locks.py tests/core/test_jsonfile.py tests/core/test_learn.py \
    tests/cli/test_session_write.py tests/cli/test_config_cli.py tests/core/test_config_locking.py
