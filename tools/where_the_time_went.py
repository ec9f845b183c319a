"""Where a cubench run's wall time went, read from its result file alone: per family, its rows
and the seconds of their set-up, first call, check, warm-up and timed samples (the counters
setup_s, first_call_ms, validate_s, warmup_s, sampling_s), then the costliest rows; Markdown.
What the counters do not hold (the copy ceiling measured at the start, rows that failed, Google
Benchmark between rows) is the gap between their sum and the run's wall time.
A file none of whose rows carries sampling_s (from a cubench older than the counters, or
tools/torch_reference.py's) is refused in one line, exit status 2: the counters its rows lack,
the cubench and result schema version that write them, and what the file is."""
from collections import defaultdict

import results
from cli import parser, run
from results import InputError

PARTS = (("setup_s", 1.0, "set-up s"), ("first_call_ms", 1e-3, "first call s"),
         ("validate_s", 1.0, "check s"), ("warmup_s", 1.0, "warm-up s"),
         ("sampling_s", 1.0, "samples s"))
# setup_s, validate_s, warmup_s and sampling_s came into cubench at c5b9141 (2026-12-04), while
# its result schema was at version 1: a version-1 file may lack them (its schema then does not
# declare them), every version-2 file has them. first_call_ms is older (a version-1 file from
# before them carries it, and so do files older than the schema).
WRITTEN_SINCE = "cubench writes them all since c5b9141 of 2026-12-04, partway through result schema version 1"
TORCH_REFERENCE = "tools/torch_reference.py"


def lacking(rows):
    """The counters of PARTS that no row carries, in PARTS' order."""
    return [name for name, _, _ in PARTS if not any(name in row for row in rows)]


def why_lacking(context, schema, missing):
    """What the file is, that its rows lack the counters missing: older than them (by its schema
    version, or no schema), PyTorch's timings, or a cubench that declares them and has no row
    that finished."""
    if schema is None:
        if str(context.get("executable", "")).endswith(TORCH_REFERENCE):
            return f"this file has no schema: it is {TORCH_REFERENCE}'s, which counts none of them"
        return "this file has no schema: its cubench is older still"
    if any(name in schema.counters for name in missing):
        return (f"this file has version {schema.version}, whose schema declares them, yet no "
                "finished row carries them (did every row fail?)")
    undeclared = f"this file has version {schema.version} and its schema does not declare them"
    if schema.version != 1:  # every cubench of a later version writes them: not its age
        return undeclared
    revision = str(context.get("git_revision", "")).split()  # "c6db17d (from CUBENCH_GIT_REVISION)"
    return f"{undeclared}: its cubench{f', {revision[0]},' if revision else ''} is older"


def without_the_counters(path, context, schema, rows):
    """The InputError for a file none of whose rows carries sampling_s: which counters its rows
    lack, since when cubench writes them, and why this file does not have them."""
    missing = lacking(rows)
    return InputError(f"{path}: its rows lack {', '.join(missing)} ({WRITTEN_SINCE}; "
                      f"{why_lacking(context, schema, missing)})")


def seconds(row):
    return [float(row.get(name, 0.0)) * scale for name, scale, _ in PARTS]


def table_row(name, count, parts):
    cells = [name] + ([str(count)] if count is not None else [])
    return "| " + " | ".join(cells + [f"{x:.1f}" for x in parts] + [f"{sum(parts):.1f}"]) + " |"


def first_repetitions(rows):
    """{run name: its first repetition's row, sampling_s summed over its repetitions}, of the rows
    that carry sampling_s. A row repeated (--benchmark_repetitions) paid its set-up, first call,
    check and warm-up once (its first repetition says them) and sampled in every repetition."""
    first = {}
    for row in rows:
        if "sampling_s" not in row:
            continue
        name = results.run_name(row)
        if name not in first:
            first[name] = dict(row)
        else:
            first[name]["sampling_s"] = float(first[name]["sampling_s"]) + float(row["sampling_s"])
    return first


def timed_rows(path):
    """(the file's schema, first_repetitions of its rows); InputError where no row carries
    sampling_s. A warning about the file (an interrupted run's) is said only where it is not
    refused: a refusal is one line."""
    with results.warnings_held():
        data = results.read(path)
        schema = results.schema_of(data["context"], path)
        rows = list(filter(results.is_iteration, data["benchmarks"]))
        first = first_repetitions(rows)
        if not first:
            raise without_the_counters(path, data["context"], schema, rows)
    return schema, first


def main(argv):
    p = parser("tools/where-the-time-went", __doc__)
    p.add_argument("file", help="a cubench result file (JSON)")
    p.add_argument("--rows", type=int, default=10, help="the costliest rows to list (default 10)")
    a = p.parse_args(argv)
    schema, first = timed_rows(a.file)
    families = defaultdict(list)
    for name, row in first.items():
        families[results.family_and_axes(name, schema)[0]].append(seconds(row))
    heads = [h for _, _, h in PARTS]
    print("| family | rows | " + " | ".join(heads) + " | total s |")
    print("|---|---:|" + "---:|" * (len(heads) + 1))
    sums = {f: [sum(col) for col in zip(*rows)] for f, rows in families.items()}
    for f in sorted(sums, key=lambda f: -sum(sums[f])):
        print(table_row(f, len(families[f]), sums[f]))
    print(table_row("**all**", len(first), [sum(col) for col in zip(*sums.values())]))
    print(f"\nThe {a.rows} costliest rows:\n")
    print("| row | " + " | ".join(heads) + " | total s |")
    print("|---|" + "---:|" * (len(heads) + 1))
    for name in sorted(first, key=lambda n: -sum(seconds(first[n])))[:a.rows]:
        print(table_row(name, None, seconds(first[name])))
    return 0


if __name__ == "__main__":
    raise SystemExit(run("tools/where-the-time-went", main))
