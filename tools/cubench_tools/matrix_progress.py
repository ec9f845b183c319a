"""What tools/run-matrix says while it works: its lines on stderr, wall times as a person reads
them, and a build's progress (ninja's or make's steps) at least every PROGRESS_EVERY_S."""
import contextlib
import re
import sys
import time


def say(msg):
    print(f"[run-matrix] {msg}", file=sys.stderr, flush=True)


def fmt_duration(s):
    """A wall time as a person reads it: "52 s", "14 min 2 s"."""
    minutes, seconds = divmod(int(round(s)), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


PROGRESS = re.compile(r"^\[\d+/\d+\] ")


@contextlib.contextmanager
def timed(clock, key):
    """Adds the wall time of the block to clock[key], also when it is interrupted."""
    start = time.monotonic()
    try:
        yield
    finally:
        clock[key] += time.monotonic() - start


PROGRESS_EVERY_S = 10.0  # a build says where it is at least this often
BUILD_STEP = re.compile(r"^\[\s*(\d+)\s*/\s*(\d+)\s*\]|^\[\s*(\d+)%\]")  # ninja's [37/95], make's [ 37%]


class StepProgress:
    """What a configure or build says while it runs: its latest step ("[37/95]" from ninja's
    lines, "[37%]" from make's) and its time, at most once every `every` seconds, and as often
    while it prints nothing (one long compile): "building cuda-12.4: [37/95] (1 min 5 s)",
    "configuring cuda-12.4 ... (12 s)" before any step."""

    def __init__(self, what, start, every=PROGRESS_EVERY_S):
        self.what, self.start, self.every = what, start, every
        self.said = start
        self.step = None

    def seen(self, line):
        m = BUILD_STEP.match(line)
        if m:
            self.step = f"[{m.group(1)}/{m.group(2)}]" if m.group(1) else f"[{m.group(3)}%]"

    def text(self, now):
        took = fmt_duration(now - self.start)
        return f"{self.what}: {self.step} ({took})" if self.step else f"{self.what} ... ({took})"

    def due(self, now):
        """The line to say now, or None where one was said less than `every` seconds ago."""
        if now - self.said < self.every:
            return None
        self.said = now
        return self.text(now)
