"""tools/aoti-export: the command; what it does is cubench_tools/aoti_export.py's (its help: tools/aoti-export --help)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cubench_tools import aoti_export, cli  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli.run("tools/aoti-export", aoti_export.main))
