"""Where a cubench run's wall time went, read from its result file alone: per family, its rows
and the seconds of their set-up, first call, check, warm-up and timed samples (the counters
setup_s, first_call_ms, validate_s, warmup_s, sampling_s), then the costliest rows; Markdown.
What the counters do not hold (the copy ceiling measured at the start, rows that failed, Google
Benchmark between rows) is the gap between their sum and the run's wall time."""
from collections import defaultdict

import results
from cli import parser, run
from results import InputError

PARTS = (("setup_s", 1.0, "set-up s"), ("first_call_ms", 1e-3, "first call s"),
         ("validate_s", 1.0, "check s"), ("warmup_s", 1.0, "warm-up s"),
         ("sampling_s", 1.0, "samples s"))


def seconds(row):
    return [float(row.get(name, 0.0)) * scale for name, scale, _ in PARTS]


def table_row(name, count, parts):
    cells = [name] + ([str(count)] if count is not None else [])
    return "| " + " | ".join(cells + [f"{x:.1f}" for x in parts] + [f"{sum(parts):.1f}"]) + " |"


def main(argv):
    p = parser("tools/where-the-time-went", __doc__)
    p.add_argument("file", help="a cubench result file (JSON)")
    p.add_argument("--rows", type=int, default=10, help="the costliest rows to list (default 10)")
    a = p.parse_args(argv)
    data = results.read(a.file)
    schema = results.schema_of(data["context"], a.file)
    # A row repeated (--benchmark_repetitions) paid its set-up, first call, check and warm-up
    # once (its first repetition says them) and sampled in every repetition.
    first = {}
    for row in filter(results.is_iteration, data["benchmarks"]):
        if "sampling_s" not in row:
            continue
        name = results.run_name(row)
        if name not in first:
            first[name] = dict(row)
        else:
            first[name]["sampling_s"] = float(first[name]["sampling_s"]) + float(row["sampling_s"])
    if not first:
        raise InputError(f"{a.file}: no row carries sampling_s (from a cubench before the "
                         "counters of where a row's time went?)")
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
