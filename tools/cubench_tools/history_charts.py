"""The history's charts: each family's rows' times across the runs, their change points dotted
(tools/history show and tools/report --history draw them)."""
import os
import re

from . import cli
from . import result_schema


def trend_charts(out_dir, series, changes, prefix=""):
    """A chart per family of each row's time across the runs, its change points dotted: the paths."""
    plt = cli.pyplot()
    families = {}
    for name in series:
        family = series[name][-1]["family"] or result_schema.family_and_axes(name)[0]
        families.setdefault(family, []).append(name)
    written = []
    for family, names in sorted(families.items()):
        fig, ax = plt.subplots(figsize=(9, 4.5))
        for name in names:
            times = [p["median_us"] for p in series[name]]
            (line,) = ax.plot(range(1, len(times) + 1), times, marker="o", label=name)
            for i, _, _ in changes[name]:
                ax.axvline(i + 0.5, color=line.get_color(), linestyle=":", alpha=0.7)
        ax.set_yscale("log")
        ax.set_xlabel("run (oldest first); dotted: a change point")
        ax.set_ylabel("time (us)")
        ax.set_title(f"{family}: time across the history's runs")
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        path = os.path.join(out_dir, prefix + re.sub(r"[^A-Za-z0-9_.-]", "_", family) + ".png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written
