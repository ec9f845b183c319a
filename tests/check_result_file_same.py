"""Is a result file the same as one an earlier build wrote of the same rows, but for what the run's
time and machine decide? Every context member in the same order with the same value (JSON text
members compared as the JSON they hold), every row's members in the same order with the same
value, the schema whole; left out: the context members MEASURED_CONTEXT names (the run's moment,
the host, the revision), the rows' times and counters' values (their names, order and types are
compared), and of each note its words and what follows from the samples' times
(MEASURED_NOTE_FIELDS).

    check_result_file_same.py REFERENCE.json NEW.json

Exit status 1 on a difference (each said), 2 on a file that is not JSON."""
import json
import math
import sys

# Context members that are the run's moment, machine or build revision, not what the writer wrote.
MEASURED_CONTEXT = {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
                    "cpu_scaling_enabled", "caches", "load_avg", "git_revision", "loaded_libraries",
                    "cuda_driver_api", "gpu", "gpu_count", "nvml"}
# Context members whose value is JSON text: compared as the JSON they hold.
JSON_TEXT_CONTEXT = {"not_built", "not_run", "loaded_libraries"}
# Row members that are measurements.
TIMES = {"real_time", "cpu_time", "label"}
# Note fields that follow from the samples' times: the stop's rule (a timeout, or the noise target
# reached), its noise, how many samples, and its timeout (said only for a timeout); the GPU's
# conditions' shares and counts. A note's kind and its other fields are compared, its words not.
MEASURED_NOTE_FIELDS = {"rule", "noise_pct", "samples", "timeout_s", "pct", "moves", "runs", "of",
                        "processes", "cap_W", "text"}
GBENCH_EXACT = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                "repetitions", "repetition_index", "threads", "aggregate_name", "aggregate_unit",
                "skipped", "skip_message", "error_occurred", "error_message", "iterations",
                "time_unit", "cubench"}


def same(a, b):
    """Equal as the tools read them: NaN equals NaN, 1 equals 1.0."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def notes_shape(notes):
    return [{k: v for k, v in n.items() if k not in MEASURED_NOTE_FIELDS} for n in notes]


def compare(reference, new):
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
    if [r["name"] for r in ref_rows] != [r["name"] for r in new_rows]:
        said.append(f"rows: {[r['name'] for r in ref_rows]} against {[r['name'] for r in new_rows]}")
        return said
    for ref, row in zip(ref_rows, new_rows):
        where = f"{row['name']} ({row.get('run_type')} {row.get('aggregate_name', row.get('repetition_index'))})"
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
    if len(argv) != 2:
        print("check_result_file_same: want REFERENCE.json NEW.json", file=sys.stderr)
        return 2
    try:
        reference, new = (json.load(open(p)) for p in argv)
    except (OSError, ValueError) as e:
        print(f"check_result_file_same: {e}", file=sys.stderr)
        return 2
    said = compare(reference, new)
    for line in said:
        print(line)
    print(f"{len(new['benchmarks'])} rows: " + ("the same" if not said else f"{len(said)} difference(s)"))
    return 1 if said else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
