"""Reading a cubench build's own list of its configurations, `cubench --cubench_list=axes`: each
configuration's name, its family, whether the family's default run keeps it, and its value of
every axis the family declares (one JSON object a line; fixtures/detail/run/axes_listing.h). A
tool that runs the same cases elsewhere (tools/torch_reference.py) takes them from here, so the
families' axes are declared once, in C++.
"""
import json
import os
import subprocess

from .input_error import InputError

# Where the build of the README and the presets puts the binary, from the repository's root.
DEFAULT_BINARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                              "cuda-13.0", "cubench")
LISTING_FLAG = "--cubench_list=axes"
# The listing only reads the registry; a binary that takes longer is not answering.
TIMEOUT_S = 120


class Row:
    """One configuration as the binary lists it: name (without "/manual_time"), family,
    default_suite, and axes {axis: value} in the family's order (an int axis's value an int)."""

    def __init__(self, name, family, default_suite, axes):
        self.name, self.family, self.default_suite, self.axes = name, family, default_suite, axes

    def axis(self, name):
        """The row's value of an axis; InputError where its family declares no such axis (the
        family changed under a reader that still expects it)."""
        if name not in self.axes:
            raise InputError(f"cubench's listing: {self.name} has no axis '{name}' (its axes: "
                             f"{', '.join(self.axes) or 'none'}): the family changed; update its "
                             "reader")
        return self.axes[name]


def parse(text, where="cubench's listing"):
    """The rows of a listing's text; InputError naming the line unless each is a configuration."""
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        at = f"{where}, line {number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{at}: not JSON ({e.msg}): not --cubench_list=axes output")
        if not isinstance(obj, dict):
            raise InputError(f"{at}: not a JSON object: not --cubench_list=axes output")
        name, family, default, axes = (obj.get(k) for k in ("name", "family", "default_suite", "axes"))
        if not (isinstance(name, str) and isinstance(family, str) and isinstance(default, bool)
                and isinstance(axes, dict)):
            raise InputError(f"{at}: wants a string name and family, a true or false default_suite "
                             "and an object of axes")
        for axis, value in axes.items():
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise InputError(f"{at}: {name}'s axis {axis} is {json.dumps(value)}, not a whole "
                                 "number or a name")
        if "/".join([family] + [str(v) for v in axes.values()]) != name:
            raise InputError(f"{at}: {name} is not its family {family} and its axes' values")
        rows.append(Row(name, family, default, axes))
    if not rows:
        raise InputError(f"{where}: no configuration listed")
    return rows


def run(binary, suite="full", option="--cubench-binary"):
    """The rows of `binary --cubench_list=axes --cubench_suite=<suite>`; InputError, one line,
    where the binary is missing, cannot run or does not list."""
    if not os.path.exists(binary):
        raise InputError(f"{option} {binary}: no such file (build cubench first: cmake --preset "
                         f"cuda-13.0 && cmake --build build/cuda-13.0; or name its binary with {option})")
    command = [binary, LISTING_FLAG, f"--cubench_suite={suite}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    except OSError as e:
        raise InputError(f"{option} {binary}: cannot run it: {e.strerror}")
    except subprocess.TimeoutExpired:
        raise InputError(f"{' '.join(command)}: no listing in {TIMEOUT_S} s")
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()
        raise InputError(f"{' '.join(command)} exited {done.returncode}"
                         + (f": {said[-1]}" if said else ""))
    return parse(done.stdout, f"{' '.join(command)}'s output")
