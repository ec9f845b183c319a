"""A row's "cubench" object (version 3): what the row is (its family and axis values) and how it
ended (measured, skipped, failed, with its notes); and the same read from an older row's name and
label (legacy_outcome)."""
import json
import re

from .input_error import InputError
from .json_values import checked_choice, checked_field, describe
from .result_schema import PRE_SCHEMA, family_and_axes


ROW_FIELD = "cubench"  # a version-3 row's object: what the row is and how it ended
MEASURED = "measured"
STATUSES = (MEASURED, "not_run", "not_supported", "out_of_memory", "wrong_result", "error")
SKIPS = ("not_run", "not_supported")  # Google Benchmark's skips: not run here, not failed


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
        raise InputError(f"{where}: \"{ROW_FIELD}\" is {describe(obj)}, not an object")
    family = checked_field(where, ROW_FIELD, obj, "family", "string")
    spec = schema.families.get(family)
    if spec is None:
        raise InputError(f"{where}: {ROW_FIELD}: \"family\" {json.dumps(family)} is not one the "
                         "schema declares")
    status = checked_choice(where, ROW_FIELD, obj, "status", STATUSES)
    reason = checked_field(where, ROW_FIELD, obj, "reason", "string", False, "")
    values = checked_field(where, ROW_FIELD, obj, "axis_values", "object")
    if sorted(values) != sorted(a.name for a in spec.axes):
        raise InputError(f"{where}: {ROW_FIELD}: \"axis_values\" has {', '.join(values) or 'none'}, "
                         f"not the axes of {family}: {', '.join(a.name for a in spec.axes) or 'none'}")
    for axis in spec.axes:
        if not _fits(axis.kind, values[axis.name]):
            raise InputError(f"{where}: {ROW_FIELD}: axis \"{axis.name}\" is "
                             f"{describe(values[axis.name])}, not {_AXIS_VALUE[axis.kind]}")
    notes = checked_field(where, ROW_FIELD, obj, "notes", "list", False, [])
    for i, note in enumerate(notes, 1):
        at = f"{ROW_FIELD} note {i}"
        if not isinstance(note, dict):
            raise InputError(f"{where}: {at} is {describe(note)}, not an object")
        checked_field(where, at, note, "kind", "string")
        checked_field(where, at, note, "text", "string")
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



def is_iteration(row):
    return row.get("run_type", "iteration") == "iteration"


def run_name(row):
    return row.get("run_name", row["name"])
