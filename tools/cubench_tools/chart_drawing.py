"""Drawing a chart as every cubench chart is drawn: its panels at most as wide as tools/report's
page shows them, one legend under a wrapped title, a file's colour the same in every panel,
logarithmic axes where the values span decades, reference lines with room for their labels."""
import math
import textwrap

from . import cli

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


