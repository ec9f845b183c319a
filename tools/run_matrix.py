"""tools/run-matrix: the command; what it does is cubench_tools/run_matrix.py's (its help: tools/run-matrix --help)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cubench_tools import cli, run_matrix  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli.run("tools/run-matrix", run_matrix.main))
