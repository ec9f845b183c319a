"""Does a result file have the shape of another, times aside? Every member of every row in the same
order, with the same value where it is not a time (names, indices, repetitions, units, statuses,
axis values, note kinds, counter names, skip and error fields); cubench's context members, in any
order, the schema an object in the new file (a string in files written before cubench wrote its
own), every family of the reference's schema with the same axes in it.

    check_result_file_shape.py REFERENCE.json NEW.json [--loop | --values]

--loop: Google Benchmark's own loop (--benchmark_min_time): iterations are a time too.
--values: more than the shape: every context member in the same order with the same value (JSON
text members compared as the JSON they hold), every row member's value, the schema whole; left
out: the context members MEASURED_CONTEXT names (the run's moment, the host, the revision), the
rows' times and counters' values (their names, order and types are compared), and of each note its
words and what follows from the samples' times (MEASURED_NOTE_FIELDS).

Exit status 1 on a difference (each said), 2 on a file that is not JSON."""
import json
import math
import sys

# Members whose values depend on how long things took (or when, or where, or which commit).
TIMES = {"real_time", "cpu_time", "label"}
# Google Benchmark's members that are not measurements, and the row's cubench object: compared.
GBENCH_EXACT = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                "repetitions", "repetition_index", "threads", "aggregate_name", "aggregate_unit",
                "skipped", "skip_message", "error_occurred", "error_message", "iterations",
                "time_unit", "cubench"}
# cubench's context members every file holds (Google Benchmark's and the build's vary by version
# and machine).
CUBENCH_CONTEXT = {"cubench_schema", "git_revision", "google_benchmark", "input_seed", "stopping",
                   "suite", "world", "build_type", "cuda_toolkit"}


def schema_of(context):
    schema = context.get("cubench_schema")
    return json.loads(schema) if isinstance(schema, str) else schema


def note_kinds(row):
    return [n["kind"] for n in row.get("cubench", {}).get("notes", [])]


def where_of(row):
    return f"{row['name']} ({row.get('run_type')} {row.get('aggregate_name', row.get('repetition_index'))})"


def same_names(ref_rows, new_rows, said):
    """Whether the rows are the same rows in the same order; else says which."""
    if [r["name"] for r in ref_rows] == [r["name"] for r in new_rows]:
        return True
    said.append(f"rows: {[r['name'] for r in ref_rows]} against {[r['name'] for r in new_rows]}")
    return False


def compare(reference, new, loop):
    said = []
    ref_context, new_context = reference["context"], new["context"]
    missing = sorted((CUBENCH_CONTEXT & set(ref_context)) - set(new_context))
    if missing:  # an object's members: their order means nothing
        said.append(f"context members missing: {missing}")
    ref_schema, new_schema = schema_of(ref_context), schema_of(new_context)
    if not isinstance(new_schema, dict):
        said.append("the new file's schema is not an object")
    else:
        for name, family in ref_schema["families"].items():
            if new_schema["families"].get(name, {}).get("axes") != family["axes"]:
                said.append(f"schema: family {name}'s axes differ")
    ref_rows, new_rows = reference["benchmarks"], new["benchmarks"]
    if not same_names(ref_rows, new_rows, said):
        return said
    skip = TIMES | ({"iterations"} if loop else set())
    for ref, row in zip(ref_rows, new_rows):
        where = where_of(row)
        ref_keys = [k for k in ref if k != "label" or "label" in row]
        new_keys = [k for k in row if k != "label" or "label" in ref]
        if ref_keys != new_keys:
            said.append(f"{where}: members {ref_keys} against {new_keys}")
            continue
        for key in ref:
            if key in skip or key not in GBENCH_EXACT:
                continue  # a counter: its name was compared, its value is a measurement
            a, b = ref[key], row[key]
            if key == "cubench":
                a = {k: v for k, v in a.items() if k != "notes"} | {"note_kinds": note_kinds(ref)}
                b = {k: v for k, v in b.items() if k != "notes"} | {"note_kinds": note_kinds(row)}
            if a != b:
                said.append(f"{where}: {key} {a!r} against {b!r}")
    return said



# Context members that are the run's moment, machine or build revision, not what the writer wrote.
MEASURED_CONTEXT = {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
                    "cpu_scaling_enabled", "caches", "load_avg", "git_revision", "loaded_libraries",
                    "cuda_driver_api", "gpu", "gpu_count", "nvml"}
# Context members whose value is JSON text: compared as the JSON they hold.
JSON_TEXT_CONTEXT = {"not_built", "not_run", "loaded_libraries"}
# Note fields that follow from the samples' times: the stop's rule (a timeout, or the noise target
# reached), its noise, how many samples, and its timeout (said only for a timeout); the GPU's
# conditions' shares and counts. A note's kind and its other fields are compared, its words not.
MEASURED_NOTE_FIELDS = {"rule", "noise_pct", "samples", "timeout_s", "pct", "moves", "runs", "of",
                        "processes", "cap_W", "text"}


def same(a, b):
    """Equal as the tools read them: NaN equals NaN, 1 equals 1.0."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def notes_shape(notes):
    return [{k: v for k, v in n.items() if k not in MEASURED_NOTE_FIELDS} for n in notes]


def compare_values(reference, new):
    said = []
    ref_context, new_context = reference["context"], new["context"]
    if list(ref_context) != list(new_context):
        said.append(f"context members: {list(ref_context)} against {list(new_context)}")
    for key in ref_context:
        if key in MEASURED_CONTEXT or key not in new_context:
            continue
        a, b = ref_context[key], new_context[key]
        if key in JSON_TEXT_CONTEXT:
            a, b = json.loads(a), json.loads(b)
        if not same(a, b):
            said.append(f"context {key}: {a!r} against {b!r}")
    ref_rows, new_rows = reference["benchmarks"], new["benchmarks"]
    if not same_names(ref_rows, new_rows, said):
        return said
    for ref, row in zip(ref_rows, new_rows):
        where = where_of(row)
        if list(ref) != list(row):
            said.append(f"{where}: members {list(ref)} against {list(row)}")
            continue
        for key in ref:
            a, b = ref[key], row[key]
            if key in TIMES or key not in GBENCH_EXACT:  # a time, or a counter: a measurement
                if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
                    said.append(f"{where}: {key} is {type(b).__name__}, was {type(a).__name__}")
                continue
            if key == "cubench":
                a = {k: v for k, v in a.items() if k != "notes"} | {"notes": notes_shape(a["notes"])}
                b = {k: v for k, v in b.items() if k != "notes"} | {"notes": notes_shape(b["notes"])}
            if not same(a, b):
                said.append(f"{where}: {key} {a!r} against {b!r}")
    return said


def main(argv):
    loop, values = "--loop" in argv, "--values" in argv
    paths = [a for a in argv if a not in ("--loop", "--values")]
    if len(paths) != 2:
        print("check_result_file_shape: want REFERENCE.json NEW.json [--loop | --values]", file=sys.stderr)
        return 2
    try:
        reference, new = (json.load(open(p)) for p in paths)
    except (OSError, ValueError) as e:
        print(f"check_result_file_shape: {e}", file=sys.stderr)
        return 2
    said = compare_values(reference, new) if values else compare(reference, new, loop)
    for line in said:
        print(line)
    same = "the same values" if values else "the same shape"
    print(f"{len(new['benchmarks'])} rows: " + (same if not said else f"{len(said)} difference(s)"))
    return 1 if said else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
