"""tools/plot: the command; what it does is cubench_tools/plot.py's (its help: tools/plot --help)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cubench_tools import cli, plot  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli.run("tools/plot", plot.main))
