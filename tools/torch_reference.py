#!/usr/bin/env python3
"""tools/torch_reference.py: the command; what it does is cubench_tools/torch_reference.py's (its help: python3 tools/torch_reference.py --help).
It needs no numpy: the GPU machine's python runs it with PyTorch alone."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cubench_tools import cli, torch_reference  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli.run(torch_reference.PROG, torch_reference.main))
