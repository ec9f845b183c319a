"""The schema of a result file (its context's cubench_schema): what its families, axes and counters
are and mean, which way a counter is better, its unit; and, for files without one, the families
and axes cubench wrote before it wrote a schema."""
import json
import re

from .input_error import InputError
from .json_values import checked_choice, checked_field, describe, is_number


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


def schema_document(value, path="result file"):
    """A context's "cubench_schema" as a dict: the object cubench writes, or the JSON text files
    written before cubench wrote its own carried. InputError where it is neither."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        raise InputError(f"{path}: context \"{SCHEMA_FIELD}\" is {describe(value)}, not an object "
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
        raise _schema_error(path, f"the schema is {describe(doc)}, not an object")
    prefix = f"{path}: {SCHEMA_FIELD}"
    version = doc.get("version")
    if version not in SCHEMA_VERSIONS or isinstance(version, bool):
        said = "missing" if "version" not in doc else describe(version)
        raise _schema_error(path, f"\"version\" is {said}, not {', '.join(map(str, SCHEMA_VERSIONS[:-1]))} "
                                  f"or {SCHEMA_VERSIONS[-1]} (the versions these tools read)")
    counters = {}
    for name, c in checked_field(prefix, "the schema", doc, "counters", "object").items():
        where = f"counter \"{name}\""
        if not isinstance(c, dict):
            raise _schema_error(path, f"{where} is {describe(c)}, not an object")
        counters[name] = Counter(name, checked_field(prefix, where, c, "unit", "string"),
                                 checked_choice(prefix, where, c, "better", BETTER),
                                 checked_field(prefix, where, c, "description", "string", False, ""))
    families = {}
    for name, f in checked_field(prefix, "the schema", doc, "families", "object").items():
        where = f"family \"{name}\""
        if not name or name.startswith("/") or name.endswith("/"):
            raise _schema_error(path, f"{where}: a family name is not empty and neither starts "
                                      "nor ends with /")
        if not isinstance(f, dict):
            raise _schema_error(path, f"{where} is {describe(f)}, not an object")
        axes = []
        for i, a in enumerate(checked_field(prefix, where, f, "axes", "list")):
            at = f"{where}, axis {i + 1}"
            if not isinstance(a, dict):
                raise _schema_error(path, f"{at} is {describe(a)}, not an object")
            axis = Axis(checked_field(prefix, at, a, "name", "string"), checked_choice(prefix, at, a, "kind", AXIS_KINDS))
            if not axis.name or any(axis.name == b.name for b in axes):
                raise _schema_error(path, f"{at}: the name {describe(axis.name)} is empty or "
                                          "another axis's")
            axes.append(axis)
        family = Family(name, axes, checked_field(prefix, where, f, "main_counter", "string"),
                        checked_field(prefix, where, f, "size_axis", "string"),
                        checked_field(prefix, where, f, "description", "string", False, ""),
                        checked_field(prefix, where, f, "timer", "string", False, ""),
                        checked_field(prefix, where, f, "counters", "list", False, []),
                        checked_field(prefix, where, f, "library", "string", False, ""))
        for counter in family.counters:
            if not isinstance(counter, str) or counter not in counters:
                raise _schema_error(path, f"{where}: its counter {describe(counter)} is not one "
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
