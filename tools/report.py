"""tools/report: the command; what it does is cubench_tools/report.py's (its help: tools/report --help)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cubench_tools import cli, report  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli.run("tools/report", report.main))
