"""tools/merge-processes: the command; what it does is cubench_tools/merge.py's (its help: tools/merge-processes --help)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cubench_tools import cli, merge  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli.run("tools/merge-processes", merge.main))
