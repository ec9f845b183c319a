"""Compiled mode side by side: per configuration, cubench's eager, graph and compiled (AOTInductor
package) rows and Python's eager and torch.compile of the same module, in one Markdown table.

    tools/pyrun ../docs/results/h100/compiled-table.py CUBENCH.json [CUBENCH.json ...] -- PYTORCH.json [PYTORCH.json ...]

CUBENCH files: cubench's rows of resnet50_infer, sd15 and llama_decode (any modes, e.g. the GPU
plan's compiled-cubench and compiled-twins); PYTORCH files: tools/torch_reference.py's rows of the
same configurations (its compiled rows are torch.compile of compiled_modules.py's modules; a second
file of --compile-mode max-autotune adds its column, told by the rows' label). A configuration is a
row's name without its mode; each cell is the row's headline figure:
  resnet50_infer  images/s (higher is better)
  sd15 unet_step  ms per guided step; sd15 image: ms per image
  llama_decode    ms per decode step (token_ms_median)
and the last column cubench compiled over Python's torch.compile (default mode), in the figure's
better direction (above 1.00: cubench's compiled row the better). "-" where a side has no
measured row. Exit status 2 on a file that is not a result file, or when no configuration has a
compiled row."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from cubench_tools import cli, results  # noqa: E402

SUFFIX = "/manual_time"
MODE_AT = {"resnet50_infer": 3, "sd15": 3, "llama_decode": 2}  # the mode's index among the parts
COLUMNS = ("cubench eager", "cubench graph", "cubench compiled", "PyTorch eager",
           "torch.compile default", "torch.compile max-autotune")


def split(name):
    """(configuration, mode) of a row's name, or None for another family's."""
    bare = name[:-len(SUFFIX)] if name.endswith(SUFFIX) else name
    parts = bare.split("/")
    at = MODE_AT.get(parts[0])
    if at is None or len(parts) <= at:
        return None
    mode = parts[at]
    return "/".join(parts[:at] + ["*"] + parts[at + 1:]), mode


def headline(config, r):
    """(figure, higher is better) of a row."""
    if config.startswith("resnet50_infer/"):
        return r.median("images_per_s"), True
    if config.startswith("llama_decode/"):
        return r.median("token_ms_median"), False
    return r.median_time() / 1e3, False  # sd15: the run is a step or an image


def column_of(mode, label, ours):
    if ours:
        return f"cubench {mode}"
    if mode == "compiled":
        return "torch.compile max-autotune" if "max-autotune" in (label or "") else "torch.compile default"
    return "PyTorch eager" if mode == "eager" else None


def main(argv):
    if "--" not in argv or argv.index("--") == 0 or argv.index("--") == len(argv) - 1:
        raise results.InputError("want CUBENCH.json [...] -- PYTORCH.json [...]")
    cut = argv.index("--")
    table, better = {}, {}
    for ours, paths in ((True, argv[:cut]), (False, argv[cut + 1:])):
        for path in paths:
            _, rows = results.load(path)
            for name, r in rows.items():
                parts = split(name)
                if parts is None or not r.measured():
                    continue
                config, mode = parts
                column = column_of(mode, r.label, ours)
                if column is None:
                    continue
                figure, higher = headline(config, r)
                table.setdefault(config, {})[column] = figure
                better[config] = higher
    configs = [c for c in table if "cubench compiled" in table[c]]
    if not configs:
        raise results.InputError("no configuration has a compiled cubench row")
    print("| configuration | unit | " + " | ".join(COLUMNS) + " | compiled: cubench / torch.compile |")
    print("|---|---|" + "---:|" * (len(COLUMNS) + 1))
    for config in sorted(configs):
        cells, higher = table[config], better[config]
        unit = "img/s" if config.startswith("resnet50_infer/") else (
            "ms/token" if config.startswith("llama_decode/") else
            "ms/step" if "/unet_step/" in config else "ms/image")
        shown = ["-" if cells.get(c) is None else f"{cells[c]:.4g}" for c in COLUMNS]
        ours, theirs = cells.get("cubench compiled"), cells.get("torch.compile default")
        ratio = "-" if not ours or not theirs else f"{(ours / theirs if higher else theirs / ours):.2f}"
        print(f"| `{config}` | {unit} | " + " | ".join(shown) + f" | {ratio} |")
    print(f"\n{len(configs)} configurations with a compiled row (medians; `*` is the mode).")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run("compiled-table", main))
