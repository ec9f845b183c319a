"""Reading Google Benchmark JSON (cubench's, or tools/torch_reference.py's) for the tools.

A result file becomes {run_name: Result}: the per-repetition times and counters of each benchmark,
and the file's context. Bad input raises InputError with one line a user can act on.
"""
import json
import math
import re
import statistics

COUNTERS = ("TFLOPS", "GBps", "busbw_GBps", "algbw_GBps", "images_per_s", "peak_mem_bytes",
            "peak_allocated_bytes", "peak_reserved_bytes", "inactive_split_bytes", "model_bytes",
            "fragmentation", "sm_clock_MHz")


class InputError(Exception):
    """Malformed or mismatched input: the message is the whole story."""


class Result:
    def __init__(self, name):
        self.name = name
        self.times = []          # real_time per repetition, in microseconds
        self.counters = {}       # counter -> [value per repetition]
        self.error = None
        self.label = ""

    def median_time(self):
        return statistics.median(self.times) if self.times else math.nan

    def median(self, counter):
        values = [v for v in self.counters.get(counter, []) if not math.isnan(v)]
        return statistics.median(values) if values else math.nan

    def stdev(self, counter=None):
        values = self.times if counter is None else self.counters.get(counter, [])
        return statistics.stdev(values) if len(values) > 1 else 0.0


_UNITS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def load(path, rename=()):
    """Returns (context, {name: Result}); rename is [(regex, replacement)] applied to names."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON ({e.msg} at line {e.lineno})")
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise InputError(f"{path}: not Google Benchmark output (no 'benchmarks' list)")
    results, raw_name_of = {}, {}
    for row in data["benchmarks"]:
        if not isinstance(row, dict) or "name" not in row:
            raise InputError(f"{path}: not Google Benchmark output (a benchmark without a name)")
        if row.get("run_type", "iteration") != "iteration":
            continue  # aggregates are recomputed from the repetitions
        raw = name = row.get("run_name", row["name"])
        for pattern, replacement in rename:
            try:
                name = re.sub(pattern, replacement, name)
            except re.error as e:
                raise InputError(f"rename '{pattern}': not a valid regex or replacement: {e}")
        if raw_name_of.setdefault(name, raw) != raw:  # two benchmarks' samples must never mix
            raise InputError(f"{path}: renaming maps both {raw_name_of[name]} and {raw} onto {name}")
        r = results.setdefault(name, Result(name))
        if row.get("error_occurred"):
            r.error = row.get("error_message", "error")
            continue
        unit = _UNITS.get(row.get("time_unit", "ns"))
        if unit is None or "real_time" not in row:
            raise InputError(f"{path}: benchmark {name} has no usable real_time/time_unit")
        r.times.append(float(row["real_time"]) * unit)
        r.label = row.get("label", r.label)
        for c in COUNTERS + tuple(k for k in row if k.endswith("_error")):
            if c in row and isinstance(row[c], (int, float)):
                r.counters.setdefault(c, []).append(float(row[c]))
    if not results:
        raise InputError(f"{path}: no benchmark results in it")
    return data.get("context", {}), results


def label_of(path, context):
    """A column name that says what stack made the file."""
    if context.get("framework"):
        return f"{context['framework']} {context.get('torch', '')}".strip()
    toolkit = context.get("cuda_toolkit")
    label = f"CUDA {toolkit} (cuBLAS {context.get('cublas', '?')})" if toolkit else path
    if context.get("processes"):  # merged by tools/merge-processes: say what a sample is
        label += f", {context['processes']} processes"
    return label
