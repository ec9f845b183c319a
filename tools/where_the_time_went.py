"""tools/where-the-time-went: the command; what it does is cubench_tools/where_the_time_went.py's (its help: tools/where-the-time-went --help)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cubench_tools import cli, where_the_time_went  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli.run("tools/where-the-time-went", where_the_time_went.main))
