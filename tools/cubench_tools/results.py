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
"""
import contextlib
import json
import math
import os
import re
import statistics
import sys

# Google Benchmark's own fields of a row (1.6 to 1.9): any other numeric field is a counter.
GBENCH_FIELDS = frozenset((
    "name", "run_name", "run_type", "repetitions", "repetition_index", "threads", "iterations",
    "real_time", "cpu_time", "time_unit", "label", "error_occurred", "error_message", "skipped",
    "skip_message", "family_index", "per_family_instance_index", "aggregate_name",
    "aggregate_unit", "big_o", "rms"))
# For files WITHOUT a schema only (docs/results, tests/data, tools/torch_reference.py's): which way
# is better for the counters those files carry. A file with a schema declares every counter it
# holds, so this table is never read for it. It is the only list of counter names the tools keep;
# names ending in "_error" (the checks' errors) are "lower" as well.
LEGACY_BETTER = {
    "TFLOPS": "higher", "GBps": "higher", "busbw_GBps": "higher", "algbw_GBps": "higher",
    "images_per_s": "higher", "pct_peak": "higher", "pct_copy_ceiling": "higher",
    "peak_mem_bytes": "lower", "used_mem_bytes": "lower", "peak_allocated_bytes": "lower",
    "peak_reserved_bytes": "lower", "inactive_split_bytes": "lower", "fragmentation": "lower",
    "first_call_ms": "lower", "sample_cv": "lower", "throttled_samples": "lower",
    "first_forward_ms": "lower",
    "max_error_ratio": "lower", "model_bytes": "none", "allocated_at_start_bytes": "none",
    "sm_clock_MHz": "none", "nvml_sm_clock_MHz": "none", "gpus": "none", "runs_per_sample": "none"}
BETTER = ("higher", "lower", "none")
AXIS_KINDS = ("int", "pow2", "string", "dtype")  # dtype: an element type, read as its name
SCHEMA_FIELD = "cubench_schema"
SCHEMA_VERSION = 3
# 2 added axes of kind "dtype"; 3 a "cubench" object in every row (docs/result-file.md); 1 and 2
# are read as they were, their rows' objects made by legacy_outcome().
SCHEMA_VERSIONS = (1, 2, 3)
ROW_FIELD = "cubench"  # a version-3 row's object: what the row is and how it ended
MEASURED = "measured"
STATUSES = (MEASURED, "not_run", "not_supported", "out_of_memory", "wrong_result", "error")
SKIPS = ("not_run", "not_supported")  # Google Benchmark's skips: not run here, not failed
# Context field: JSON text {"<library>": "<why>"}, the optional libraries the build left its
# families out for (cmake/OptionalSources.cmake); a family's schema entry names its "library".
NOT_BUILT_FIELD = "not_built"
# Context fields the tools print or compute with; each must be a string or a number.
CONTEXT_FIELDS = ("framework", "torch", "cuda_toolkit", "cublas", "processes", "gpu", "date",
                  "copy_ceiling_GBps", "interrupted", "suite", "gpu_other_processes_at_start",
                  "cuda_runtime", "libtorch", "libtorch_cuda", "libtorch_cudnn", "torch_version",
                  "torch_cuda", "torch_dir", "cpu_model")


class InputError(Exception):
    """Malformed or mismatched input: the message is the whole story."""


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


# --- the schema: what the counters and names of a file mean ---------------------------------------

class Counter:
    """A counter as the schema declares it: unit ("" for a ratio or count), which way is better
    ("higher", "lower", or "none" for what only informs: clocks, runs per sample)."""

    def __init__(self, name, unit="", better="none", description=""):
        self.name, self.unit, self.better, self.description = name, unit, better, description


class Axis:
    def __init__(self, name, kind):
        self.name, self.kind = name, kind  # kind: "int", "pow2" (an int, a power of two), "string" or "dtype"


class Family:
    """A benchmark family: its run names are <name>/<axis value>/.../manual_time, values in the
    order of axes. main_counter "" means the time is the main figure (lower is better)."""

    def __init__(self, name, axes=(), main_counter="", size_axis="", description="", timer="",
                 counters=(), library=""):
        self.name, self.axes, self.main_counter, self.size_axis = name, tuple(axes), main_counter, size_axis
        self.description, self.timer, self.counters = description, timer, tuple(counters)
        self.library = library  # the optional library its source needs ("nccl"), "" for none

    def axis(self, name):
        return next((a for a in self.axes if a.name == name), None)


class Schema:
    """The counters and families declared by one or more files (the first to declare a name
    wins)."""

    def __init__(self, counters=None, families=None, version=None):
        self.counters = dict(counters or {})  # name -> Counter
        self.families = dict(families or {})  # name -> Family
        self.version = version  # the file's, one of SCHEMA_VERSIONS; None for a merged Schema

    def family(self, run_name):
        """The Family a run name belongs to, or None (the name is not of a declared family)."""
        name, _ = family_and_axes(run_name, self)
        return self.families.get(name)


def _schema_error(path, what):
    return InputError(f"{path}: {SCHEMA_FIELD}: {what}")


def _field(prefix, where, obj, key, kind, required=True, default=None):
    """obj[key] checked to be of kind ("string", "list", "object"); a message begins with prefix
    (the file, and what of it is read), and where names obj."""
    if key not in obj:
        if required:
            raise InputError(f"{prefix}: {where} has no \"{key}\"")
        return default
    value = obj[key]
    ok = {"string": isinstance(value, str), "list": isinstance(value, list),
          "object": isinstance(value, dict)}[kind]
    if not ok:
        article = "an" if kind == "object" else "a"
        raise InputError(f"{prefix}: {where}: \"{key}\" is {_describe(value)}, not {article} {kind}")
    return value


def _choice(prefix, where, obj, key, choices):
    value = _field(prefix, where, obj, key, "string")
    if value not in choices:
        raise InputError(f"{prefix}: {where}: \"{key}\" is {_describe(value)}, not "
                         f"{', '.join(choices[:-1])} or {choices[-1]}")
    return value


def schema_document(value, path="result file"):
    """A context's "cubench_schema" as a dict: the object cubench writes, or the JSON text files
    written before cubench wrote its own carried. InputError where it is neither."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        raise InputError(f"{path}: context \"{SCHEMA_FIELD}\" is {_describe(value)}, not an object "
                         "(or JSON text)")
    try:
        return json.loads(value)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: context \"{SCHEMA_FIELD}\" is not JSON ({e.msg} at line "
                         f"{e.lineno} column {e.colno})")


def parse_schema(value, path):
    """The Schema in a file's context["cubench_schema"] (an object, or JSON text: schema_document);
    InputError naming the file and the first thing wrong unless it has the documented shape: every
    field the tools read there, of its type, and each name it refers to declared. Fields beyond
    those are let be (a later cubench may add some)."""
    key = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if key in _parsed_schemas:
        return _parsed_schemas[key]
    doc = schema_document(value, path)
    text = key
    if not isinstance(doc, dict):
        raise _schema_error(path, f"the schema is {_describe(doc)}, not an object")
    prefix = f"{path}: {SCHEMA_FIELD}"
    version = doc.get("version")
    if version not in SCHEMA_VERSIONS or isinstance(version, bool):
        said = "missing" if "version" not in doc else _describe(version)
        raise _schema_error(path, f"\"version\" is {said}, not {', '.join(map(str, SCHEMA_VERSIONS[:-1]))} "
                                  f"or {SCHEMA_VERSIONS[-1]} (the versions these tools read)")
    counters = {}
    for name, c in _field(prefix, "the schema", doc, "counters", "object").items():
        where = f"counter \"{name}\""
        if not isinstance(c, dict):
            raise _schema_error(path, f"{where} is {_describe(c)}, not an object")
        counters[name] = Counter(name, _field(prefix, where, c, "unit", "string"),
                                 _choice(prefix, where, c, "better", BETTER),
                                 _field(prefix, where, c, "description", "string", False, ""))
    families = {}
    for name, f in _field(prefix, "the schema", doc, "families", "object").items():
        where = f"family \"{name}\""
        if not name or name.startswith("/") or name.endswith("/"):
            raise _schema_error(path, f"{where}: a family name is not empty and neither starts "
                                      "nor ends with /")
        if not isinstance(f, dict):
            raise _schema_error(path, f"{where} is {_describe(f)}, not an object")
        axes = []
        for i, a in enumerate(_field(prefix, where, f, "axes", "list")):
            at = f"{where}, axis {i + 1}"
            if not isinstance(a, dict):
                raise _schema_error(path, f"{at} is {_describe(a)}, not an object")
            axis = Axis(_field(prefix, at, a, "name", "string"), _choice(prefix, at, a, "kind", AXIS_KINDS))
            if not axis.name or any(axis.name == b.name for b in axes):
                raise _schema_error(path, f"{at}: the name {_describe(axis.name)} is empty or "
                                          "another axis's")
            axes.append(axis)
        family = Family(name, axes, _field(prefix, where, f, "main_counter", "string"),
                        _field(prefix, where, f, "size_axis", "string"),
                        _field(prefix, where, f, "description", "string", False, ""),
                        _field(prefix, where, f, "timer", "string", False, ""),
                        _field(prefix, where, f, "counters", "list", False, []),
                        _field(prefix, where, f, "library", "string", False, ""))
        for counter in family.counters:
            if not isinstance(counter, str) or counter not in counters:
                raise _schema_error(path, f"{where}: its counter {_describe(counter)} is not one "
                                          "the schema's \"counters\" declares")
        if family.main_counter and family.main_counter not in counters:
            raise _schema_error(path, f"{where}: main_counter \"{family.main_counter}\" is not "
                                      "one the schema's \"counters\" declares")
        size = family.axis(family.size_axis)
        if family.size_axis and size is None:
            raise _schema_error(path, f"{where}: size_axis \"{family.size_axis}\" is not one of "
                                      "its axes")
        if size is not None and size.kind not in ("int", "pow2"):
            raise _schema_error(path, f"{where}: size_axis \"{size.name}\" is a {size.kind} axis, "
                                      "not int or pow2")
        families[name] = family
    schema = _parsed_schemas[text] = Schema(counters, families, version)
    return schema


_parsed_schemas = {}  # schema text -> Schema: every file of one build carries the same text


def schema_of(context, path="result file"):
    """The Schema of a file's context, or None for a file written before cubench wrote one."""
    if SCHEMA_FIELD not in context:
        return None
    return parse_schema(context[SCHEMA_FIELD], path)


def merged_schema(contexts):
    """One Schema for files compared or drawn together: the first file to declare a counter or a
    family wins. None when no file has a schema (every tool then reads names as it always did)."""
    schemas = [s for s in (schema_of(c) for c in contexts) if s is not None]
    if not schemas:
        return None
    merged = Schema()
    for s in schemas:
        for name, counter in s.counters.items():
            merged.counters.setdefault(name, counter)
        for name, family in s.families.items():
            merged.families.setdefault(name, family)
    return merged


def _axis_values(family, values):
    """{axis: value} when values (the name's segments after the family) fit the family's axes:
    as many, and an integer for an int or pow2 axis; else None."""
    if len(values) != len(family.axes):
        return None
    out = {}
    for axis, value in zip(family.axes, values):
        if axis.kind in ("string", "dtype"):
            out[axis.name] = value
        elif re.fullmatch(r"-?[0-9]+", value):
            out[axis.name] = int(value)
        else:
            return None
    return out


def family_and_axes(name, schema=None):
    """(family, {axis: value}) of a run name.

    With a schema: the longest declared family that the name (less Google Benchmark's
    "/manual_time") equals or starts with followed by "/", whose axes the rest of the name fits
    (as many values; numbers where the axis is int or pow2): "gemm/bf16/8192/12288/4096/manual_time"
    -> ("gemm", {"dtype": "bf16", "m": 8192, "n": 12288, "k": 4096}).
    Without one, or for a name no declared family fits (a file written before the schema, or a
    name --rename rewrote): the name without its numeric segments, and no axes, the rule the
    tools always had: "sigmoid/vectorized/fp16/10000000/cold" -> ("sigmoid/vectorized/fp16/cold", {}).
    """
    base = name[:-len("/manual_time")] if name.endswith("/manual_time") else name
    best = None
    for family in (schema.families.values() if schema is not None else ()):
        if base == family.name:
            rest = []
        elif base.startswith(family.name + "/"):
            rest = base[len(family.name) + 1:].split("/")
        else:
            continue
        values = _axis_values(family, rest)
        if values is not None and (best is None or len(family.name) > len(best[0])):
            best = (family.name, values)
    if best is not None:
        return best
    return "/".join(part for part in base.split("/") if not re.fullmatch(r"[0-9]+", part)), {}


# --- a row's "cubench" object: what it is and how it ended ---------------------------------------

def _pre_schema(families):
    return Schema(families={name: Family(name, [Axis(*a.split(":")) for a in axes.split()])
                            for name, axes in families.items()})


# The families of the names cubench wrote before it wrote a schema, with their axes as its schema
# later declared them (tools/plot draws them by hand). A file without a schema has its rows' axis
# values read by these; its families stay the names less their numbers, as the tools always had.
PRE_SCHEMA = _pre_schema({
    "gemm": "dtype:dtype m:int n:int k:int", "gemm_autotune": "dtype:dtype m:int n:int k:int",
    "sigmoid": "variant:string dtype:dtype n:int cache:string",
    "allreduce": "dtype:dtype bytes:pow2 placement:string", "svd": "algo:string dtype:dtype n:int",
    "resnet50_train": "precision:string format:string res:int batch:int",
    "resnet50_train_graph": "precision:string format:string res:int batch:int",
    "transformer_fwd": "mode:string attention:string batch:int"})


class Outcome:
    """A row's "cubench" object (docs/result-file.md): family, axis_values, status, reason and
    notes, each a note {"kind", "text", its own fields}."""

    def __init__(self, family, axis_values, status=MEASURED, reason="", notes=()):
        self.family, self.axis_values, self.status = family, axis_values, status
        self.reason, self.notes = reason, list(notes)


def outcome(row, schema, where="result file"):
    """The row's Outcome: a version-3 row's "cubench" object, checked (InputError naming where,
    the file and row, and what is wrong), or what legacy_outcome reads from an older row."""
    if schema is not None and schema.version == 3:
        return _checked_outcome(row, schema, where)
    return legacy_outcome(row, schema)


_AXIS_VALUE = {"int": "an integer", "pow2": "a power of two", "string": "a string",
               "dtype": "a string (the element type's name)"}


def _fits(kind, value):
    if kind in ("string", "dtype"):
        return isinstance(value, str)
    whole = isinstance(value, int) and not isinstance(value, bool)
    return whole and (kind == "int" or (value > 0 and value & (value - 1) == 0))


def _checked_outcome(row, schema, where):
    if ROW_FIELD not in row:
        raise InputError(f"{where} has no \"{ROW_FIELD}\" object (schema version 3 gives every row one)")
    obj = row[ROW_FIELD]
    if not isinstance(obj, dict):
        raise InputError(f"{where}: \"{ROW_FIELD}\" is {_describe(obj)}, not an object")
    family = _field(where, ROW_FIELD, obj, "family", "string")
    spec = schema.families.get(family)
    if spec is None:
        raise InputError(f"{where}: {ROW_FIELD}: \"family\" {json.dumps(family)} is not one the "
                         "schema declares")
    status = _choice(where, ROW_FIELD, obj, "status", STATUSES)
    reason = _field(where, ROW_FIELD, obj, "reason", "string", False, "")
    values = _field(where, ROW_FIELD, obj, "axis_values", "object")
    if sorted(values) != sorted(a.name for a in spec.axes):
        raise InputError(f"{where}: {ROW_FIELD}: \"axis_values\" has {', '.join(values) or 'none'}, "
                         f"not the axes of {family}: {', '.join(a.name for a in spec.axes) or 'none'}")
    for axis in spec.axes:
        if not _fits(axis.kind, values[axis.name]):
            raise InputError(f"{where}: {ROW_FIELD}: axis \"{axis.name}\" is "
                             f"{_describe(values[axis.name])}, not {_AXIS_VALUE[axis.kind]}")
    notes = _field(where, ROW_FIELD, obj, "notes", "list", False, [])
    for i, note in enumerate(notes, 1):
        at = f"{ROW_FIELD} note {i}"
        if not isinstance(note, dict):
            raise InputError(f"{where}: {at} is {_describe(note)}, not an object")
        _field(where, at, note, "kind", "string")
        _field(where, at, note, "text", "string")
    return Outcome(family, values, status, reason, notes)


# The words a pre-version-3 cubench's message gave a row it did not time, after "<name>: "
# (fixtures/detail/run/runner.cpp's describe_failure, gpu_fit.cpp's does-not-fit-now).
_LEGACY_FAILURE = re.compile(r"(not run|not supported here, not timed|inaccurate here, reported, "
                             r"not timed|wrong result, not timed)(?:: |$)")
_LEGACY_STATUS = {"not run": "not_run", "not supported here, not timed": "not_supported",
                  "inaccurate here, reported, not timed": "wrong_result",
                  "wrong result, not timed": "wrong_result"}
_N = r"[0-9.]+"  # a number in a label's words
# A pre-version-3 label's parts ("; "-separated) that the harness wrote: (kind, the part's words,
# fields that go with them); the words' named groups are the note's fields, numbers as numbers. A
# part none of these reads is the family's own words (kind "case").
_LEGACY_NOTES = tuple((kind, re.compile(words), fields) for kind, words, fields in (
    ("stop", rf"stopped: noise (?P<noise_pct>{_N})% < (?P<target_pct>{_N})% after (?P<samples>\d+) samples?",
     {"rule": "noise_reached"}),
    ("stop", rf"stopped: noise settled at (?P<noise_pct>{_N})% \(target (?P<target_pct>{_N})%\) after "
             r"(?P<samples>\d+) samples?", {"rule": "noise_settled"}),
    ("stop", rf"stopped: timeout (?P<timeout_s>{_N})s: noise (?:unknown|(?P<noise_pct>{_N})% \(target "
             rf"(?P<target_pct>{_N})%\)) after (?P<samples>\d+) samples?", {"rule": "timeout"}),
    ("stop", r"stopped: .*", {}),  # an older cubench's words
    ("kernels", r"kernels not named: .*", {"named": False}),
    ("kernels", r"kernels?: .*|\d+ CUDA graph launch(?:es)?|no kernel launched", {"named": True}),
    ("power_capped", r"power-capped(?: in (?:<1|(?P<pct>\d+))% of polls(?: \(software cap "
                     r"(?P<cap_W>\d+) W\))?)?.*", {}),
    ("throttled", r"THROTTLED(?:: thermal or hardware slowdown in (?:<1|(?P<pct>\d+))% of polls)?.*", {}),
    ("sync_boost", r"sync boost in (?:<1|(?P<pct>\d+))% of polls", {}),
    ("busy_gpu", r"BUSY GPU(?:: (?P<processes>\d+) other compute process(?:es)?)?.*", {}),
    ("slow_clock", r"slow clock(?:: (?P<samples>\d+) of (?P<of>\d+) samples)?.*", {}),
    ("blocking_timeout", r"BLOCKING KERNEL TIMED OUT(?: in (?P<samples>\d+) samples)?.*", {}),
    ("l2_flushed", r"L2 flushed", {}),
    ("runs_per_sample", r"(?P<runs>\d+) runs per sample", {}),
    ("queued", r"queued behind a blocking kernel", {})))


def _number(text):
    return int(text) if text.isdigit() else float(text)


def notes_of_label(label):
    """The notes a pre-version-3 label held, read from its "; "-separated parts: the harness's
    by their words (_LEGACY_NOTES), every run of other parts one "case" note (the family's own
    label, which may hold "; ")."""
    notes = []
    for part in label.split("; ") if label else ():
        for kind, words, fields in _LEGACY_NOTES:
            match = words.fullmatch(part)
            if match:
                read = {k: _number(v) for k, v in match.groupdict().items() if v is not None}
                notes.append({"kind": kind, **fields, **read, "text": part})
                break
        else:
            if notes and notes[-1]["kind"] == "case":
                notes[-1]["text"] += "; " + part
            else:
                notes.append({"kind": "case", "text": part})
    return notes


def legacy_outcome(row, schema):
    """The Outcome of a row of a file before schema version 3, read as the tools always read
    one: family and axis values from its name (family_and_axes; in a file without a schema, the
    axis values PRE_SCHEMA reads), status and reason from Google Benchmark's error or skip and
    the words of cubench's message (_LEGACY_FAILURE, "out of memory"), notes from its label."""
    name = run_name(row)
    family, values = family_and_axes(name, schema)
    if schema is None:
        values = family_and_axes(name, PRE_SCHEMA)[1]
    if not (row.get("error_occurred") or row.get("skipped")):
        return Outcome(family, values, notes=notes_of_label(row.get("label", "")))
    message = row.get("error_message" if row.get("error_occurred") else "skip_message", "")
    base = name[:-len("/manual_time")] if name.endswith("/manual_time") else name
    reason = message[len(base) + 2:] if message.startswith(base + ": ") else message
    words = _LEGACY_FAILURE.match(reason)
    notes = []
    if words:
        status, reason = _LEGACY_STATUS[words.group(1)], reason[words.end():]
        if status == "wrong_result":
            notes.append({"kind": "failed_check", "known_inaccuracy": words.group(1).startswith("inaccurate"),
                          "text": ""})
    elif "out of memory" in reason:
        status = "out_of_memory"
    else:
        status = "not_supported" if row.get("skipped") else "error"
    return Outcome(family, values, status, reason, notes)


def better(counter, schema=None):
    """Which way is better for a counter: "higher", "lower" or "none" (only informs). The schema
    says so for every counter of a file that has one; LEGACY_BETTER for the files that have none."""
    if schema is not None and counter in schema.counters:
        return schema.counters[counter].better
    if counter in LEGACY_BETTER:
        return LEGACY_BETTER[counter]
    return "lower" if counter.endswith("_error") else "none"


def unit(counter, schema=None):
    """The counter's unit from the schema; "" where it declares none or there is no schema."""
    declared = schema.counters.get(counter) if schema is not None else None
    return declared.unit if declared is not None else ""


def is_counter(field, value):
    """Whether a row's field is a counter: a number that is not one of Google Benchmark's fields."""
    return field not in GBENCH_FIELDS and is_number(value)


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
    not_built_of(context, path)
    return schema_of(context, path)


def not_built_of(context, path="result file"):
    """{library: why} of a file's context["not_built"] ({} where the file has none: built before
    cubench said, or nothing left out); InputError unless it is JSON text of an object of
    strings."""
    text = context.get(NOT_BUILT_FIELD, "{}")
    where = f"{path}: context \"{NOT_BUILT_FIELD}\""
    if not isinstance(text, str):
        raise InputError(f"{where} is {_describe(text)}, not a string (JSON text)")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{where} is not JSON ({e.msg} at line {e.lineno} column {e.colno})")
    if not isinstance(doc, dict) or not all(isinstance(v, str) for v in doc.values()):
        raise InputError(f"{where} is not an object of strings ({{\"library\": \"why\"}})")
    return doc


def _check_row(path, index, row, schema):
    """Raises InputError naming the row and field unless every field the tools read is usable."""
    where = f"{path}: benchmark row {index + 1}"
    if not isinstance(row, dict):
        raise InputError(f"{where} is {_describe(row)}, not an object")
    for field in ("name", "run_name", "run_type", "label", "error_message", "skip_message", "time_unit"):
        if field in row and not isinstance(row[field], str):
            raise InputError(f"{where}: \"{field}\" is {_describe(row[field])}, not a string")
    if "name" not in row:
        raise InputError(f"{where} has no \"name\"")
    for field in ("name", "run_name"):
        if field in row and NOT_IN_A_NAME.search(row[field]):
            raise InputError(f"{where}: its {field} {json.dumps(row[field][:60])} holds '|' or a control "
                             "character (a line break): not a benchmark name, and no table could show it")
    where = f"{path}: {row['name']}"
    for field in ("error_occurred", "skipped"):
        if field in row and not isinstance(row[field], bool):
            raise InputError(f"{where}: \"{field}\" is {_describe(row[field])}, not true or false")
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
            raise InputError(f"{where}: {field} is {_describe(value)}, not a number")
        # A repetition's time must be a time: the tools divide by it and take ratios of it (and
        # times its clock: 1e308 us gives infinite cycles).
        if field == "real_time" and not aggregate and not (math.isfinite(value) and value > 0):
            raise InputError(f"{where}: real_time is {_describe(value)}, not a positive time")
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
            raise InputError(f"{where}: {field} is {_describe(value)}, not {what}")
    # Every number that is not Google Benchmark's is a counter. A field that is not a number is
    # wrong where it names a counter: one the file's schema declares or, for a file without one,
    # one the tools know; any other is not a counter (a newer Google Benchmark's text field).
    for field, value in row.items():
        if field in GBENCH_FIELDS or is_number(value):
            continue
        known = field in schema.counters if schema is not None else (
            field in LEGACY_BETTER or field.endswith("_error"))
        if known:
            raise InputError(f"{where}: counter {field} is {_describe(value)}, not a number")


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
                         f"{_describe(data)}, not an object)")
    if "benchmarks" not in data:
        raise InputError(f"{path}: not Google Benchmark output (no \"benchmarks\" list)")
    if not isinstance(data["benchmarks"], list):
        raise InputError(f"{path}: not Google Benchmark output (\"benchmarks\" is "
                         f"{_describe(data['benchmarks'])}, not a list)")
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


def label_of(path, context):
    """A column name that says what stack made the file: a LibTorch build's by its PyTorch (two
    builds of one toolkit differ there, not in the toolkit), else by its toolkit and cuBLAS."""
    if context.get("framework"):
        return f"{context['framework']} {context.get('torch', '')}".strip()
    toolkit = context.get("cuda_toolkit")
    if context.get("libtorch"):
        label = torch_label(context)
    else:
        label = f"CUDA {toolkit} (cuBLAS {context.get('cublas', '?')})" if toolkit else path
    if context.get("processes"):  # merged by tools/merge-processes: say what a sample is
        label += f", {context['processes']} processes"
    return label


# --- what a LibTorch build ran --------------------------------------------------------------------

def cudnn_text(encoded):
    """cuDNN's version as cudnnGetVersion encodes it (context "libtorch_cudnn"), as written:
    91900 -> "9.19.0" (cuDNN 9 on: major*10000), 8902 -> "8.9.2" (before: major*1000); None for
    0 or no number (a LibTorch without cuDNN)."""
    try:
        n = int(str(encoded))
    except ValueError:
        return None
    if n <= 0:
        return None
    major, rest = divmod(n, 10000) if n >= 10000 else divmod(n, 1000)
    return f"{major}.{rest // 100}.{rest % 100}"


def loaded_libraries(context):
    """{file name: real path} of the libraries the run loaded (context "loaded_libraries", JSON
    text); {} where the file has none or it is unreadable: it only refines a label."""
    try:
        value = json.loads(context.get("loaded_libraries") or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def bundled_copy(context, library):
    """The version in the file name of LibTorch's own renamed copy of library ("libcublas") that
    the run loaded (an archive's lib/libcublas-3b81d170.so.12: "12"), or None where it loaded
    none: then LibTorch used the one copy of that soname the process has, whose version cubench
    asked (context "cublas")."""
    for name, real in loaded_libraries(context).items():
        if re.fullmatch(re.escape(library) + r"-[0-9a-f]+\.so(\.[0-9.]+)?", str(name)):
            versions = [re.search(r"\.so\.([0-9.]+)$", n) for n in (os.path.basename(str(real)), name)]
            return next((m.group(1) for m in versions if m), "?")
    return None


def torch_cuda(context):
    """The CUDA a LibTorch build's PyTorch was made for: tools/run-matrix records it ("torch_cuda"),
    a version may name it ("2.5.1+cu124"), else the CUDA runtime the run loaded, which LibTorch
    shares with cubench (one soname per process)."""
    if context.get("torch_cuda"):
        return str(context["torch_cuda"])
    m = re.search(r"\+cu(\d+)(\d)\b", str(context.get("torch_version") or context.get("libtorch") or ""))
    if m:
        return f"{int(m.group(1))}.{m.group(2)}"
    return str(context.get("cuda_runtime") or context.get("cuda_toolkit") or "?")


def torch_label(context):
    """A LibTorch build's PyTorch, as run: "LibTorch 2.5.1+cu124 (CUDA 12.4, cuDNN 9.1.0, cuBLAS
    12.4.5)", "LibTorch 1.13.1 (CPU only)". The version is the install's where tools/run-matrix
    recorded it (with its +cuXYZ), else LibTorch's own; cuBLAS is the one loaded (LibTorch's
    bundled copy where it brought one)."""
    version = context.get("torch_version") or context.get("libtorch")
    if str(context.get("libtorch_cuda", "yes")).startswith("no"):
        return f"LibTorch {version} (CPU only)"
    parts = [f"CUDA {torch_cuda(context)}"]
    cudnn = cudnn_text(context.get("libtorch_cudnn", ""))
    if cudnn:
        parts.append(f"cuDNN {cudnn}")
    bundled = bundled_copy(context, "libcublas")
    parts.append(f"cuBLAS {bundled} (bundled)" if bundled else f"cuBLAS {context.get('cublas', '?')}")
    return f"LibTorch {version} ({', '.join(parts)})"


def no_gpu(context):
    """Whether the run had no GPU: cubench writes "gpu": "none (<why>)" then."""
    gpu = str(context.get("gpu", ""))
    return gpu == "none" or gpu.startswith("none (")


def ran_on(context, why=False):
    """What a file's rows ran on, for a title: its GPU; without one the CPU ("the CPU (no GPU)",
    or its name where the context has it: tools/run-matrix records "cpu_model"), never "none".
    why: a run without a GPU says cubench's reason too."""
    if not no_gpu(context):
        return str(context.get("gpu", "?"))
    cpu = f"the CPU, {context['cpu_model']}" if context.get("cpu_model") else "the CPU"
    reason = str(context.get("gpu", ""))[len("none ("):-1] if why else ""
    return f"{cpu} (no GPU{': ' + reason if reason else ''})"
