"""Do the power readings hold? Per row of one or more result files: its sampling window, power_W
(NVML's energy counter read at its update boundaries), nvml_power_W (NVML's own power reading,
averaged over the same window) and their ratio, and whether power_W is over the card's enforced
limit; then, over every file, how many readings are over the limit by more than 3%.

    tools/pyrun ../docs/results/h100/power-table.py RESULT.json [RESULT.json ...] [--rows]

The limit is the file's context gpu_power_limit_W. Without --rows, only the counts and the rows
whose two readings differ by more than 5% or that are over the limit. Exit status 2 on a file that
is not a result file."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from cubench_tools import cli, input_error, results  # noqa: E402

OVER = 1.03
AGREE = 0.05


def main(argv):
    every = "--rows" in argv
    paths = [a for a in argv if a != "--rows"]
    if not paths:
        raise input_error.InputError("want RESULT.json [RESULT.json ...] [--rows]")
    print("| file | row | window (s) | power_W | nvml_power_W | power_W / nvml_power_W | over the limit |")
    print("|---|---|---:|---:|---:|---:|---|")
    readings = over = apart = both = 0
    for path in paths:
        context, rows = results.load(path)
        try:
            limit = float(context.get("gpu_power_limit_W", 0))
        except ValueError:
            limit = 0.0
        for name, r in rows.items():
            if not r.measured():  # a skipped or failed row's figures are no reading
                continue
            power, nvml, window = r.median("power_W"), r.median("nvml_power_W"), r.median("sampling_s")
            if power != power:
                continue
            readings += 1
            is_over = limit > 0 and power > OVER * limit
            over += is_over
            ratio = power / nvml if nvml == nvml and nvml > 0 else float("nan")
            if ratio == ratio:
                both += 1
                apart += abs(ratio - 1) > AGREE
            if every or is_over or (ratio == ratio and abs(ratio - 1) > AGREE):
                print(f"| {os.path.basename(path)} | `{name}` | {window:.3g} | {power:.0f} | "
                      f"{'' if nvml != nvml else f'{nvml:.0f}'} | {'' if ratio != ratio else f'{ratio:.3f}'} | "
                      f"{f'yes ({limit:.0f} W)' if is_over else ''} |")
    print(f"\n{readings} power readings in {len(paths)} file(s): {over} over the card's limit by more "
          f"than {round((OVER - 1) * 100)}%; {both} beside NVML's own reading, {apart} of them more "
          f"than {round(AGREE * 100)}% apart.")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run("power-table", main))
