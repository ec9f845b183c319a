"""Stopping tools/run-matrix on Ctrl-C (SIGINT, to the whole foreground group) or a job
scheduler's SIGTERM (to run-matrix alone): the running child (cmake, or a cubench process,
which then writes its finished rows and "interrupted") gets the same signal, no further build or
run starts, and no result file is written from a part of the processes. Without this, a child the
signal killed read as a failed build, and the next one started."""
import contextlib
import signal
import subprocess


class Stopped(Exception):
    """The matrix was stopped by a signal (its name in args[0])."""


_children = []  # the child running now, for the signal to be passed on to
STOP_WAIT_S = 30  # how long a child has to stop on the signal before it is killed


def _on_signal(signum, _frame):
    for child in list(_children):
        if child.poll() is None:
            with contextlib.suppress(OSError):
                child.send_signal(signum)
    raise Stopped(signal.Signals(signum).name)


@contextlib.contextmanager
def stoppable(proc):
    """While proc runs, a signal is passed on to it; if the matrix stops, proc is given
    STOP_WAIT_S to end (cubench writes its finished rows), then killed."""
    _children.append(proc)
    try:
        yield proc
    except BaseException:
        try:
            proc.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
        raise
    finally:
        _children.remove(proc)


def handle_signals():
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_signal)
