"""PostgreSQL for the benchmarks: a throwaway cluster (``tests/pgcluster.py``'s, Debian's server run
unprivileged, removed at the end) or the server ``--pg-url`` names; and the oracle venv
(``--oracle-python``, default ``$PRAISONMEM_ORACLE_PYTHON``) for the real praisonai 4.7.19 store."""

from __future__ import annotations

import atexit
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_cluster = None


def extra_args(ap) -> None:
    ap.add_argument("--oracle-python", default=os.environ.get("PRAISONMEM_ORACLE_PYTHON"), metavar="PYTHON",
                    help="the oracle venv's python (praisonai 4.7.19 + psycopg2-binary; "
                         "default $PRAISONMEM_ORACLE_PYTHON)")


def oracle_python(args) -> str:
    python = getattr(args, "oracle_python", None) or os.environ.get("PRAISONMEM_ORACLE_PYTHON")
    if not python:
        raise SystemExit("the reference needs the oracle venv: --oracle-python or PRAISONMEM_ORACLE_PYTHON "
                         "(scripts/make_oracle_venv.sh DIR)")
    return python


def database(label: str):
    """A fresh database in the benchmark's cluster (started on first use, stopped at exit)."""
    global _cluster
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.pgcluster import Cluster, find_bindir

    if _cluster is None:
        bindir = find_bindir()
        if bindir is None:
            raise SystemExit("no PostgreSQL server binaries (apt-get install postgresql)")
        _cluster = Cluster(bindir).start()
        atexit.register(_cluster.stop)
    return _cluster.create_database(label)
