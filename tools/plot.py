"""PNG charts from cubench result files; each file is one colour, the same in every panel and
every chart (in the order the files are given), error bars are the standard deviation over
repetitions. An axis whose values span more than two decades is logarithmic.

  tools/plot --out-dir plots a.json [b.json ...]

Writes, for the families present, a hand-made chart where there is one: gemm.png (TFLOPS against
size per dtype, with the datasheet peak), sigmoid.png (GB/s with the measured copy ceiling),
allreduce.png (bus bandwidth against bytes, as nccl-tests; runs on one GPU are left out, with a
line on stderr: one rank communicates nothing, so there is no bandwidth to draw), svd.png (time
against n), resnet.png and resnet-memory.png (ResNet-50 images/s, peak allocated memory, per
precision and layout, one panel per resolution/batch and eager or graph), transformer.png (peak
allocated memory against batch, one panel per mode and attention).

Every other family that the files' schema declares (cubench writes one into each result file's
context) gets a generic chart, <family with / as _>.png: its main counter (the time in us where it
has none) against its size axis, a line per file and per combination of its other axes' values
(the file's colour, the combination's marker and line style). A family without a size axis is
drawn as bars: one per file for each combination of its axes' values. A family whose rows carry
no main counter is left out with a line on stderr. Files without a schema get the hand-made
charts only, as before the schema. A file cut mid-write gives its complete rows, with a warning.
"""
import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli  # noqa: E402
from results import InputError, better, family_and_axes, label_of, load, merged_schema, unit  # noqa: E402

DECADES_FOR_LOG = 2  # an axis spanning more than 10^2 hides its small values when linear

# The names each hand-made chart draws. A family with rows of these gets no generic chart.
GEMM = r"^(gemm|gemm_autotune)/(\w+)/(\d+)/(\d+)/(\d+)/"
SIGMOID = r"^sigmoid/(\w+)/(\w+)/(\d+)/(cold|hot)/"
ALLREDUCE = r"^allreduce/(\w+)/(\d+)/(\w+)/"
SVD = r"^svd/(\w+)/(\w+)/(\d+)/"
RESNET = r"^(resnet50_train|resnet50_train_graph)/(\w+)/(\w+)/(\d+)/(\d+)/"
TRANSFORMER = r"^transformer_fwd/(\w+)/(\w+)/(\d+)/"
HAND_MADE = (GEMM, SIGMOID, ALLREDUCE, SVD, RESNET, TRANSFORMER)
HAND_MADE_FILES = ("gemm.png", "sigmoid.png", "allreduce.png", "svd.png", "resnet.png",
                   "resnet-memory.png", "transformer.png")
# A generic chart's combinations of axis values: marker first, then line style.
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "h", "<", ">", "p")
LINESTYLES = ("-", "--", ":", "-.")


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


def colours_of(loaded):
    """One colour per file, from the order of the files: the same in every panel and chart."""
    return {label: f"C{i % 10}" for i, (label, _, _) in enumerate(loaded)}


def in_file_order(per_file, colours):
    return [(label, per_file[label]) for label in colours if label in per_file]


def spans_decades(values):
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    return bool(positive) and max(positive) / min(positive) > 10 ** DECADES_FOR_LOG


def draw(groups, colours, title, xlabel, ylabel, path, logx=False, logy=False, lines=None):
    """A panel per group, a line per file; logx/logy force a log axis, which a panel also gets
    where its values span more than DECADES_FOR_LOG decades."""
    n = len(groups)
    plt, fig, axes = panels(n, 3, 5, 3.6)
    for ax, (group, per_file) in zip(axes.flat, sorted(groups.items())):
        xs_all, ys_all = [], []
        for label, pts in in_file_order(per_file, colours):
            pts.sort()
            xs, ys, es = zip(*pts)
            xs_all += xs
            ys_all += ys
            ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=label, color=colours[label])
        for value, text in (lines or {}).get(group, []):
            ax.axhline(value, linestyle="--", color="grey")
            ax.annotate(text, (0.01, value), xycoords=("axes fraction", "data"), fontsize=8,
                        va="bottom", color="grey")
        ax.set_title(group)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if logx or spans_decades(xs_all):
            ax.set_xscale("log", base=2)
        if logy or spans_decades(ys_all):
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
    groups = series(loaded, GEMM, key)
    lines = {}
    for _, _, results in loaded:
        for name, r in results.items():
            g = parse(name, r"^(gemm|gemm_autotune)/(\w+)/")
            if g and "pct_peak" in r.counters and r.median("pct_peak") > 0:
                peak = r.median("TFLOPS") / (r.median("pct_peak") / 100)
                lines[f"{g[0]} {g[1]}"] = [(peak, f"datasheet peak {peak:.0f} TFLOP/s")]
    if not groups:
        return [], []
    return [lambda: draw(groups, colours_of(loaded), "GEMM (cuBLASLt), square sizes", "n (m = n = k)",
                         "TFLOP/s", os.path.join(out_dir, "gemm.png"), logx=True, lines=lines)], []


def sigmoid(loaded, out_dir):
    def key(g, r):
        variant, dtype, n, cache = g
        return f"{dtype} n={n} {cache}", variant, r.median("GBps"), r.stdev("GBps")
    raw = series(loaded, SIGMOID, key)
    return ([lambda: draw_sigmoid(loaded, raw, out_dir)] if raw else []), []


def draw_sigmoid(loaded, raw, out_dir):
    groups = sorted(raw)
    plt, fig, axes = panels(len(groups), 4, 4.5, 3.4)
    ceilings = [float(c.get("copy_ceiling_GBps", 0)) for _, c, _ in loaded if c.get("copy_ceiling_GBps")]
    colours = colours_of(loaded)
    for ax, group in zip(axes.flat, groups):
        per_file = raw[group]
        variants = sorted({v for pts in per_file.values() for v, _, _ in pts})
        width = 0.8 / len(per_file)
        for i, (label, file_pts) in enumerate(in_file_order(per_file, colours)):
            pts = {v: (y, e) for v, y, e in file_pts}
            xs = [j + i * width for j, v in enumerate(variants) if v in pts]
            ys = [pts[v][0] for v in variants if v in pts]
            es = [pts[v][1] for v in variants if v in pts]
            ax.bar(xs, ys, width, yerr=es, capsize=3, label=label, color=colours[label])
        for c in ceilings[:1]:
            ax.axhline(c, linestyle="--", color="grey")
            ax.annotate(f"copy ceiling {c:.0f} GB/s", (0.01, c), xycoords=("axes fraction", "data"),
                        fontsize=8, va="bottom", color="grey")
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(variants))], variants, fontsize=8)
        ax.set_title(group, fontsize=9)
        ax.set_ylabel("GB/s")
        ax.legend(fontsize=6)
    return save(plt, fig, axes, len(groups), "sigmoid: bytes read + written per second",
                os.path.join(out_dir, "sigmoid.png"))


def allreduce(loaded, out_dir):
    # One rank communicates nothing: NCCL copies (out of place) or returns (in place), and the
    # "bandwidth" of that is a copy's or about 10^6 GB/s. Such rows are left out, not drawn.
    left_out = {"one-GPU benchmark(s)": 0, "benchmark(s) without a gpus counter": 0}

    def key(g, r):
        dtype, nbytes, place = g
        gpus = r.median("gpus")
        if math.isnan(gpus) or gpus <= 1:
            left_out["benchmark(s) without a gpus counter" if math.isnan(gpus) else "one-GPU benchmark(s)"] += 1
            return None
        if "busbw_GBps" not in r.counters:
            return None
        return (f"{dtype} {place}, {gpus:.0f} GPUs", int(nbytes), r.median("busbw_GBps"),
                r.stdev("busbw_GBps"))
    groups = series(loaded, ALLREDUCE, key)
    skipped = " and ".join(f"{n} {what}" for what, n in left_out.items() if n)
    notes = [f"allreduce: left out {skipped}: without two or more ranks nothing is communicated, "
             f"so there is no bus bandwidth to draw{'' if groups else '; no allreduce.png'}"] if skipped else []
    if not groups:
        return [], notes
    title = "NCCL all-reduce: bus bandwidth (busbw, as nccl-tests)"
    if skipped:
        title += f"; left out: {skipped}"
    return [lambda: draw(groups, colours_of(loaded), title, "bytes", "GB/s",
                         os.path.join(out_dir, "allreduce.png"), logx=True)], notes


def svd(loaded, out_dir):
    def key(g, r):
        algo, dtype, n = g
        return f"{algo} {dtype}", int(n), r.median_time() / 1e3, r.stdev() / 1e3
    groups = series(loaded, SVD, key)
    if not groups:
        return [], []
    return [lambda: draw(groups, colours_of(loaded), "SVD (cuSOLVER; PyTorch as svd/torch)", "n", "ms",
                         os.path.join(out_dir, "svd.png"), logx=True, logy=True)], []


def draw_bars(groups, colours, title, ylabel, path):
    """groups: {panel: {file_label: {category: (y, err)}}}; a bar per file in each category."""
    n = len(groups)
    plt, fig, axes = panels(n, 2, 6.5, 3.8)
    for ax, (panel, per_file) in zip(axes.flat, sorted(groups.items())):
        categories = sorted({c for bars in per_file.values() for c in bars})
        width = 0.8 / len(per_file)
        for i, (label, bars) in enumerate(in_file_order(per_file, colours)):
            xs = [j + i * width for j, c in enumerate(categories) if c in bars]
            ys = [bars[c][0] for c in categories if c in bars]
            es = [bars[c][1] for c in categories if c in bars]
            ax.bar(xs, ys, width, yerr=es, capsize=3, label=label, color=colours[label])
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(categories))])
        ax.set_xticklabels(categories, rotation=20, fontsize=8)
        ax.set_title(panel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=7)
    return save(plt, fig, axes, n, title, path)


def resnet(loaded, out_dir):
    def bars(counter, scale):
        def key(g, r):
            variant, precision, layout, res, batch = g
            if counter not in r.counters:
                return None
            panel = f"{res}x{res}, batch {batch}" + (", CUDA graph" if variant.endswith("graph") else "")
            return panel, f"{precision} {layout}", r.median(counter) / scale, r.stdev(counter) / scale
        # series() gives [(category, y, err)] per panel and file; a bar chart wants them by category.
        return {panel: {label: {c: (y, e) for c, y, e in pts} for label, pts in per_file.items()}
                for panel, per_file in series(loaded, RESNET, key).items()}

    speed, memory = bars("images_per_s", 1), bars("peak_allocated_bytes", 1e9)
    charts = [lambda: draw_bars(speed, colours_of(loaded), "ResNet-50 training step", "images/s",
                                os.path.join(out_dir, "resnet.png"))] if speed else []
    charts += [lambda: draw_bars(memory, colours_of(loaded), "ResNet-50 training step: peak allocated memory",
                                 "GB", os.path.join(out_dir, "resnet-memory.png"))] if memory else []
    return charts, []


def transformer(loaded, out_dir):
    def key(g, r):
        mode, attention, batch = g
        if "peak_allocated_bytes" not in r.counters:
            return None
        return (f"{mode}, {attention} attention", int(batch), r.median("peak_allocated_bytes") / 1e9,
                r.stdev("peak_allocated_bytes") / 1e9)
    groups = series(loaded, TRANSFORMER, key)
    if not groups:
        return [], []
    return [lambda: draw(groups, colours_of(loaded),
                         "nn.Transformer (512 tokens, d_model 512): peak allocated memory",
                         "batch", "GB", os.path.join(out_dir, "transformer.png"), logx=True)], []


def generic(loaded, out_dir):
    """A chart per family that the files' schema declares and no hand-made chart draws: its main
    counter (or the time) against its size axis, a line per file and combination of the other
    axes' values; bars per combination where it has no size axis. Returns (charts, notes)."""
    schema = merged_schema([ctx for _, ctx, _ in loaded])
    if schema is None:
        return [], []
    rows, hand_made = {}, set()  # family -> [(file label, {axis: value}, Result)]
    for label, _, results in loaded:
        for name, r in results.items():
            family, axes = family_and_axes(r.run_name, schema)
            if family not in schema.families:
                continue
            if set(axes) != {a.name for a in schema.families[family].axes}:
                continue  # a name its family's axes do not read (another build's): no point to draw
            if any(re.match(pattern, name) for pattern in HAND_MADE):
                hand_made.add(family)
            rows.setdefault(family, []).append((label, axes, r))
    charts, notes, taken = [], [], set(HAND_MADE_FILES)
    for family in sorted(set(rows) - hand_made):
        spec = schema.families[family]
        file = family.replace("/", "_") + ".png"
        if file in taken:
            notes.append(f"{family}: its chart's name {file} is another chart's; not drawn")
            continue
        taken.add(file)
        points, missing = generic_points(spec, rows[family])
        counter = spec.main_counter
        if missing:
            notes.append(f"{family}: left out {missing} benchmark(s) without its main counter "
                         f"{counter}{'' if points else f'; no {file}'}")
        if not points:
            continue
        ylabel = (f"{counter} ({unit(counter, schema)})" if unit(counter, schema) else counter) if counter \
            else "time (us)"
        direction = better(counter, schema) if counter else "lower"
        if direction != "none":
            ylabel += f", {direction} is better"
        title = f"{family}: {spec.description}" if spec.description else family
        charts.append(lambda spec=spec, points=points, ylabel=ylabel, title=title, file=file:
                      draw_generic(spec, points, colours_of(loaded), title, ylabel,
                                   os.path.join(out_dir, file)))
    return charts, notes


def generic_points(spec, rows):
    """({(combination, file label): [(x, y, err)]}, how many rows lack the main counter), where
    combination is ((axis, value), ...) of the axes other than the size axis and x the size; for a
    family without a size axis, combination is () and x the tuple of all its axes' values."""
    points, missing = {}, 0
    counter = spec.main_counter
    for label, axes, r in rows:
        if r.error or not r.times:
            continue
        if not counter:
            y, err = r.median_time(), r.stdev()
        elif math.isnan(r.median(counter)):
            missing += 1
            continue
        else:
            y, err = r.median(counter), r.stdev(counter)
        if spec.size_axis:
            combination = tuple((a.name, axes[a.name]) for a in spec.axes if a.name != spec.size_axis)
            x = axes[spec.size_axis]
        else:
            combination, x = (), tuple(axes[a.name] for a in spec.axes)
        points.setdefault((combination, label), []).append((x, y, err))
    return points, missing


def draw_generic(spec, points, colours, title, ylabel, path):
    """One panel: with a size axis, a line per (combination, file), the file's colour and the
    combination's marker and line style; without one, a bar per file in each combination."""
    labels = [label for label in colours if any(lab == label for _, lab in points)]
    if spec.size_axis:
        plt, fig, axes = panels(1, 1, 8, 4.8)
        ax = axes.flat[0]
        combinations = sorted({c for c, _ in points})
        xs_all, ys_all = [], []
        for label in labels:
            for i, combination in enumerate(combinations):
                pts = sorted(points.get((combination, label), []))
                if not pts:
                    continue
                xs, ys, es = zip(*pts)
                xs_all += xs
                ys_all += ys
                text = ", ".join(f"{axis}={value}" for axis, value in combination)
                ax.errorbar(xs, ys, yerr=es, capsize=3, color=colours[label],
                            marker=MARKERS[i % len(MARKERS)],
                            linestyle=LINESTYLES[i // len(MARKERS) % len(LINESTYLES)],
                            label=f"{text}: {label}" if text else label)
        ax.set_xlabel(spec.size_axis)
        if spans_decades(xs_all):
            ax.set_xscale("log", base=2 if spec.axis(spec.size_axis).kind == "pow2" else 10)
    else:
        categories = sorted({x for pts in points.values() for x, _, _ in pts})
        plt, fig, axes = panels(1, 1, min(24, max(6, 0.9 * len(categories) * len(labels))), 4.8)
        ax = axes.flat[0]
        width, ys_all = 0.8 / len(labels), []
        for i, label in enumerate(labels):
            bars = {x: (y, e) for x, y, e in points[((), label)]}
            ys = [bars[c][0] for c in categories if c in bars]
            ys_all += ys
            ax.bar([j + i * width for j, c in enumerate(categories) if c in bars], ys, width,
                   yerr=[bars[c][1] for c in categories if c in bars], capsize=3, label=label,
                   color=colours[label])
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(categories))])
        ax.set_xticklabels(["/".join(map(str, c)) or spec.name for c in categories], rotation=20, fontsize=8)
        ax.set_xlabel("/".join(a.name for a in spec.axes))
    ax.set_ylabel(ylabel)
    if spans_decades(ys_all):
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=1 + len(ax.get_legend_handles_labels()[0]) // 12)
    return save(plt, fig, axes, 1, title, path)


# Every family's charts, hand-made first: each returns (charts to draw, notes on what it left out).
FAMILY_CHARTS = (gemm, sigmoid, allreduce, svd, transformer, resnet, generic)


def charts_for(loaded, out_dir):
    """(charts, notes) for loaded = [(file label, context, {name: Result})]: a chart is a function
    that draws it and returns its path; nothing is drawn or made until one is called."""
    charts, notes = [], []
    for family in FAMILY_CHARTS:
        its_charts, its_notes = family(loaded, out_dir)
        charts += its_charts
        notes += its_notes
    return charts, notes


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
    # Each family gives the charts it would draw (a function each) and notes on what it left out;
    # the folder is made, and the notes said, only once there is a chart to write into it.
    out_dir = args.out_dir
    charts, notes = charts_for(loaded, out_dir)
    if not charts:  # one line: what was left out is part of why there is nothing
        raise InputError("nothing to plot: no gemm, sigmoid, multi-GPU allreduce, svd, "
                         "resnet50_train, transformer_fwd or other schema-declared family's "
                         "results in the files" + "".join(f" ({note})" for note in notes))
    cli.output_dir(out_dir)
    for note in notes:
        print(f"tools/plot: {note}", file=sys.stderr)
    for chart in charts:
        print(chart())
    return 0


if __name__ == "__main__":
    sys.exit(cli.run("tools/plot", main))
