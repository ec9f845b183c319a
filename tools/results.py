"""Reading Google Benchmark JSON (cubench's, or tools/torch_reference.py's) for the tools.

A result file becomes {run_name: Result}: the per-repetition times and counters of each benchmark,
and the file's context. Every field a tool reads is checked here, so bad input raises InputError
with one line a user can act on, never a traceback further in.

A file cut mid-write (a run killed before Google Benchmark closed its JSON, so the text ends inside
the "benchmarks" list or after it) is data: it loads with every complete row and a one-line
warning on stderr. A file that ends before its "benchmarks" list, or is not JSON, is an error.
"""
import json
import math
import re
import statistics
import sys

COUNTERS = ("TFLOPS", "GBps", "busbw_GBps", "algbw_GBps", "images_per_s", "peak_mem_bytes",
            "peak_allocated_bytes", "peak_reserved_bytes", "inactive_split_bytes", "model_bytes",
            "fragmentation", "sm_clock_MHz", "gpus", "pct_peak")
# Context fields the tools print or compute with; each must be a string or a number.
CONTEXT_FIELDS = ("framework", "torch", "cuda_toolkit", "cublas", "processes", "gpu", "date",
                  "copy_ceiling_GBps")


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


# --- reading the text: whole, or cut mid-write ---------------------------------------------------

class _Cut(Exception):
    """The text ends inside the value being read."""


_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")


def _skip(text, pos):
    pos = _WHITESPACE.match(text, pos).end()
    if pos == len(text):
        raise _Cut
    return pos


def _ends_inside(error, text):
    """Whether a decode error is only the end of the text arriving early, not a wrong character."""
    if error.msg.startswith("Unterminated string"):  # the string runs to the end of the text
        return True
    rest = text[error.pos:].strip()
    return error.msg.startswith("Expecting") and (
        re.fullmatch(r"[-+0-9.eE]*", rest) is not None  # a number cut short, or nothing at all
        or any(literal.startswith(rest) for literal in _LITERALS))


def _value(text, pos):
    try:
        return _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as e:
        if _ends_inside(e, text):
            raise _Cut
        raise


def _rows_until_cut(text, pos, rows):
    """Appends the complete rows of a list that opened before pos; returns the end of the list."""
    pos = _skip(text, pos)
    if text[pos] == "]":
        return pos + 1
    while True:
        row, pos = _value(text, pos)
        rows.append(row)
        pos = _skip(text, pos)
        if text[pos] == "]":
            return pos + 1
        if text[pos] != ",":
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
        pos = _skip(text, pos + 1)


def _salvage_cut(text):
    """For text that is not JSON: (the top-level object read so far, whether its "benchmarks"
    list was reached) if the text is a Google Benchmark file cut mid-write; None if it is
    malformed before its end (garbage, not a cut)."""
    data, reached_list = {}, False
    try:
        pos = _skip(text, 0)
        if text[pos] != "{":
            return None
        pos += 1
        while True:
            pos = _skip(text, pos)
            key, pos = _value(text, pos)
            pos = _skip(text, pos)
            if not isinstance(key, str) or text[pos] != ":":
                return None
            pos = _skip(text, pos + 1)
            if key == "benchmarks" and text[pos] == "[":
                reached_list, data[key] = True, []
                pos = _rows_until_cut(text, pos + 1, data[key])
            else:
                data[key], pos = _value(text, pos)
            pos = _skip(text, pos)
            if text[pos] != ",":
                return None  # "}" closes a complete object: the fault is after it, not a cut
            pos += 1
    except _Cut:
        return data, reached_list
    except json.JSONDecodeError:
        return None


_warned = set()
PROG = "cubench tools"  # the tool that speaks in warnings: tools/cli.py's run() sets it


def warn(message):
    """A one-line warning on stderr, once per message (tools may read a file more than once)."""
    if message not in _warned:
        _warned.add(message)
        print(f"{PROG}: warning: {message}", file=sys.stderr)


def _parse(path, text):
    if not text.strip():
        raise InputError(f"{path}: empty file, not a result file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        salvaged = _salvage_cut(text)
        if salvaged is None:
            raise InputError(f"{path}: not JSON ({e.msg} at line {e.lineno} column {e.colno})")
        data, reached_list = salvaged
        if not reached_list:
            raise InputError(f"{path}: cut mid-write before its \"benchmarks\" list: no results in it")
        rows = data["benchmarks"]
        if not rows:
            raise InputError(f"{path}: cut mid-write before its first complete benchmark row")
        warn(f"{path}: cut mid-write; loaded {len(rows)} complete row{'s' if len(rows) != 1 else ''}")
        return data


def _read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a result file")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset "
                         f"{e.start}), not a result file")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")


# --- checking the shape: every field a tool reads -----------------------------------------------

def _describe(value):
    """How a JSON value reads in a message: its type, and short text for strings."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f"the string {json.dumps(value[:40])}"
    if isinstance(value, (int, float)):
        return repr(value)
    return "an object" if isinstance(value, dict) else "a list"


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_context(path, context):
    if not isinstance(context, dict):
        raise InputError(f"{path}: \"context\" is {_describe(context)}, not an object")
    for field in CONTEXT_FIELDS:
        if field in context and not (isinstance(context[field], str) or is_number(context[field])):
            raise InputError(f"{path}: context \"{field}\" is {_describe(context[field])}, "
                             "not a string or number")
    if "copy_ceiling_GBps" in context:
        try:
            ceiling = float(context["copy_ceiling_GBps"])
        except ValueError:
            ceiling = math.nan
        if not ceiling > 0:
            raise InputError(f"{path}: context \"copy_ceiling_GBps\" is "
                             f"{_describe(context['copy_ceiling_GBps'])}, not a positive number")


def _check_row(path, index, row):
    """Raises InputError naming the row and field unless every field the tools read is usable."""
    where = f"{path}: benchmark row {index + 1}"
    if not isinstance(row, dict):
        raise InputError(f"{where} is {_describe(row)}, not an object")
    for field in ("name", "run_name", "run_type", "label", "error_message", "time_unit"):
        if field in row and not isinstance(row[field], str):
            raise InputError(f"{where}: \"{field}\" is {_describe(row[field])}, not a string")
    if "name" not in row:
        raise InputError(f"{where} has no \"name\"")
    where = f"{path}: {row['name']}"
    if "error_occurred" in row and not isinstance(row["error_occurred"], bool):
        raise InputError(f"{where}: \"error_occurred\" is {_describe(row['error_occurred'])}, "
                         "not true or false")
    if row.get("error_occurred"):
        return  # a failed benchmark: its times are placeholders
    if row.get("time_unit", "ns") not in _UNITS:
        raise InputError(f"{where}: time_unit {json.dumps(row['time_unit'])} is not one of "
                         f"{', '.join(_UNITS)}")
    aggregate = row.get("run_type", "iteration") != "iteration"
    for field in ("real_time", "cpu_time"):
        if field not in row:
            if field == "real_time" and not aggregate:
                raise InputError(f"{where} has no real_time")
            continue
        value = row[field]
        if not is_number(value):
            raise InputError(f"{where}: {field} is {_describe(value)}, not a number")
        # A repetition's time must be a time: the tools divide by it and take ratios of it.
        if field == "real_time" and not aggregate and not (math.isfinite(value) and value > 0):
            raise InputError(f"{where}: real_time is {_describe(value)}, not a positive time")
    for counter in [c for c in row if c in COUNTERS or c.endswith("_error")]:
        if not is_number(row[counter]):
            raise InputError(f"{where}: counter {counter} is {_describe(row[counter])}, not a number")


def read(path):
    """The file as {"context": {...}, "benchmarks": [rows]}, every row checked; a file cut
    mid-write gives its complete rows (and a warning)."""
    data = _parse(path, _read_text(path))
    if not isinstance(data, dict):
        raise InputError(f"{path}: not Google Benchmark output (the top level is "
                         f"{_describe(data)}, not an object)")
    if "benchmarks" not in data:
        raise InputError(f"{path}: not Google Benchmark output (no \"benchmarks\" list)")
    if not isinstance(data["benchmarks"], list):
        raise InputError(f"{path}: not Google Benchmark output (\"benchmarks\" is "
                         f"{_describe(data['benchmarks'])}, not a list)")
    data.setdefault("context", {})
    _check_context(path, data["context"])
    # A number in a context field ("gpu": 200, "cuda_toolkit": 13.0) is taken as its text, here,
    # once: every tool then sorts, joins and formats the fields as the strings cubench writes.
    for field in CONTEXT_FIELDS:
        if field in data["context"] and not isinstance(data["context"][field], str):
            data["context"][field] = str(data["context"][field])
    for index, row in enumerate(data["benchmarks"]):
        _check_row(path, index, row)
    if not any(is_iteration(row) for row in data["benchmarks"]):
        raise InputError(f"{path}: no benchmark results in it (no iteration rows: aggregates only "
                         "or none; run with --benchmark_report_aggregates_only=false)")
    return data


# --- from rows to results -------------------------------------------------------------------------

def is_iteration(row):
    return row.get("run_type", "iteration") == "iteration"


def run_name(row):
    return row.get("run_name", row["name"])


def renamed(name, rename):
    """name with each (regex, replacement) of rename applied in turn."""
    for pattern, replacement in rename:
        try:
            name = re.sub(pattern, replacement, name)
        except re.error as e:
            raise InputError(f"rename '{pattern}': not a valid regex or replacement: {e}")
    return name


def load(path, rename=()):
    """Returns (context, {name: Result}); rename is [(regex, replacement)] applied to names."""
    data = read(path)
    results, raw_name_of = {}, {}
    for row in filter(is_iteration, data["benchmarks"]):  # aggregates are recomputed
        raw = run_name(row)
        name = renamed(raw, rename)
        if raw_name_of.setdefault(name, raw) != raw:  # two benchmarks' samples must never mix
            raise InputError(f"{path}: renaming maps both {raw_name_of[name]} and {raw} onto {name}")
        r = results.setdefault(name, Result(name))
        if row.get("error_occurred"):
            r.error = row.get("error_message", "error")
            continue
        r.times.append(float(row["real_time"]) * _UNITS[row.get("time_unit", "ns")])
        r.label = row.get("label", r.label)
        for c in COUNTERS + tuple(k for k in row if k.endswith("_error")):
            if c in row:
                r.counters.setdefault(c, []).append(float(row[c]))
    return data["context"], results


def label_of(path, context):
    """A column name that says what stack made the file."""
    if context.get("framework"):
        return f"{context['framework']} {context.get('torch', '')}".strip()
    toolkit = context.get("cuda_toolkit")
    label = f"CUDA {toolkit} (cuBLAS {context.get('cublas', '?')})" if toolkit else path
    if context.get("processes"):  # merged by tools/merge-processes: say what a sample is
        label += f", {context['processes']} processes"
    return label
