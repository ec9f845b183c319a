"""Merge the result files of several processes of one build into one file, one sample per process.

  tools/merge-processes OUT.json RUN1.json RUN2.json [RUN3.json ...]

Why: repetitions inside one process share its state (the batch size Google Benchmark picked, the
allocator's layout, the library's heuristics, where the host threads landed), so they agree with
each other more closely than two processes of the same binary do. A U test over one process's
repetitions then calls that process-to-process spread a change: in A/A runs of one binary on the
H200 it flags rows up to 15% apart that way (docs/results/h200/README.md). With a process as the
unit, the test asks the question a user has: would another run of the build give this?

Each benchmark of OUT gets one iteration row per input file: that process's row at its median
time (the lower one for an even count, so its counters stay the ones measured with that time),
renumbered as repetitions 0..K-1, with every counter it carries (whatever its name: rows are
copied whole, a version-3 row's "cubench" object too). Aggregate rows are dropped: the tools
recompute them. A benchmark not timed in some process (its status: failed, or skipped as not run
or not supported) keeps that process's row; one missing from a file is an error. The context is
the first file's, its schema (`cubench_schema`) included, with `processes` (K) and each file's
`date` added; files whose schemas differ (or one with a schema, one without) are not processes of
one build: an error. A file cut mid-write (its process killed) gives its complete rows, with a
warning; a benchmark it lost is then missing from it, which is an error as above. A process
interrupted (context `interrupted`) is named in OUT's `interrupted` ("SIGINT (process 2)"),
whichever file it was, so that OUT warns as its inputs did.
"""
import json
import os
import sys

from . import cli
from .results import (MEASURED, SCHEMA_FIELD, InputError, is_iteration, outcome, read,  # noqa: E402
                     run_name, schema_of)


def _rows_by_name(data):
    rows = {}
    for row in filter(is_iteration, data["benchmarks"]):
        rows.setdefault(run_name(row), []).append(row)
    return rows


def not_timed(row, schema):
    return outcome(row, schema).status != MEASURED


def median_row(rows, schema):
    """The row at the (lower) median time; the first row not timed (failed or skipped), if any."""
    untimed = [r for r in rows if not_timed(r, schema)]
    if untimed:
        return untimed[0]
    ordered = sorted(rows, key=lambda r: float(r["real_time"]))
    return ordered[(len(ordered) - 1) // 2]


def check_same_schema(first_path, first, path, context):
    """The merged file keeps the first file's schema, so it must be every file's (read() checked
    each: both are valid JSON here, compared as JSON, not as text)."""
    mine, theirs = (json.loads(c[SCHEMA_FIELD]) if SCHEMA_FIELD in c else None for c in (context, first))
    if mine == theirs:
        return
    if mine is None:
        what = f"has no {SCHEMA_FIELD} and {first_path} has one"
    elif theirs is None:
        what = f"has a {SCHEMA_FIELD} and {first_path} has none"
    else:
        what = f"has another {SCHEMA_FIELD} than {first_path}"
    raise InputError(f"{path} {what}: the processes of one merge must come from one build")


def merge(paths):
    if len(paths) < 2:
        raise InputError("merging needs at least two result files (one per process)")
    datas = [read(p) for p in paths]  # every input checked before anything is merged
    for path, data in zip(paths[1:], datas[1:]):
        check_same_schema(paths[0], datas[0]["context"], path, data["context"])
    per_file = [_rows_by_name(d) for d in datas]
    names = list(per_file[0])
    for path, rows in zip(paths[1:], per_file[1:]):
        missing = [n for n in names if n not in rows]
        extra = [n for n in rows if n not in per_file[0]]
        if missing or extra:
            what = f"lacks {missing[0]}" if missing else f"has {extra[0]}, which {paths[0]} lacks"
            raise InputError(f"{path} {what}: the processes of one merge must run the same "
                             "benchmarks (the same filter)")
    schema = schema_of(datas[0]["context"], paths[0])  # every file's (check_same_schema)
    merged = []
    for name in names:
        picks = [median_row(rows[name], schema) for rows in per_file]
        untimed = [p for p in picks if not_timed(p, schema)]
        if untimed:
            merged.append(dict(untimed[0], repetitions=1, repetition_index=0))
            continue
        for i, row in enumerate(picks):
            merged.append(dict(row, repetitions=len(picks), repetition_index=i))
    context = dict(datas[0]["context"])
    context["processes"] = str(len(paths))
    context["process_dates"] = ", ".join(str(d["context"].get("date", "?")) for d in datas)
    # The first file's context would carry its own mark and drop the others': name every one.
    context.pop("interrupted", None)
    marks = [f"{d['context']['interrupted']} (process {i})" for i, d in enumerate(datas, 1)
             if "interrupted" in d["context"]]
    if marks:
        context["interrupted"] = ", ".join(marks)
    return {"context": context, "benchmarks": merged}


def main(argv):
    p = cli.parser("tools/merge-processes", __doc__)
    p.add_argument("out", metavar="OUT.json", help="the merged file to write")
    p.add_argument("inputs", nargs="+", metavar="RUN.json", help="one result file per process")
    args = p.parse_args(argv)
    if os.path.abspath(args.out) in {os.path.abspath(path) for path in args.inputs}:
        raise InputError(f"{args.out} is also an input; name a new file first")
    cli.check_output_file(args.out, "OUT.json")  # before the work, not after it
    data = merge(args.inputs)
    cli.write_file(args.out, json.dumps(data, indent=1), "OUT.json")
    return 0

