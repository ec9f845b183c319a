"""PNG charts from cubench result files; each file is one colour, the same in every panel and
every chart (in the order the files are given), error bars are the standard deviation over
repetitions. A size axis (gemm's n, a family's size axis) whose sizes span a factor of 10 or more
is logarithmic, its ticks the sizes themselves; any other axis whose values span more than two
decades is logarithmic. Every chart is at most as wide as tools/report's page shows it in a
1200 px window, so that its text is 10 px or more there.

  tools/plot --out-dir plots a.json [b.json ...]

Writes, for the families present, a hand-made chart where there is one: gemm.png (TFLOPS against
size per dtype, with the datasheet peak; every shape: m = n = k joined as a line against n, the
others as hollow markers, each named, against (m*n*k)^(1/3)), sigmoid.png (GB/s with the
measured copy ceiling), allreduce.png (bus bandwidth against bytes, as nccl-tests; runs on one
GPU are left out, with a line on stderr: one rank communicates nothing, so there is no bandwidth
to draw), svd.png (time against n), resnet.png and resnet-memory.png (ResNet-50 images/s, peak
allocated memory, per precision and layout, one panel per resolution/batch and eager or graph),
transformer.png (peak allocated memory against batch, one panel per mode and attention).

Every other family that the files' schema declares (cubench writes one into each result file's
context) gets a generic chart, <family with / as _>.png: its main counter (the time in us where it
has none) against its size axis, a line per file and per combination of its other axes' values
(the file's colour, the combination's marker and line style). A family without a size axis is
drawn as bars: one per file for each combination of its axes' values. A family whose rows carry
no main counter is left out with a line on stderr. Files without a schema get the hand-made
charts only, as before the schema. A file cut mid-write gives its complete rows, with a warning.

Each chart has one legend, under its title, for all its panels (a file's colour is the same in
each): no legend covers a panel's points or its labels, and the title wraps to the chart's width.
"""
import argparse
import math
import os
import sys
import textwrap

from . import cli
from .results import PRE_SCHEMA, InputError, better, label_of, load, merged_schema, unit  # noqa: E402

DECADES_FOR_LOG = 2  # an axis spanning more than 10^2 hides its small values when linear
# A size axis whose largest size is this many times its smallest or more is logarithmic: on a linear
# axis, gemm_decode's m = 1, 8, 64 would put 1 and 8 a tenth of the panel apart and join them to 64.
SIZE_RATIO_FOR_LOG = 10
MAX_SIZE_TICKS = 8  # on a log size axis, every size is a tick up to this many, then every k-th
# The widest a family's chart is shown on tools/report's page in a 1200 px window (page.py: the
# body's 1100 px less the padding and borders of its folded section and of the image). A chart no
# wider is shown at its own size: a font of P points is P / 72 * DPI pixels there, and the
# smallest of them (7 points) is over MIN_TEXT_PX. A wider one would be shrunk, its text with it.
PAGE_CHART_PX = 1072
DPI = 110
CHART_WIDTH_IN = PAGE_CHART_PX / DPI  # every chart's width at most, whatever its panels
MIN_TEXT_PX = 10
# A reference line (a datasheet peak, a copy ceiling) lies at most this high in its panel, so that
# its label, written just above it, stays inside the panel.
REFERENCE_LINE_HEIGHT = 0.85
TITLE_SIZE = 12
LEGEND_SIZE = 8
BAND_PAD = 0.08  # inches around the title and the legend

# The families each hand-made chart draws, rows with their axes (results.PRE_SCHEMA's); a family
# with rows drawn by hand gets no generic chart.
GEMM = ("gemm", "gemm_autotune")
SIGMOID = ("sigmoid",)
ALLREDUCE = ("allreduce",)
SVD = ("svd",)
RESNET = ("resnet50_train", "resnet50_train_graph")
TRANSFORMER = ("transformer_fwd",)
HAND_MADE_FILES = ("gemm.png", "sigmoid.png", "allreduce.png", "svd.png", "resnet.png",
                   "resnet-memory.png", "transformer.png")
# A generic chart's combinations of axis values: marker first, then line style.
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "h", "<", ">", "p")
LINESTYLES = ("-", "--", ":", "-.")


def drawn_family(r):
    """The family whose hand-made chart draws a row, or None: the row's family where it is one of
    results.PRE_SCHEMA's, with that family's axes. A file without a schema gives a row the family
    the tools always gave it, the name less its numbers ("gemm/bf16"), and PRE_SCHEMA's axis
    values: its family is then the one its family begins with."""
    for family, spec in PRE_SCHEMA.families.items():
        if ((r.family == family or r.family.startswith(family + "/"))
                and sorted(r.axis_values) == sorted(a.name for a in spec.axes)):
            return family
    return None


def series(loaded, families, key):
    """{group: {file_label: [(x, y, err)]}} from the timed rows drawn in families' charts;
    key(family, axis values, result) gives (group, x, y, err), or None for a row not drawn."""
    out = {}
    for label, _, results in loaded:
        for r in results.values():
            family = drawn_family(r)
            if family not in families or not r.measured():
                continue
            point = key(family, r.axis_values, r)
            if point is None:
                continue
            group, x, y, err = point
            out.setdefault(group, {}).setdefault(label, []).append((x, y, err))
    return out


def panels(n, max_cols, height, width=CHART_WIDTH_IN):
    """A figure of n panels, max_cols to a row, each row height inches tall; the figure width
    inches wide, never wider than the page shows a chart (CHART_WIDTH_IN): (pyplot, figure, axes)."""
    plt = cli.pyplot()
    cols = min(max_cols, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(min(width, CHART_WIDTH_IN), height * rows), squeeze=False)
    return plt, fig, axes


def save(plt, fig, axes, n, title, path):
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    lay_out(fig, list(axes.flat)[:n], title)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def lay_out(fig, axes, title):
    """The title on top, wrapped to the figure's width, the one legend of the panels' series
    under it, the panels below both: the figure grows by the band they take, so the panels keep
    their size."""
    renderer = fig.canvas.get_renderer()
    pad = BAND_PAD * fig.dpi
    heading = fig.text(0.5, 1, title, ha="center", va="top", fontsize=TITLE_SIZE)
    wrap_to_width(heading, 0.96 * fig.bbox.width, renderer)
    heading_h = heading.get_window_extent(renderer).height
    handles, labels = legend_entries(axes)
    legend = fitted_legend(fig, handles, labels, renderer) if handles else None
    legend_h = legend.get_window_extent(renderer).height if legend else 0
    band = pad + heading_h + pad + (legend_h + pad if legend else 0)  # pixels
    width_in, height_in = fig.get_size_inches()
    fig.set_size_inches(width_in, height_in + band / fig.dpi)
    height = fig.bbox.height
    heading.set_y(1 - pad / height)
    if legend:
        legend.set_bbox_to_anchor((0.5, 1 - (2 * pad + heading_h) / height), transform=fig.transFigure)
    fig.tight_layout(rect=(0, 0, 1, 1 - band / height))


def wrap_to_width(text, width, renderer):
    """Text's lines shortened until it is no wider than width (pixels)."""
    words = text.get_text()
    chars = len(words)
    while chars > 20 and text.get_window_extent(renderer).width > width:
        chars = int(chars * 0.9)
        text.set_text(textwrap.fill(words, chars))


def legend_entries(axes):
    """(handles, labels) of every panel's labelled series, each label once, in the order drawn;
    entries that only say what a marker means (a line without points) after the files'."""
    seen = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    entries = sorted(seen.items(), key=lambda e: is_key_only(e[1]))  # stable: the order drawn
    return [h for _, h in entries], [label for label, _ in entries]


def is_key_only(handle):
    return hasattr(handle, "get_xdata") and len(handle.get_xdata()) == 0


def fitted_legend(fig, handles, labels, renderer):
    """The figure's legend with as many columns as fit in its width."""
    for ncol in range(len(labels), 0, -1):
        legend = fig.legend(handles, labels, loc="upper center", ncol=ncol, fontsize=LEGEND_SIZE,
                            frameon=False, bbox_to_anchor=(0.5, 1), bbox_transform=fig.transFigure)
        if ncol == 1 or legend.get_window_extent(renderer).width <= 0.96 * fig.bbox.width:
            return legend
        legend.remove()


def reference_line(ax, value, text):
    """A dashed line at value (a datasheet peak, a copy ceiling) with its label just above it,
    at the left; room_above_lines then keeps both inside the panel."""
    ax.axhline(value, linestyle="--", color="grey")
    # on a pale box: bars as high as the line (a copy at the ceiling) would run through the words
    ax.annotate(text, (0.02, value), xycoords=("axes fraction", "data"), fontsize=8, va="bottom",
                color="dimgrey", bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=1))


def room_above_lines(ax, values):
    """Raises the panel's top so that the highest of values lies at most REFERENCE_LINE_HEIGHT
    of the way up (in the axis' scale, linear or log): its label above it stays inside."""
    if not values:
        return
    scale = ax.yaxis.get_transform()
    bottom, top = ax.get_ylim()
    low, line = scale.transform([bottom, max(values)])
    needed = scale.inverted().transform([low + (line - low) / REFERENCE_LINE_HEIGHT])[0]
    if needed > top:
        ax.set_ylim(bottom, needed)


def colours_of(loaded):
    """One colour per file, from the order of the files: the same in every panel and chart."""
    return {label: f"C{i % 10}" for i, (label, _, _) in enumerate(loaded)}


def in_file_order(per_file, colours):
    return [(label, per_file[label]) for label in colours if label in per_file]


def spans_decades(values):
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    return bool(positive) and max(positive) / min(positive) > 10 ** DECADES_FOR_LOG


def wide_sizes(sizes):
    """Whether a size axis of these sizes is logarithmic: its largest SIZE_RATIO_FOR_LOG times its
    smallest or more."""
    positive = [v for v in sizes if v > 0 and math.isfinite(v)]
    return bool(positive) and max(positive) / min(positive) >= SIZE_RATIO_FOR_LOG


def size_label(v):
    """A size as a tick label: the number as written up to 99999 (1, 64, 16384), then in binary or
    decimal multiples where exact (256Mi, 10M), else as %g."""
    if v != int(v):
        return f"{v:g}"
    v = int(v)
    if v < 100000:
        return str(v)
    for suffix, unit in (("Gi", 2 ** 30), ("Mi", 2 ** 20), ("Ki", 2 ** 10), ("G", 10 ** 9), ("M", 10 ** 6),
                         ("k", 10 ** 3)):
        if v % unit == 0:
            return f"{v // unit}{suffix}"
    return f"{v:g}"


def log_size_axis(ax, sizes, base=10):
    """ax's x axis logarithmic, its ticks the sizes (at most MAX_SIZE_TICKS of them, the smallest
    among them) labelled as numbers, no other tick labelled."""
    from matplotlib.ticker import NullFormatter
    ax.set_xscale("log", base=base)
    ticks = sorted({v for v in sizes if v > 0 and math.isfinite(v)})
    if not ticks:
        return
    ticks = ticks[::math.ceil(len(ticks) / MAX_SIZE_TICKS)]
    ax.set_xticks(ticks, [size_label(v) for v in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())


def draw(groups, colours, title, xlabel, ylabel, path, logx=False, logy=False, lines=None, apart=None,
         apart_xlabel=None):
    """A panel per group, a line per file; logx/logy force a log axis, which a panel also gets
    where its sizes span SIZE_RATIO_FOR_LOG or more (y: more than DECADES_FOR_LOG decades); a log x
    axis has the lines' sizes as its ticks. lines: {group: [(y, label)]},
    reference lines; apart: {group: {file label: [(x, y, err, name)]}}, points that belong to no
    line (gemm's shapes other than m = n = k), drawn as hollow markers in the file's colour and
    named once per panel, whose x label is then apart_xlabel."""
    apart = apart or {}
    names = sorted(set(groups) | set(apart))
    plt, fig, axes = panels(len(names), 2, 3.6)
    for ax, group in zip(axes.flat, names):
        xs_all, ys_all, sizes = [], [], []
        for label, pts in in_file_order(groups.get(group, {}), colours):
            pts.sort()
            xs, ys, es = zip(*pts)
            xs_all += xs
            ys_all += ys
            sizes += xs
            ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=label, color=colours[label])
        names_at = draw_apart(ax, apart.get(group, {}), colours)
        xs_all += [x for x, _ in names_at.values()]
        ys_all += [y for _, y in names_at.values()]
        ax.set_title(group)
        ax.set_xlabel(apart_xlabel if names_at and apart_xlabel else xlabel)
        ax.set_ylabel(ylabel)
        if logx or wide_sizes(xs_all):
            log_size_axis(ax, sizes, base=2)
        if logy or spans_decades(ys_all):
            ax.set_yscale("log")
        name_points(ax, names_at)
        references = (lines or {}).get(group, [])
        for value, text in references:
            reference_line(ax, value, text)
        room_above_lines(ax, [value for value, _ in references])
        ax.grid(alpha=0.3)
    return save(plt, fig, axes, len(names), title, path)


def draw_apart(ax, per_file, colours):
    """The points of no line: a hollow marker per file and point. Returns {name: (x, y)}, the
    highest marker of each name, where name_points writes it."""
    highest = {}
    for label, pts in in_file_order(per_file, colours):
        for x, y, err, name in sorted(pts):
            ax.errorbar([x], [y], yerr=[err], marker="D", markerfacecolor="white", linestyle="none",
                        capsize=3, color=colours[label], label=f"_{label}: {name}")  # "_": in no legend
            if y >= highest.get(name, (x, -math.inf))[1]:
                highest[name] = (x, y)
    if highest:  # one legend entry for what the hollow markers are, in no file's colour
        ax.plot([], [], marker="D", markerfacecolor="white", color="grey", linestyle="none",
                label="hollow: m, n, k not all equal (named), at (m*n*k)^(1/3)")
    return highest


def name_points(ax, names_at):
    """Each name just above its point, once the axes' scales are set: leaning left of a point in
    the panel's right quarter and right of one in its left quarter, so it stays inside."""
    for name, (x, y) in sorted(names_at.items()):
        across = ax.transAxes.inverted().transform(ax.transData.transform((x, y)))[0]
        ha = "right" if across > 0.75 else "left" if across < 0.25 else "center"
        ax.annotate(name, (x, y), xytext=(0, 6), textcoords="offset points", ha=ha, fontsize=7)


def gemm_points(loaded):
    """(squares, others) of every gemm row with TFLOPS: squares {panel: {file label: [(n, y,
    err)]}} for m = n = k, a line per file; others {panel: {file label: [(x, y, err, "MxNxK")]}}
    for the other shapes, at x = (m*n*k)^(1/3), the n of a square of the same work."""
    squares, others = {}, {}
    for label, _, results in loaded:
        for r in results.values():
            family = drawn_family(r)
            if family not in GEMM or not r.measured() or "TFLOPS" not in r.counters:
                continue
            a = r.axis_values
            m, n, k = a["m"], a["n"], a["k"]
            panel, y, err = f"{family} {a['dtype']}", r.median("TFLOPS"), r.stdev("TFLOPS")
            if m == n == k:
                squares.setdefault(panel, {}).setdefault(label, []).append((m, y, err))
            else:
                x = (m * n * k) ** (1 / 3)
                others.setdefault(panel, {}).setdefault(label, []).append((x, y, err, f"{m}x{n}x{k}"))
    return squares, others


def gemm_peaks(loaded):
    """{panel: [(datasheet peak, its label)]} from the rows' pct_peak."""
    lines = {}
    for _, _, results in loaded:
        for r in results.values():
            family = drawn_family(r)
            if family in GEMM and "pct_peak" in r.counters and r.median("pct_peak") > 0:
                peak = r.median("TFLOPS") / (r.median("pct_peak") / 100)
                lines[f"{family} {r.axis_values['dtype']}"] = [(peak, f"datasheet peak {peak:.0f} TFLOP/s")]
    return lines


def gemm(loaded, out_dir):
    squares, others = gemm_points(loaded)
    if not squares and not others:
        return [], []
    title = ("GEMM (cuBLASLt): every shape; m = n = k as lines, the others as hollow markers" if others
             else "GEMM (cuBLASLt), square sizes")
    return [lambda: draw(squares, colours_of(loaded), title, "n (m = n = k)", "TFLOP/s",
                         os.path.join(out_dir, "gemm.png"), logx=True, lines=gemm_peaks(loaded),
                         apart=others, apart_xlabel="n (m = n = k); hollow: (m*n*k)^(1/3)")], []


def sigmoid(loaded, out_dir):
    def key(_, a, r):
        return f"{a['dtype']} n={a['n']} {a['cache']}", a["variant"], r.median("GBps"), r.stdev("GBps")
    raw = series(loaded, SIGMOID, key)
    return ([lambda: draw_sigmoid(loaded, raw, out_dir)] if raw else []), []


def draw_sigmoid(loaded, raw, out_dir):
    groups = sorted(raw)
    plt, fig, axes = panels(len(groups), 2, 2.8)  # a dtype and n a row: cold and hot side by side
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
            reference_line(ax, c, f"copy ceiling {c:.0f} GB/s")
        room_above_lines(ax, ceilings[:1])
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(variants))], variants, fontsize=8)
        ax.set_title(group, fontsize=9)
        ax.set_ylabel("GB/s")
    return save(plt, fig, axes, len(groups), "sigmoid: bytes read + written per second",
                os.path.join(out_dir, "sigmoid.png"))


def allreduce(loaded, out_dir):
    # One rank communicates nothing: NCCL copies (out of place) or returns (in place), and the
    # "bandwidth" of that is a copy's or about 10^6 GB/s. Such rows are left out, not drawn.
    left_out = {"one-GPU benchmark(s)": 0, "benchmark(s) without a gpus counter": 0}

    def key(_, a, r):
        gpus = r.median("gpus")
        if math.isnan(gpus) or gpus <= 1:
            left_out["benchmark(s) without a gpus counter" if math.isnan(gpus) else "one-GPU benchmark(s)"] += 1
            return None
        if "busbw_GBps" not in r.counters:
            return None
        return (f"{a['dtype']} {a['placement']}, {gpus:.0f} GPUs", a["bytes"], r.median("busbw_GBps"),
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
    def key(_, a, r):
        return f"{a['algo']} {a['dtype']}", a["n"], r.median_time() / 1e3, r.stdev() / 1e3
    groups = series(loaded, SVD, key)
    if not groups:
        return [], []
    return [lambda: draw(groups, colours_of(loaded), "SVD (cuSOLVER; PyTorch as svd/torch)", "n", "ms",
                         os.path.join(out_dir, "svd.png"), logx=True, logy=True)], []


def draw_bars(groups, colours, title, ylabel, path):
    """groups: {panel: {file_label: {category: (y, err)}}}; a bar per file in each category."""
    n = len(groups)
    plt, fig, axes = panels(n, 2, 3.8)
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
    return save(plt, fig, axes, n, title, path)


def resnet(loaded, out_dir):
    def bars(counter, scale):
        def key(family, a, r):
            if counter not in r.counters:
                return None
            graph = ", CUDA graph" if family.endswith("graph") else ""
            panel = f"{a['res']}x{a['res']}, batch {a['batch']}{graph}"
            return panel, f"{a['precision']} {a['format']}", r.median(counter) / scale, r.stdev(counter) / scale
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
    def key(_, a, r):
        if "peak_allocated_bytes" not in r.counters:
            return None
        return (f"{a['mode']}, {a['attention']} attention", a["batch"], r.median("peak_allocated_bytes") / 1e9,
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
        for r in results.values():
            family, axes = r.family, r.axis_values
            if family not in schema.families:
                continue
            if set(axes) != {a.name for a in schema.families[family].axes}:
                continue  # a name its family's axes do not read (another build's): no point to draw
            if drawn_family(r) is not None:
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
        if not r.measured():
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
        plt, fig, axes = panels(1, 1, 4.8)
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
        if wide_sizes(xs_all):
            log_size_axis(ax, xs_all, base=2 if spec.axis(spec.size_axis).kind == "pow2" else 10)
    else:
        categories = sorted({x for pts in points.values() for x, _, _ in pts})
        plt, fig, axes = panels(1, 1, 4.8, width=max(6, 0.9 * len(categories) * len(labels)))
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
        cli.quiet_matplotlib()
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

