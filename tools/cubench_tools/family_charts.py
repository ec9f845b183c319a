"""The charts each family gets from its rows: a hand-made one where there is one (gemm, sigmoid,
allreduce, svd, resnet, transformer), a generic one for every other family a schema declares, and
charts_for(), all of them for a set of loaded files (tools/plot and tools/report draw these)."""
import math
import os

from . import chart_drawing
from .chart_drawing import (colours_of, draw, draw_bars, in_file_order, log_size_axis, panels, reference_line,
                            room_above_lines, spans_decades, wide_sizes)
from .result_schema import PRE_SCHEMA, better, merged_schema, unit

# The families each hand-made chart draws, rows with their axes (result_schema.PRE_SCHEMA's); a family
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
    result_schema.PRE_SCHEMA's, with that family's axes. A file without a schema gives a row the family
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
    return chart_drawing.save(plt, fig, axes, len(groups), "sigmoid: bytes read + written per second",
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
    return chart_drawing.save(plt, fig, axes, 1, title, path)


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

