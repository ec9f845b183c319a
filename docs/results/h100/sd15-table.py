"""cubench's sd15 rows beside PyTorch's (diffusers' own models): per image, per denoising step,
peak memory and energy, each side's figure in one Markdown table.

    tools/pyrun ../docs/results/h100/sd15-table.py CUBENCH.json PYTORCH.json

CUBENCH.json: cubench's sd15 rows (benchmarks/sd15.torch.cpp); PYTORCH.json:
tools/torch_reference.py --filter '^sd15/' (eager only: diffusers' UNet2DConditionModel,
AutoencoderKL, DDIMScheduler and transformers' CLIPTextModel). A cubench row
sd15/<what>/<dtype>/<mode>/<images>/<resolution> is set against PyTorch's
sd15/<what>/<dtype>/eager/<images>/<resolution>: its graph rows too, against the eager python.
Columns, cubench / PyTorch:
  per image  the row's median time over its images (image and vae_decode rows)
  per step   a guided denoising step: step_ms (image rows, the median of every step) or the
             row's time (unet_step rows)
  peak       peak_reserved_bytes, the caching allocator's reserved peak over the timed runs (GiB)
  energy     energy_per_run_J over the images (image and vae_decode rows), or per step (unet_step)
and PyTorch's time over cubench's (1.00 and above: cubench at least as fast). A figure a side does
not carry (no NVML energy reading, a row not measured) is "-". Exit status 2 on a file that is not
a result file, or when no row has its peer."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from cubench_tools import cli, input_error, results  # noqa: E402

PREFIX, SUFFIX = "sd15/", "/manual_time"


def parts_of(name):
    """(what, dtype, mode, images, resolution) of an sd15 row's name, or None."""
    if not name.startswith(PREFIX):
        return None
    bare = name[len(PREFIX):]
    if bare.endswith(SUFFIX):
        bare = bare[:-len(SUFFIX)]
    parts = bare.split("/")
    if len(parts) != 5 or not parts[3].isdigit() or not parts[4].isdigit():
        return None
    return parts[0], parts[1], parts[2], int(parts[3]), int(parts[4])


def peer_of(name):
    """The PyTorch row (eager) a cubench sd15 row is set against, or None."""
    parts = parts_of(name)
    if parts is None:
        return None
    what, dtype, _, images, res = parts
    return f"{PREFIX}{what}/{dtype}/eager/{images}/{res}{SUFFIX}"


def figures(r, what, images):
    """(per image ms, per step ms, peak GiB, energy J) of a row; NaN where it has none."""
    nan = float("nan")
    ms = r.median_time() / 1e3
    per_image = ms / images if what in ("image", "vae_decode") else nan
    per_step = r.median("step_ms") if what == "image" else ms if what == "unet_step" else nan
    peak = r.median("peak_reserved_bytes") / 2**30
    energy = r.median("energy_per_run_J")
    if what in ("image", "vae_decode"):
        energy /= images
    elif what != "unet_step":
        energy = nan
    return per_image, per_step, peak, energy


def pair(a, b, digits):
    def one(x):
        return "-" if x != x else f"{x:.{digits}f}"
    return f"{one(a)} / {one(b)}"


def main(argv):
    if len(argv) != 2:
        raise input_error.InputError("want CUBENCH.json PYTORCH.json")
    _, ours = results.load(argv[0])
    _, theirs = results.load(argv[1])
    print("| row | per image, ms | per step, ms | peak reserved, GiB | energy, J | "
          "PyTorch / cubench, time |")
    print("|---|---:|---:|---:|---:|---:|")
    compared = 0
    for name, r in ours.items():
        peer = peer_of(name)
        t = theirs.get(peer) if peer else None
        if t is None or not r.measured() or not t.measured():
            continue
        compared += 1
        what, _, _, images, _ = parts_of(name)
        mine, other = figures(r, what, images), figures(t, what, images)
        short = name[:-len(SUFFIX)] if name.endswith(SUFFIX) else name
        print(f"| `{short}` | {pair(mine[0], other[0], 1)} | {pair(mine[1], other[1], 2)} | "
              f"{pair(mine[2], other[2], 2)} | {pair(mine[3], other[3], 1)} | "
              f"{t.median_time() / r.median_time():.2f} |")
    if not compared:
        raise input_error.InputError(f"no sd15 row of {argv[0]} has its PyTorch peer in {argv[1]}")
    print(f"\n{compared} sd15 rows set against PyTorch's "
          "(cubench / PyTorch in each cell, medians).")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run("sd15-table", main))
