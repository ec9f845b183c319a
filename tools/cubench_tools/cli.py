"""What every cubench tool does at its edges: parse flags, check output paths, and end with one
line on stderr and an exit status whatever goes wrong.

Exit status, for every tool:
  0  done
  2  the command line or an input is wrong (a flag, a file, an output path): one line on stderr,
     `tools/NAME: what is wrong`; fix the input and run again
  1  the work itself failed (a build or a run of run-matrix, compare.py) or the tool has a bug
     (`tools/NAME: internal error ...`): one line on stderr as well
"""
import argparse
import contextlib
import os
import sys

from . import tool_warnings
from .input_error import InputError

EXIT_STATUS_HELP = """exit status:
  0  done
  2  a bad flag, input file or output path: one line on stderr says which
  1  the work failed, or an internal error (a bug): one line on stderr too"""


class WorkFailed(Exception):
    """The input was fine but the work failed (a build, a run, a helper program): status 1."""


class Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line (`prog: message`, status 2), not usage + error."""

    def error(self, message):
        raise InputError(message)


def parser(prog, doc):
    return Parser(prog=prog, description=doc, epilog=EXIT_STATUS_HELP,
                  formatter_class=argparse.RawDescriptionHelpFormatter)


def one_line(text):
    """Messages may quote inputs or exceptions that hold newlines: the user still gets one line."""
    return " / ".join(part.strip() for part in str(text).splitlines() if part.strip())


def fail(prog, message, status):
    print(f"{prog}: {one_line(message)}", file=sys.stderr)
    return status


def colour_wanted(stream=None):
    """Whether a tool may colour what it writes to stream (stdout unless named): only on a
    terminal, so that a file or a pipe never holds escape codes, and never where NO_COLOR is set
    to anything but the empty string (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    stream = sys.stdout if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # not a file, or one already closed
        return False


def os_message(e):
    """`path: reason` for an OSError, as the user named the path."""
    where = e.filename if e.filename is not None else ""
    reason = e.strerror or str(e)
    return f"{where}: {reason}" if where else reason


def run(prog, main, argv=None):
    """Runs main(argv) and turns whatever escapes it into the exit status above: no traceback
    reaches the user, and each outcome is one line."""
    tool_warnings.PROG = prog
    try:
        return main(sys.argv[1:] if argv is None else argv)
    except InputError as e:
        return fail(prog, e, 2)
    except WorkFailed as e:
        return fail(prog, e, 1)
    except BrokenPipeError:  # `tools/compare ... | head`: the reader left, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as e:  # an output path we could not write (inputs are InputErrors already)
        return fail(prog, os_message(e), 2)
    except KeyboardInterrupt:
        return fail(prog, "interrupted", 130)
    except Exception as e:  # noqa: BLE001 - a bug: still one line, named as ours, not the input's
        return fail(prog, f"internal error ({type(e).__name__}: {e}); this is a bug in the tool, "
                          "not in the input: please report it with the command line", 1)


def pyplot():
    """matplotlib.pyplot, drawing to files (Agg), its first import kept quiet: where the user's
    matplotlib folder (MPLCONFIGDIR, else ~/.config/matplotlib) cannot be written (a tool run as
    another user, under a read-only home), matplotlib would print a warning as the tool's first
    line and make a cache folder per run; a private temporary folder is given to it instead."""
    quiet_matplotlib()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def quiet_matplotlib():
    """Gives matplotlib a private temporary folder where the user's cannot be written (pyplot()
    says why); to be called before matplotlib is first imported."""
    if "MPLCONFIGDIR" not in os.environ:
        home = os.path.expanduser("~")
        config = os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "matplotlib")
        try:
            os.makedirs(config, exist_ok=True)
            _probe_new_file(os.path.join(config, f".cubench-probe{os.getpid()}"))
        except OSError:
            import atexit
            import shutil
            import tempfile
            private = tempfile.mkdtemp(prefix="cubench-matplotlib-")
            atexit.register(shutil.rmtree, private, True)
            os.environ["MPLCONFIGDIR"] = private


def output_dir(path, option="--out-dir"):
    """Creates the directory path (and its parents) or says in one line why it cannot be."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise InputError(f"{option} {path}: exists and is not a directory")
    created = not os.path.exists(path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise InputError(f"{option} {path}: cannot create it: {e.strerror}")
    try:  # a file made and removed in it: os.access says yes to root wherever the mode allows
        _probe_new_file(os.path.join(path, f".cubench-probe{os.getpid()}"))
    except OSError as e:
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(path)
        raise InputError(f"{option} {path}: not writable: {e.strerror}")
    return path


def _probe_new_file(path):
    """Creates path (which must not exist) for writing, then removes it: raises the OSError that
    writing there would meet (EACCES, EROFS, ENOENT under /proc...)."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.remove(path)


def check_output_file(path, what="output"):
    """Raises InputError unless path can be written as a file (before any work is done): found
    out by opening it for writing, or by creating it and a file beside it (as write_file's
    temporary one), each removed again, so that the check leaves nothing behind. os.access would
    not do: it says yes to root for a file under /proc or on a read-only file system."""
    if os.path.isdir(path):
        raise InputError(f"{what} {path}: is a directory; name a file")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InputError(f"{what} {path}: its directory {parent} does not exist")
    try:
        if os.path.exists(path):  # opened as it is: not truncated, not blocked on by a FIFO
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK))
        else:
            with contextlib.suppress(FileExistsError):  # made meanwhile by another: probed below
                _probe_new_file(path)
        _probe_new_file(f"{path}.tmp{os.getpid()}")  # write_file's temporary one, and the rename
    except OSError as e:
        raise InputError(f"{what} {path}: cannot write: {e.strerror}")


def write_file(path, text, what="output"):
    """Writes text to path whole or not at all (a temporary file beside it, then a rename)."""
    check_output_file(path, what)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException as e:  # an OSError, or a signal mid-write: no half-written file stays
        if os.path.exists(tmp):
            os.remove(tmp)
        if isinstance(e, OSError):
            raise InputError(f"{what} {path}: cannot write: {e.strerror}")
        raise
