"""The page's one chart of every row: each build's speed-up against the base, row by row, with the
interval the verdict rule saw, on a log axis (2x faster and 2x slower are as far from 1), the rows
grouped by family and coloured by their verdict. A reader sees at once how many rows moved, which
way, and which moves are inside their own noise."""
import math
import statistics

from . import cli
from . import verdicts

COLOURS = {verdicts.FASTER: "#1a7f37", verdicts.SLOWER: "#cf222e", verdicts.SAME: "#8c959f",
           verdicts.TOO_NOISY: "#bf8700"}
FONT_PT = 10  # at the chart's 100 dpi and the page's 1100 px: 10 px text or more


def log_half_width(base, other):
    """The half-width, in log ratio, of a speed-up's interval: where both sides are several
    processes, their spreads (interquartile range / median) added; else twice the larger of the
    rows' own sample spreads (the one-process rule's own margin). 0 where nothing says."""
    if len(base.times) >= 2 and len(other.times) >= 2:
        return verdicts.spread(base.times) + verdicts.spread(other.times)
    noise = max(verdicts.own_noise(base), verdicts.own_noise(other))
    return 0.0 if math.isnan(noise) else verdicts.NOISE_MULTIPLE * noise


def draw(path, rows, builds, families):
    """rows: [(row name, build index, base Result, other Result, Verdict)]; builds: the other
    builds' labels by index; families: {row name: family}. Writes the PNG; its path."""
    plt = cli.pyplot()
    order = list(dict.fromkeys(n for n, *_ in rows))
    x_of = {n: k for k, n in enumerate(order)}
    fig, ax = plt.subplots(figsize=(11, 4.2), dpi=100)
    offsets = {i: (k - (len(builds) - 1) / 2) * 0.25 for k, i in enumerate(sorted(builds))}
    markers = "os^Dv"
    for i in sorted(builds):
        mine = [r for r in rows if r[1] == i]
        for word, colour in COLOURS.items():
            pick = [r for r in mine if r[4].word == word]
            if not pick:
                continue
            xs = [x_of[n] + offsets[i] for n, *_ in pick]
            ys = [v.speedup for *_, v in pick]
            half = [log_half_width(b, o) for _, _, b, o, _ in pick]
            lo = [y - y * math.exp(-h) for y, h in zip(ys, half)]
            hi = [y * math.exp(h) - y for y, h in zip(ys, half)]
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt=markers[sorted(builds).index(i) % len(markers)],
                        color=colour, ms=4, lw=0.8, capsize=0,
                        label=f"{builds[i]}: {word}" if len(builds) > 1 else word)
    ax.set_yscale("log")
    ax.axhline(1.0, color="#57606a", lw=0.8)
    ax.set_ylabel(f"speed-up (base time / build time), log", fontsize=FONT_PT)
    spans = {}
    for n in order:
        spans.setdefault(families[n], []).append(x_of[n])
    for k, (family, xs) in enumerate(spans.items()):
        if k:
            ax.axvline(min(xs) - 0.5, color="#d0d7de", lw=0.8)
    ax.set_xticks([statistics.mean(xs) for xs in spans.values()])
    ax.set_xticklabels([f.replace("/", "/\n") if len(xs) < 4 else f for f, xs in spans.items()],
                       fontsize=FONT_PT, rotation=30, ha="right")
    ax.set_xlim(-0.8, len(order) - 0.2)
    ax.tick_params(axis="y", labelsize=FONT_PT)
    low, high = ax.get_ylim()  # ticks a reader reads as factors: 0.5x, 1x, 2x, 4x
    ticks = [2.0 ** k for k in range(-8, 9) if low <= 2.0 ** k <= high]
    ax.set_yticks(ticks)
    ax.set_yticklabels([f"{t:g}x" for t in ticks])
    ax.yaxis.set_minor_formatter(plt.NullFormatter())
    fig.legend(*ax.get_legend_handles_labels(), fontsize=FONT_PT, ncol=4, loc="lower center",
               frameon=False)
    ax.set_title("Every row against the base: above 1 faster; the bar is the spread the verdict saw",
                 fontsize=FONT_PT + 1)
    fig.tight_layout(rect=(0, 0.09 * (1 + (len(builds) > 1)), 1, 1))
    fig.savefig(path)
    plt.close(fig)
    return path
