"""Does a result file have the shape of another, times aside? Every member of every row in the same
order, with the same value where it is not a time (names, indices, repetitions, units, statuses,
axis values, note kinds, counter names, skip and error fields); cubench's context members, in any
order, the schema an object in the new file (a string in files written before cubench wrote its
own), every family of the reference's schema with the same axes in it.

    check_result_file_shape.py REFERENCE.json NEW.json [--loop]

--loop: Google Benchmark's own loop (--benchmark_min_time): iterations are a time too. Exit status
1 on a difference (each said), 2 on a file that is not JSON."""
import json
import sys

# Members whose values depend on how long things took (or when, or where, or which commit).
TIMES = {"real_time", "cpu_time", "label"}
# cubench's context members every file holds (Google Benchmark's and the build's vary by version
# and machine).
CUBENCH_CONTEXT = {"cubench_schema", "git_revision", "google_benchmark", "input_seed", "stopping",
                   "suite", "world", "build_type", "cuda_toolkit"}


def schema_of(context):
    schema = context.get("cubench_schema")
    return json.loads(schema) if isinstance(schema, str) else schema


def note_kinds(row):
    return [n["kind"] for n in row.get("cubench", {}).get("notes", [])]


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
    if [r["name"] for r in ref_rows] != [r["name"] for r in new_rows]:
        said.append(f"rows: {[r['name'] for r in ref_rows]} against {[r['name'] for r in new_rows]}")
        return said
    skip = TIMES | ({"iterations"} if loop else set())
    for ref, row in zip(ref_rows, new_rows):
        where = f"{row['name']} ({row.get('run_type')} {row.get('aggregate_name', row.get('repetition_index'))})"
        ref_keys = [k for k in ref if k != "label" or "label" in row]
        new_keys = [k for k in row if k != "label" or "label" in ref]
        if ref_keys != new_keys:
            said.append(f"{where}: members {ref_keys} against {new_keys}")
            continue
        for key in ref:
            if key in skip or (key not in ("name", "run_name", "run_type", "time_unit", "aggregate_name",
                                           "aggregate_unit", "family_index", "per_family_instance_index",
                                           "repetitions", "repetition_index", "threads", "iterations",
                                           "skipped", "skip_message", "error_occurred", "error_message",
                                           "cubench")):
                continue  # a counter: its name was compared, its value is a measurement
            a, b = ref[key], row[key]
            if key == "cubench":
                a = {k: v for k, v in a.items() if k != "notes"} | {"note_kinds": note_kinds(ref)}
                b = {k: v for k, v in b.items() if k != "notes"} | {"note_kinds": note_kinds(row)}
            if a != b:
                said.append(f"{where}: {key} {a!r} against {b!r}")
    return said


def main(argv):
    loop = "--loop" in argv
    paths = [a for a in argv if a != "--loop"]
    if len(paths) != 2:
        print("check_result_file_shape: want REFERENCE.json NEW.json [--loop]", file=sys.stderr)
        return 2
    try:
        reference, new = (json.load(open(p)) for p in paths)
    except (OSError, ValueError) as e:
        print(f"check_result_file_shape: {e}", file=sys.stderr)
        return 2
    said = compare(reference, new, loop)
    for line in said:
        print(line)
    print(f"{len(new['benchmarks'])} rows: " + ("the same shape" if not said else f"{len(said)} difference(s)"))
    return 1 if said else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
