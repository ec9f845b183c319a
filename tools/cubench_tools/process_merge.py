"""Merging the result files of several processes of one build into one file, one sample per
process: what is merged, and what is refused (tools/merge-processes's help says both and why).
tools/merge-processes and tools/run-matrix merge through merge()."""
import json
import os

from . import cli
from .input_error import InputError
from .result_schema import SCHEMA_FIELD, schema_document, schema_of
from .results import read
from .row_outcome import MEASURED, is_iteration, outcome, run_name
from .tool_warnings import warnings_held

# The context fields that name the build a file's process ran, or the machine it ran on
# (cubench's version_text lists the same, fixtures/detail/report/context.cpp; framework and torch
# are tools/torch_reference.py's): processes of one merge agree on each one both files have.
BUILD_FIELDS = ("cuda_toolkit", "cuda_runtime", "cuda_compiler", "cublas", "cublaslt", "cusolver",
                "cudnn", "cudnn_frontend", "nccl", "libtorch", "libtorch_cuda", "libtorch_cudnn",
                "framework", "torch", "google_benchmark", "library_build_type", "git_revision",
                "build_type", "cuda_architectures", "host_compiler", "not_built", "gpu",
                "cuda_driver_api", "executable")


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
    mine, theirs = (schema_document(c[SCHEMA_FIELD]) if SCHEMA_FIELD in c else None for c in (context, first))
    if mine == theirs:
        return
    if mine is None:
        what = f"has no {SCHEMA_FIELD} and {first_path} has one"
    elif theirs is None:
        what = f"has a {SCHEMA_FIELD} and {first_path} has none"
    else:
        what = f"has another {SCHEMA_FIELD} than {first_path}"
    raise InputError(f"{path} {what}: the processes of one merge must come from one build")


def _same_value(field, a, b):
    """Whether two contexts' values of a build field are the same: as text, a path as its normal
    form (build/x/cubench and ./build/x/cubench), not_built as JSON (its spacing aside)."""
    a, b = str(a), str(b)
    if field == "executable":
        return os.path.normpath(a) == os.path.normpath(b)
    if field == "not_built":
        try:
            return json.loads(a) == json.loads(b)
        except ValueError:
            pass
    return a == b


def _shown(value, width=60):
    text = cli.one_line(value)
    return f"'{text}'" if len(text) <= width else f"'{text[:width - 3]}...'"


def check_same_build(first_path, first, path, context):
    """Every build field both contexts have is the same in both (BUILD_FIELDS)."""
    for field in BUILD_FIELDS:
        if field in first and field in context and not _same_value(field, first[field], context[field]):
            raise InputError(f"{path} is of another build than {first_path}: its {field} is "
                             f"{_shown(context[field])}, {first_path}'s {_shown(first[field])}; "
                             "the processes of one merge must come from one build")


def _bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None  # read() has just read it; gone since: compared as JSON only


def check_each_file_once(paths, datas):
    """No file twice: not one path twice (links followed), nor one content under two names."""
    seen_path, seen_bytes, seen_data = {}, {}, []
    for path, data in zip(paths, datas):
        real = os.path.realpath(os.path.abspath(path))
        if real in seen_path:
            raise InputError(f"{seen_path[real]} and {path} are the same file: name each process's "
                             "file once")
        seen_path[real] = path
        content = _bytes(path)
        if content is not None and content in seen_bytes:
            raise InputError(f"{path} holds the same bytes as {seen_bytes[content]} (a copy): name "
                             "each process's file once")
        if content is not None:
            seen_bytes[content] = path
        earlier = next((p for p, d in seen_data if d == data), None)
        if earlier is not None:
            raise InputError(f"{path} holds the same results as {earlier} (a copy, written another "
                             "way): name each process's file once")
        seen_data.append((path, data))


def merge(paths):
    if len(paths) < 2:
        raise InputError("merging needs at least two result files (one per process)")
    # A refusal is the one line said: a warning about a file read (cut mid-write, interrupted)
    # reaches stderr only once the merge is done.
    with warnings_held():
        return _merge(paths)


def _merge(paths):
    datas = [read(p) for p in paths]  # every input checked before anything is merged
    check_each_file_once(paths, datas)
    for path, data in zip(paths[1:], datas[1:]):
        check_same_schema(paths[0], datas[0]["context"], path, data["context"])
    for path, data in zip(paths[1:], datas[1:]):
        check_same_build(paths[0], datas[0]["context"], path, data["context"])
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
