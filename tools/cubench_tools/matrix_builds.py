"""tools/run-matrix's builds: each configured and built in its own folder, one step at a time with
its progress said, a failure's last lines shown, the others built anyway."""
import collections
import os
import queue
import re
import shlex
import subprocess
import threading
import time

from .checkout import BUILD_ROOT, ROOT
from .matrix_progress import fmt_duration, say, StepProgress, timed
from .stopping import stoppable


def run_step(cmd, progress, log, clock=time.monotonic):
    """Runs cmd in the source folder, its output (stdout and stderr) into the open file log,
    saying progress's lines on stderr as it goes; (exit status, its last 200 lines)."""
    lines = queue.Queue()
    tail = collections.deque(maxlen=200)
    with subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, text=True, errors="replace") as proc, stoppable(proc):
        def pump():  # a thread: the loop below speaks on time also while nothing is printed
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)
        threading.Thread(target=pump, daemon=True).start()
        try:
            while True:
                try:
                    line = lines.get(timeout=min(1.0, progress.every))
                except queue.Empty:
                    line = ""
                if line is None:
                    break
                if line:
                    log.write(line)
                    tail.append(line.rstrip("\n"))
                    progress.seen(line)
                text = progress.due(clock())
                if text:
                    say(text)
        finally:
            log.flush()
    return proc.returncode, list(tail)


def error_lines(tail, most=12):
    """What a failed step's output says of why: from its first error line (ninja's "FAILED:",
    "CMake Error", a compiler's "error"), at most `most` lines; else its last lines."""
    first = next((i for i, line in enumerate(tail)
                  if re.search(r"^FAILED:|^CMake Error|\berror\b", line)), None)
    lines = tail[first:first + most] if first is not None else tail[-most:]
    return [line for line in lines if line.strip()]


def build_dir(build_root, preset):
    return os.path.join(build_root, preset)


# One build of the matrix: its name (a preset, or a --torch label: its result files' and its
# progress lines'), its folder, its configure command, what its result files' context adds, and
# steps after the build (verb, done, command): a PyTorch install's compiled rows' packages. A step
# after that fails is said, and the build still runs (those rows are then left out, saying why).
Build = collections.namedtuple("Build", "name folder configure context after", defaults=((),))


def preset_builds(names, build_root):
    """[Build] of the presets: each in build_root/<preset> (cmake --preset P -B there: the preset's
    own binaryDir, build/<preset>, is left alone)."""
    return [Build(p, build_dir(build_root, p), ["cmake", "--preset", p, "-B", build_dir(build_root, p)], {})
            for p in names]


def build_preset(preset, build_root):
    """Configures and builds preset in build_root/<preset>; whether it built."""
    return build_one(preset_builds([preset], build_root)[0])


def build_one(build):
    """Configures and builds one Build in its folder, then its steps after, saying its progress;
    whether it built (a step after that fails is said, and the build stands)."""
    name, folder = build.name, build.folder
    os.makedirs(folder, exist_ok=True)
    log_path = os.path.join(folder, "run-matrix.log")
    steps = [("configuring", "configured", build.configure, True),
             ("building", "built", ["cmake", "--build", folder], True)]
    steps += [(verb, done, cmd, False) for verb, done, cmd in build.after]
    with open(log_path, "w", encoding="utf-8") as log:
        for verb, done, cmd, needed in steps:
            start = time.monotonic()
            say(f"{verb} {name} ...")
            log.write(f"$ {shlex.join(cmd)}\n")
            log.flush()
            code, tail = run_step(cmd, StepProgress(f"{verb} {name}", start), log)
            took = fmt_duration(time.monotonic() - start)
            if code == 0:
                say(f"{name}: {done} ({took})")
                continue
            say(f"{name}: {shlex.join(cmd)} failed (exit {code}) after {took}"
                f"{'' if needed else ', its rows run without it'}; its whole output: {log_path}")
            for line in error_lines(tail):
                say(f"{name}:   {line}")
            if needed:
                return False
    return True


def build_all(names, clock, where=BUILD_ROOT):
    """(names built, names failed), every build first: the runs then take turns. where: the
    {name: Build} to make, or a build root (each name a preset, built in where/<preset>)."""
    builds = where if isinstance(where, dict) else {b.name: b for b in preset_builds(names, where)}
    failed, built = [], []
    with timed(clock, "build"):
        for name in names:
            (built if build_one(builds[name]) else failed).append(name)
    return built, failed
