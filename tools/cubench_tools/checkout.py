"""Where this checkout's folders are: its root, tools/, and the folder tools/run-matrix builds in
by default."""
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOLS = os.path.join(ROOT, "tools")
BUILD_ROOT = os.path.join(ROOT, "build", "run-matrix")  # --build-dir's default
