#!/usr/bin/env bash
# Make the oracle venv: the real praisonai 4.7.19 (+ praisonaiagents 1.7.17 with its rag memory,
# cryptography, psycopg2, mysql-connector-python, redis-py, chromadb 1.5.9, mem0ai 2.2.1) that
# compat tests run in subprocesses, from the pins in tests/oracle-requirements.txt.
#
#   export PRAISONMEM_ORACLE_PYTHON="$(scripts/make_oracle_venv.sh /tmp/praisonmem-oracle)"
#
# stdout: the venv's python, nothing else; progress and errors go to stderr.
# Re-running on a venv made from the same pins does nothing (a stamp file records them); a venv
# made from other pins is rebuilt. A DIR that exists and is not such a venv is refused, never
# removed. PYTHON (default python3) is the interpreter the venv is made from.
set -euo pipefail

dir=${1:?usage: make_oracle_venv.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
req=$here/../tests/oracle-requirements.txt
python=${PYTHON:-python3}
stamp=.praisonmem-oracle-requirements.txt

say() { printf 'make_oracle_venv: %s\n' "$*" >&2; }

if [ -e "$dir" ]; then
    if [ -f "$dir/$stamp" ] && cmp -s "$req" "$dir/$stamp" && [ -x "$dir/bin/python" ]; then
        say "$dir is up to date"
        printf '%s\n' "$dir/bin/python"
        exit 0
    fi
    if [ -f "$dir/$stamp" ] || [ -z "$(ls -A "$dir")" ]; then
        rm -rf -- "$dir"
    else
        say "error: $dir exists and is not an oracle venv made by this script; remove it or pick another DIR"
        exit 2
    fi
fi

say "creating $dir ($("$python" -V 2>&1))"
"$python" -m venv "$dir"
# Exactly the pinned set: no resolver run, so nothing newer sneaks in; pip check then proves
# the set is complete and consistent on this interpreter.
"$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps -r "$req" >&2
"$dir/bin/python" -m pip check >&2
# The self-check is offline like the tests: no telemetry, and litellm keeps its bundled price map.
DO_NOT_TRACK=1 PRAISONAI_TELEMETRY_DISABLED=true ANONYMIZED_TELEMETRY=False MEM0_TELEMETRY=False \
    LITELLM_LOCAL_MODEL_COST_MAP=True "$dir/bin/python" - >&2 <<'EOF'
from importlib.metadata import version
want = {"praisonai": "4.7.19", "praisonaiagents": "1.7.17", "chromadb": "1.5.9", "mem0ai": "2.2.1"}
got = {d: version(d) for d in want}
assert got == want, got
import cryptography.fernet, psycopg2                                       # noqa: F401
import praisonai.persistence.conversation.postgres, praisonai.persistence.conversation.sqlite  # noqa: F401
import praisonai_code.cli.session.unified, praisonai_code.cli.state.project_sessions  # noqa: F401
import praisonaiagents.session.encrypted_store, praisonaiagents.session.sqlite_transcript_store  # noqa: F401
import mysql.connector, redis                                               # noqa: F401
import praisonai.persistence.conversation.mysql, praisonai.persistence.state.redis, praisonai.storage.redis_adapter  # noqa: F401
import chromadb, litellm, markitdown, mem0, mem0.memory.storage             # noqa: F401
import praisonaiagents.memory.adapters.factories, praisonaiagents.knowledge.adapters.factories  # noqa: F401
print("make_oracle_venv: ok:", ", ".join(f"{d} {v}" for d, v in got.items()) + ",",
      f"psycopg2 {psycopg2.__version__.split()[0]}, cryptography {cryptography.__version__},",
      f"mysql-connector-python {mysql.connector.__version__}, redis {redis.__version__}")
EOF
cp "$req" "$dir/$stamp"
printf '%s\n' "$dir/bin/python"
