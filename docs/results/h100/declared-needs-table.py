"""What each configuration declares it needs of device memory, beside the peak it was measured to
reserve: one markdown table from `cubench --cubench_list=needs` and a result file of a run.

    python3 docs/results/h100/declared-needs-table.py NEEDS.txt [NEEDS.txt ...] RESULT.json [--all]

A configuration's declaration comes from the last listing that has it (the current build's
listing after an older one with more families).

The declaration (Family::needs) is what admission reads: a configuration is left out of a GPU (or
a --cubench_memory_limit) smaller than it, and not started where less is free at its turn. So a
declaration below the measured peak is a bug: the row could start where it then runs out of
memory. Measured: the case's memory pool's reserved high-water mark (peak_mem_bytes), plus, for a
LibTorch row, its caching allocator's (peak_reserved_bytes); the check's own memory is not in
either (the runner keeps it out of the peaks), nor are libraries' handles and the CUDA context; a
row that reports no peak at all (LibTorch's single operations: their tensors are LibTorch's,
outside the pool, and the row gives no allocator peak) is left out.
The table lists every family's tightest row (the largest measured / declared) and, with --all,
every row; a declaration below its peak is marked BELOW. The result file is read through
tools/cubench_tools/results.py: a row skipped or failed is no measurement. Exit status 1 when a
declaration is below, 2 on bad input."""
import csv
import itertools
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from cubench_tools import cli, input_error, result_schema, results  # noqa: E402

MIB = 1 << 20


def declared(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    except OSError as e:
        raise input_error.InputError(f"cannot read {path}: {e.strerror}")
    if not rows or "name" not in rows[0] or "device_bytes" not in rows[0]:
        raise input_error.InputError(f"{path} is not cubench --cubench_list=needs output (no name and "
                                 "device_bytes header)")
    out = {}
    for row in rows:
        try:
            out[row["name"]] = int(row["device_bytes"])
        except (TypeError, ValueError):
            raise input_error.InputError(f"{path}: {row.get('name')!r} has no whole number of bytes")
    return out


def measured(path):
    """{configuration: (family, its largest peak over the repetitions)} of the rows measured (a
    skipped or failed row's figures are not a measurement)."""
    context, rows = results.load(path)
    schema = result_schema.schema_of(context, path)
    # The families' names, from the file's schema (a family's name may hold a '/').
    families = sorted(schema.families, key=len, reverse=True) if schema is not None else []
    out = {}
    for run_name, r in rows.items():
        if not r.measured():
            continue
        pool, allocator = r.counters.get("peak_mem_bytes"), r.counters.get("peak_reserved_bytes")
        if pool is None and allocator is None:
            continue  # a row without a device peak (a start-up stage, a CPU family)
        peak = max(a + b for a, b in itertools.zip_longest(pool or [], allocator or [], fillvalue=0))
        if peak == 0 and allocator is None:
            continue  # nothing measured: a row whose memory is outside the pool (LibTorch's ops)
        name = run_name.removesuffix("/manual_time")
        family = next((f for f in families if name.startswith(f + "/")), name.split("/")[0])
        out[name] = (family, peak)
    return out


def mib(x):
    return f"{x / MIB:,.1f}"


def main(argv):
    args = [a for a in argv if a != "--all"]
    if len(args) < 2:
        raise input_error.InputError("usage: declared-needs-table.py NEEDS.txt [NEEDS.txt ...] "
                                 "RESULT.json [--all]")
    *listings, result = args
    needs = {}
    for listing in listings:  # a later listing's rows win: the current build's over an older one's
        needs.update(declared(listing))
    peaks = measured(result)
    rows = []
    for name, (family, peak) in peaks.items():
        if name not in needs:
            raise input_error.InputError(f"{name} is in {result} but in no listing: the listing of "
                                     "another build?")
        rows.append((family, name, needs[name], peak))
    if "--all" not in argv:
        tightest = {}
        for row in rows:
            ratio = row[3] / row[2] if row[2] else float("inf")
            if row[0] not in tightest or ratio > tightest[row[0]][0]:
                tightest[row[0]] = (ratio, row)
        rows = [row for _, row in tightest.values()]
    print("| family | configuration | declared (MiB) | measured peak reserved (MiB) | measured / declared |")
    print("|---|---|---|---|---|")
    below = 0
    for family, name, need, peak in rows:
        ratio = f"{peak / need:.3f}" if need else "none declared"
        mark = " BELOW" if peak > need else ""
        below += peak > need
        print(f"| {family} | {name.removeprefix(family + '/')} | {mib(need)} | {mib(peak)} | {ratio}{mark} |")
    print(f"\n{len(peaks)} rows measured; {below} declared below their measured peak")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(cli.run("declared-needs-table", main))
