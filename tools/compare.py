"""tools/compare: the command; what it does is cubench_tools/compare.py's (its help: tools/compare --help)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cubench_tools import cli, compare  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli.run("tools/compare", compare.main))
