"""Reading Google Benchmark JSON (cubench's, or tools/torch_reference.py's) for the tools.

A result file becomes {run_name: Result}: the per-repetition times and counters of each benchmark,
and the file's context. Every field a tool reads is checked here, so bad input raises InputError
with one line a user can act on, never a traceback further in.

A file cut mid-write (a run killed before Google Benchmark closed its JSON, so the text ends inside
the "benchmarks" list or after it) is data: it loads with every complete row and a one-line
warning on stderr. A file that ends before its "benchmarks" list, or is not JSON, is an error.
A file whose context has "interrupted" (cubench stopped by a signal, e.g. "SIGINT", wrote what it
had finished and closed the JSON) is data too: its rows load with a one-line warning that says so.

What the numbers mean comes from the file itself: cubench writes a schema into its context
("cubench_schema", an object; JSON text in files written before cubench wrote its own: every
counter's unit and direction, every family's axes, main counter and size axis), and a row's counters are all its numeric fields that are not Google Benchmark's
own. So a counter or family no tool has seen loads, is compared and is drawn without a change
here. Files written before the schema (docs/results, tests/data, tools/torch_reference.py's) load
as they always did: every counter still loads, a family is its name without the numeric segments,
and a counter's direction comes from LEGACY_BETTER, the one list of counter names left in the tools.

What a reading uses lives beside this module: the schema (result_schema), a row's "cubench" object
and its reading from older rows (row_outcome), what a context says of its build (build_context),
the JSON values' checks (json_values) and the warnings (tool_warnings).
"""
import json
import math
import re
import statistics

from .build_context import not_built_of
from .input_error import InputError
from .json_values import describe, is_number
from .result_schema import GBENCH_FIELDS, LEGACY_BETTER, is_counter, schema_of
from .row_outcome import MEASURED, is_iteration, outcome, run_name
from .tool_warnings import warn


# Context fields the tools print or compute with; each must be a string or a number.
CONTEXT_FIELDS = ("framework", "torch", "cuda_toolkit", "cublas", "processes", "gpu", "date",
                  "copy_ceiling_GBps", "interrupted", "suite", "gpu_other_processes_at_start",
                  "cuda_runtime", "libtorch", "libtorch_cuda", "libtorch_cudnn", "torch_version",
                  "torch_cuda", "torch_dir", "cpu_model")


class Result:
    def __init__(self, name, run_name=None):
        self.name = name         # as the tool shows it (after any --rename)
        self.run_name = name if run_name is None else run_name  # as the file has it
        self.times = []          # real_time per repetition, in microseconds
        self.clocks = []         # the sm_clock_MHz of each of those repetitions (NaN: not carried)
        self.counters = {}       # counter -> [value per repetition]
        self.label = ""
        # What the row is and how it ended (its "cubench" object, or legacy_outcome's reading):
        self.family = ""
        self.axis_values = {}    # axis -> its value, typed as the schema declares it
        self.status = MEASURED   # one of STATUSES: any repetition not measured makes the row so
        self.reason = ""         # why it was not measured, without the row's name
        self.notes = []          # [{"kind", "text", its own fields}]
        # Google Benchmark's message of a row not measured (error_message or skip_message), whole
        # as the file holds it, for the tools that show it; None for a measured row.
        self.message = None

    @property
    def error(self):
        """The message of a row not measured (readers from before status: the claims table)."""
        return self.message

    def measured(self):
        """Whether the row was timed: measured, with its times."""
        return self.status == MEASURED and bool(self.times)

    def median_time(self):
        return statistics.median(self.times) if self.times else math.nan

    def median(self, counter):
        values = [v for v in self.counters.get(counter, []) if not math.isnan(v)]
        return statistics.median(values) if values else math.nan

    def mcycles(self):
        """Median over the samples of time x SM clock, in millions of cycles (us x MHz = cycles):
        the work a sample took with the clock it ran at taken out. Each sample with its own clock
        (a merged file's sample is a process, each with its clock); NaN where none carries one."""
        cycles = [t * c * 1e-6 for t, c in zip(self.times, self.clocks) if not math.isnan(c)]
        return statistics.median(cycles) if cycles else math.nan

    def stdev(self, counter=None):
        values = self.times if counter is None else self.counters.get(counter, [])
        return statistics.stdev(values) if len(values) > 1 else 0.0


# Microseconds per unit of a row's time_unit: the tools hold every time in microseconds.
US_PER_UNIT = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


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


def _check_context(path, context):
    if not isinstance(context, dict):
        raise InputError(f"{path}: \"context\" is {describe(context)}, not an object")
    for field in CONTEXT_FIELDS:
        if field in context and not (isinstance(context[field], str) or is_number(context[field])):
            raise InputError(f"{path}: context \"{field}\" is {describe(context[field])}, "
                             "not a string or number")
    if "copy_ceiling_GBps" in context:
        try:
            ceiling = float(context["copy_ceiling_GBps"])
        except ValueError:
            ceiling = math.nan
        if not ceiling > 0:
            raise InputError(f"{path}: context \"copy_ceiling_GBps\" is "
                             f"{describe(context['copy_ceiling_GBps'])}, not a positive number")
    not_built_of(context, path)
    return schema_of(context, path)


def _check_row(path, index, row, schema):
    """Raises InputError naming the row and field unless every field the tools read is usable."""
    where = f"{path}: benchmark row {index + 1}"
    if not isinstance(row, dict):
        raise InputError(f"{where} is {describe(row)}, not an object")
    for field in ("name", "run_name", "run_type", "label", "error_message", "skip_message", "time_unit"):
        if field in row and not isinstance(row[field], str):
            raise InputError(f"{where}: \"{field}\" is {describe(row[field])}, not a string")
    if "name" not in row:
        raise InputError(f"{where} has no \"name\"")
    for field in ("name", "run_name"):
        if field in row and NOT_IN_A_NAME.search(row[field]):
            raise InputError(f"{where}: its {field} {json.dumps(row[field][:60])} holds '|' or a control "
                             "character (a line break): not a benchmark name, and no table could show it")
    where = f"{path}: {row['name']}"
    for field in ("error_occurred", "skipped"):
        if field in row and not isinstance(row[field], bool):
            raise InputError(f"{where}: \"{field}\" is {describe(row[field])}, not true or false")
    if outcome(row, schema, where).status != MEASURED:
        return  # failed or skipped: its times are placeholders
    if row.get("time_unit", "ns") not in US_PER_UNIT:
        raise InputError(f"{where}: time_unit {json.dumps(row['time_unit'])} is not one of "
                         f"{', '.join(US_PER_UNIT)}")
    aggregate = row.get("run_type", "iteration") != "iteration"
    for field in ("real_time", "cpu_time"):
        if field not in row:
            if field == "real_time" and not aggregate:
                raise InputError(f"{where} has no real_time")
            continue
        value = row[field]
        if not is_number(value):
            raise InputError(f"{where}: {field} is {describe(value)}, not a number")
        # A repetition's time must be a time: the tools divide by it and take ratios of it (and
        # times its clock: 1e308 us gives infinite cycles).
        if field == "real_time" and not aggregate and not (math.isfinite(value) and value > 0):
            raise InputError(f"{where}: real_time is {describe(value)}, not a positive time")
        if (field == "real_time" and not aggregate
                and value * US_PER_UNIT[row.get("time_unit", "ns")] > MAX_TIME_US):
            raise InputError(f"{where}: real_time is {value:g} {row.get('time_unit', 'ns')}, over "
                             f"{MAX_TIME_US / 86400e6:.3g} days: not the time of one run")
    # The counters the verdict rule and the cycles read must be what they say: a spread or an
    # interval is a finite share at least 0, a clock a finite frequency above 0.
    for field, positive in CHECKED_COUNTERS.items():
        value = row.get(field) if not aggregate else None  # an aggregate's cv of a cv may be NaN
        if is_number(value) and not (math.isfinite(value) and (value > 0 if positive else value >= 0)):
            what = "a clock above 0 MHz" if positive else "a finite share, 0 or more"
            raise InputError(f"{where}: {field} is {describe(value)}, not {what}")
    # Every number that is not Google Benchmark's is a counter. A field that is not a number is
    # wrong where it names a counter: one the file's schema declares or, for a file without one,
    # one the tools know; any other is not a counter (a newer Google Benchmark's text field).
    for field, value in row.items():
        if field in GBENCH_FIELDS or is_number(value):
            continue
        known = field in schema.counters if schema is not None else (
            field in LEGACY_BETTER or field.endswith("_error"))
        if known:
            raise InputError(f"{where}: counter {field} is {describe(value)}, not a number")


# No repetition of a row runs this long (11.6 days): a time over it is not a time.
MAX_TIME_US = 1e12
# Counter -> whether it must be above 0 (else 0 or more): those the verdict rule and the cycles
# read, whose bad value would change a verdict unseen.
CHECKED_COUNTERS = {"sample_cv": False, "time_ci_pct": False, "samples": False, "sm_clock_MHz": True}
# What a benchmark name never holds: a table's column separator, or a control character.
NOT_IN_A_NAME = re.compile(r"[|\x00-\x1f\x7f]")


def _check_repeats(path, rows):
    """InputError where one row's repetition is in the file twice (the same name and
    repetition_index): every tool would count its samples twice (a merge, 8 samples for 4
    processes), and its verdict would rest on copies."""
    seen = set()
    for row in filter(is_iteration, rows):
        if "repetition_index" not in row:
            continue
        key = (run_name(row), row["repetition_index"])
        if key in seen:
            raise InputError(f"{path}: {key[0]}: repetition {key[1]} is in the file twice (a row "
                             "written twice, or two files joined): each row once, please")
        seen.add(key)


def read(path):
    """The file as {"context": {...}, "benchmarks": [rows]}, every row checked; a file cut
    mid-write gives its complete rows (and a warning)."""
    data = _parse(path, _read_text(path))
    if not isinstance(data, dict):
        raise InputError(f"{path}: not Google Benchmark output (the top level is "
                         f"{describe(data)}, not an object)")
    if "benchmarks" not in data:
        raise InputError(f"{path}: not Google Benchmark output (no \"benchmarks\" list)")
    if not isinstance(data["benchmarks"], list):
        raise InputError(f"{path}: not Google Benchmark output (\"benchmarks\" is "
                         f"{describe(data['benchmarks'])}, not a list)")
    data.setdefault("context", {})
    schema = _check_context(path, data["context"])
    # A number in a context field ("gpu": 200, "cuda_toolkit": 13.0) is taken as its text, here,
    # once: every tool then sorts, joins and formats the fields as the strings cubench writes.
    for field in CONTEXT_FIELDS:
        if field in data["context"] and not isinstance(data["context"][field], str):
            data["context"][field] = str(data["context"][field])
    for index, row in enumerate(data["benchmarks"]):
        _check_row(path, index, row, schema)
    _check_repeats(path, data["benchmarks"])
    if not any(is_iteration(row) for row in data["benchmarks"]):
        raise InputError(f"{path}: no benchmark results in it (no iteration rows: aggregates only "
                         "or none; run with --benchmark_report_aggregates_only=false)")
    if "interrupted" in data["context"]:
        # Not an error: what the run finished is measured as well as in a whole run; the user
        # should still know the file is not the whole suite (its missing rows are not failures).
        n = len(data["benchmarks"])
        warn(f"{path}: from a run interrupted by {data['context']['interrupted']}; loaded {n} "
             f"finished row{'s' if n != 1 else ''}")
    return data


def renamed(name, rename):
    """name with each (regex, replacement) of rename applied in turn."""
    for pattern, replacement in rename:
        try:
            name = re.sub(pattern, replacement, name)
        except re.error as e:
            raise InputError(f"rename '{pattern}': not a valid regex or replacement: {e}")
    return name


def load(path, rename=()):
    """Returns (context, {name: Result}); rename is [(regex, replacement)] applied to names. Every
    counter of a row loads (see is_counter); schema_of(context) says what they mean. What a row
    is and how it ended (family, axis values, status, reason, notes) is its "cubench" object's
    in a version-3 file, legacy_outcome's reading of its name, label and message before."""
    data = read(path)
    schema = schema_of(data["context"], path)
    results, raw_name_of = {}, {}
    for row in filter(is_iteration, data["benchmarks"]):  # aggregates are recomputed
        raw = run_name(row)
        name = renamed(raw, rename)
        if raw_name_of.setdefault(name, raw) != raw:  # two benchmarks' samples must never mix
            raise InputError(f"{path}: renaming maps both {raw_name_of[name]} and {raw} onto {name}")
        r = results.setdefault(name, Result(name, raw))
        o = outcome(row, schema)
        r.family, r.axis_values = o.family, o.axis_values
        if o.status != MEASURED:
            r.status, r.reason, r.notes = o.status, o.reason, o.notes
            r.message = row.get("error_message") or row.get("skip_message") or o.reason or o.status
            continue
        r.times.append(float(row["real_time"]) * US_PER_UNIT[row.get("time_unit", "ns")])
        clock = row.get("sm_clock_MHz")
        r.clocks.append(float(clock) if is_number(clock) and clock > 0 else math.nan)
        if r.status == MEASURED:  # a repetition not measured keeps its notes for the row
            r.label, r.notes = row.get("label", r.label), o.notes
        for field, value in row.items():
            if is_counter(field, value):
                r.counters.setdefault(field, []).append(float(value))
    return data["context"], results
