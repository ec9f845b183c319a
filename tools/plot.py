"""PNG charts from cubench result files; each file is one colour, error bars are the standard
deviation over repetitions.

  tools/plot --out-dir docs/results/h200/plots a.json [b.json ...]

Writes, for the families present: gemm.png (TFLOPS against size per dtype, with the datasheet
peak), sigmoid.png (GB/s with the measured copy ceiling), allreduce.png (bus bandwidth against
bytes, log axis; algbw where one GPU makes busbw meaningless), svd.png (time against n),
resnet.png and resnet-memory.png (ResNet-50 images/s, peak allocated memory, per precision and
layout, one panel per resolution/batch and eager or graph), transformer.png (peak allocated
memory against batch, one panel per mode and attention). A file cut mid-write gives its
complete rows, with a warning.
"""
import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli  # noqa: E402
from results import InputError, label_of, load  # noqa: E402


def parse(name, pattern):
    m = re.match(pattern, name)
    return m.groups() if m else None


def series(loaded, pattern, key):
    """{group: {file_label: [(x, y, err)]}} from names matching pattern; key(groups, result)."""
    out = {}
    for label, _, results in loaded:
        for name, r in results.items():
            g = parse(name, pattern)
            if not g or r.error or not r.times:
                continue
            point = key(g, r)
            if point is None:
                continue
            group, x, y, err = point
            out.setdefault(group, {}).setdefault(label, []).append((x, y, err))
    return out


def panels(n, max_cols, width, height):
    """A figure of n panels, max_cols to a row: (pyplot, figure, axes)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cols = min(max_cols, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    return plt, fig, axes


def save(plt, fig, axes, n, title, path):
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def draw(groups, title, xlabel, ylabel, path, logx=False, logy=False, lines=None):
    n = len(groups)
    plt, fig, axes = panels(n, 3, 5, 3.6)
    for ax, (group, per_file) in zip(axes.flat, sorted(groups.items())):
        for i, (label, pts) in enumerate(sorted(per_file.items())):
            pts.sort()
            xs, ys, es = zip(*pts)
            ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=label, color=f"C{i}")
        for value, text in (lines or {}).get(group, []):
            ax.axhline(value, linestyle="--", color="grey")
            ax.annotate(text, (0.01, value), xycoords=("axes fraction", "data"), fontsize=8,
                        va="bottom", color="grey")
        ax.set_title(group)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if logx:
            ax.set_xscale("log", base=2)
        if logy:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return save(plt, fig, axes, n, title, path)


def gemm(loaded, out_dir):
    def key(g, r):
        variant, dtype, m, n, k = g
        if not (m == n == k) or "TFLOPS" not in r.counters:
            return None
        return f"{variant} {dtype}", int(m), r.median("TFLOPS"), r.stdev("TFLOPS")
    groups = series(loaded, r"^(gemm|gemm_autotune)/(\w+)/(\d+)/(\d+)/(\d+)/", key)
    lines = {}
    for _, _, results in loaded:
        for name, r in results.items():
            g = parse(name, r"^(gemm|gemm_autotune)/(\w+)/")
            if g and "pct_peak" in r.counters and r.median("pct_peak") > 0:
                peak = r.median("TFLOPS") / (r.median("pct_peak") / 100)
                lines[f"{g[0]} {g[1]}"] = [(peak, f"datasheet peak {peak:.0f} TFLOP/s")]
    if groups:
        return draw(groups, "GEMM (cuBLASLt), square sizes", "n (m = n = k)", "TFLOP/s",
                    os.path.join(out_dir, "gemm.png"), logx=True, lines=lines)


def sigmoid(loaded, out_dir):
    def key(g, r):
        variant, dtype, n, cache = g
        return f"{dtype} n={n} {cache}", variant, r.median("GBps"), r.stdev("GBps")
    raw = series(loaded, r"^sigmoid/(\w+)/(\w+)/(\d+)/(cold|hot)/", key)
    if not raw:
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    groups = sorted(raw)
    fig, axes = plt.subplots(math.ceil(len(groups) / 4), min(4, len(groups)), squeeze=False,
                             figsize=(4.5 * min(4, len(groups)), 3.4 * math.ceil(len(groups) / 4)))
    ceilings = [float(c.get("copy_ceiling_GBps", 0)) for _, c, _ in loaded if c.get("copy_ceiling_GBps")]
    for ax, group in zip(axes.flat, groups):
        per_file = raw[group]
        labels = sorted(per_file)
        variants = sorted({v for pts in per_file.values() for v, _, _ in pts})
        width = 0.8 / len(labels)
        for i, label in enumerate(labels):
            pts = {v: (y, e) for v, y, e in per_file[label]}
            xs = [j + i * width for j, v in enumerate(variants) if v in pts]
            ys = [pts[v][0] for v in variants if v in pts]
            es = [pts[v][1] for v in variants if v in pts]
            ax.bar(xs, ys, width, yerr=es, capsize=3, label=label, color=f"C{i}")
        for c in ceilings[:1]:
            ax.axhline(c, linestyle="--", color="grey")
            ax.annotate(f"copy ceiling {c:.0f} GB/s", (0.01, c), xycoords=("axes fraction", "data"),
                        fontsize=8, va="bottom", color="grey")
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(variants))], variants, fontsize=8)
        ax.set_title(group, fontsize=9)
        ax.set_ylabel("GB/s")
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    fig.suptitle("sigmoid: bytes read + written per second")
    fig.tight_layout()
    path = os.path.join(out_dir, "sigmoid.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def allreduce(loaded, out_dir):
    def key(g, r):
        dtype, nbytes, place = g
        gpus = r.median("gpus") if "gpus" in r.counters else math.nan
        counter = "busbw_GBps" if gpus > 1 else "algbw_GBps"
        if counter not in r.counters:
            return None
        return f"{dtype} {place} ({counter[:5]})", int(nbytes), r.median(counter), r.stdev(counter)
    for _, _, results in loaded:  # gpus is not among the loaded counters by default
        pass
    groups = series(loaded, r"^allreduce/(\w+)/(\d+)/(\w+)/", key)
    if groups:
        return draw(groups, "NCCL all-reduce (busbw as nccl-tests; algbw on one GPU)", "bytes",
                    "GB/s", os.path.join(out_dir, "allreduce.png"), logx=True)


def svd(loaded, out_dir):
    def key(g, r):
        algo, dtype, n = g
        return f"{algo} {dtype}", int(n), r.median_time() / 1e3, r.stdev() / 1e3
    groups = series(loaded, r"^svd/(\w+)/(\w+)/(\d+)/", key)
    if groups:
        return draw(groups, "SVD (cuSOLVER; PyTorch as svd/torch)", "n", "ms",
                    os.path.join(out_dir, "svd.png"), logx=True, logy=True)


def draw_bars(groups, title, ylabel, path):
    """groups: {panel: {file_label: {category: (y, err)}}}; a bar per file in each category."""
    n = len(groups)
    plt, fig, axes = panels(n, 2, 6.5, 3.8)
    for ax, (panel, per_file) in zip(axes.flat, sorted(groups.items())):
        categories = sorted({c for bars in per_file.values() for c in bars})
        width = 0.8 / len(per_file)
        for i, (label, bars) in enumerate(sorted(per_file.items())):
            xs = [j + i * width for j, c in enumerate(categories) if c in bars]
            ys = [bars[c][0] for c in categories if c in bars]
            es = [bars[c][1] for c in categories if c in bars]
            ax.bar(xs, ys, width, yerr=es, capsize=3, label=label, color=f"C{i}")
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(categories))])
        ax.set_xticklabels(categories, rotation=20, fontsize=8)
        ax.set_title(panel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=7)
    return save(plt, fig, axes, n, title, path)


def resnet(loaded, out_dir):
    pattern = r"^(resnet50_train|resnet50_train_graph)/(\w+)/(\w+)/(\d+)/(\d+)/"

    def bars(counter, scale):
        def key(g, r):
            variant, precision, layout, res, batch = g
            if counter not in r.counters:
                return None
            panel = f"{res}x{res}, batch {batch}" + (", CUDA graph" if variant.endswith("graph") else "")
            return panel, f"{precision} {layout}", r.median(counter) / scale, r.stdev(counter) / scale
        # series() gives [(category, y, err)] per panel and file; a bar chart wants them by category.
        return {panel: {label: {c: (y, e) for c, y, e in pts} for label, pts in per_file.items()}
                for panel, per_file in series(loaded, pattern, key).items()}

    written = []
    speed, memory = bars("images_per_s", 1), bars("peak_allocated_bytes", 1e9)
    if speed:
        written.append(draw_bars(speed, "ResNet-50 training step", "images/s",
                                 os.path.join(out_dir, "resnet.png")))
    if memory:
        written.append(draw_bars(memory, "ResNet-50 training step: peak allocated memory", "GB",
                                 os.path.join(out_dir, "resnet-memory.png")))
    return written


def transformer(loaded, out_dir):
    def key(g, r):
        mode, attention, batch = g
        if "peak_allocated_bytes" not in r.counters:
            return None
        return (f"{mode}, {attention} attention", int(batch), r.median("peak_allocated_bytes") / 1e9,
                r.stdev("peak_allocated_bytes") / 1e9)
    groups = series(loaded, r"^transformer_fwd/(\w+)/(\w+)/(\d+)/", key)
    if groups:
        return draw(groups, "nn.Transformer (512 tokens, d_model 512): peak allocated memory",
                    "batch", "GB", os.path.join(out_dir, "transformer.png"), logx=True)


def file_labels(paths, contexts):
    """A legend entry per file that says what stack made it; never two alike, so two files'
    points never merge into one line."""
    labels = [f"{label_of(p, c)} [{os.path.basename(p)}]" for p, c in zip(paths, contexts)]
    return [lab if labels.count(lab) == 1 else f"{label_of(p, c)} [{p}] #{i + 1}"
            for i, (lab, p, c) in enumerate(zip(labels, paths, contexts))]


def main(argv):
    p = cli.parser("tools/plot", __doc__)
    p.add_argument("files", nargs="+", metavar="RESULT.json")
    p.add_argument("--out-dir", required=True, help="the folder for the PNGs (created if absent)")
    args = p.parse_args(argv)
    try:
        import matplotlib  # noqa: F401 - checked before the work, not in the middle of it
    except ImportError:
        raise InputError("matplotlib is missing (Debian: apt-get install python3-matplotlib)")
    if os.path.exists(args.out_dir) and not os.path.isdir(args.out_dir):
        raise InputError(f"--out-dir {args.out_dir}: exists and is not a directory")
    read = [load(f) for f in args.files]
    labels = file_labels(args.files, [ctx for ctx, _ in read])
    loaded = [(label, ctx, results) for label, (ctx, results) in zip(labels, read)]
    out_dir = cli.output_dir(args.out_dir)
    written = [w for w in (gemm(loaded, out_dir), sigmoid(loaded, out_dir),
                           allreduce(loaded, out_dir), svd(loaded, out_dir),
                           transformer(loaded, out_dir)) if w]
    written += resnet(loaded, out_dir)
    if not written:
        raise InputError("nothing to plot: no gemm, sigmoid, allreduce, svd, "
                         "resnet50_train or transformer_fwd results in the files")
    for w in written:
        print(w)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run("tools/plot", main))
