"""tools/history: the command; what it does is cubench_tools/history.py's (its help: tools/history --help)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cubench_tools import cli, history  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli.run("tools/history", history.main))
