"""The tools' warnings about what they read (a file cut mid-write, a run interrupted): each said
once, led by the tool's name, and held while a tool may still refuse its input, so that a
refusal is the one line said."""
import contextlib
import sys


_warned = set()
PROG = "cubench tools"  # the tool that speaks in warnings: tools/cli.py's run() sets it
_held = None  # the warnings said inside warnings_held(), not yet printed; None outside it


def warn(message):
    """A one-line warning on stderr, once per message (tools may read a file more than once)."""
    if message not in _warned:
        _warned.add(message)
        _say(message)


def _say(message):
    if _held is not None:
        _held.append(message)
    else:
        print(f"{PROG}: warning: {message}", file=sys.stderr)


@contextlib.contextmanager
def warnings_held():
    """Warnings said inside reach stderr only when the block ends without an error: a tool that
    reads a file whole and then refuses it says one line, the refusal, and not also a warning about
    what it read (an interrupted run's file from before the counters a tool needs)."""
    global _held
    outer, _held = _held, []
    try:
        yield
        held = _held
    finally:
        _held = outer
    for message in held:
        _say(message)
