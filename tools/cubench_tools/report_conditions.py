"""tools/report's section on the GPU's conditions during each build's run: power cap and clocks,
the SM clock the samples ran at, rows power-capped or throttled, other processes on the GPU, the
samples; and the warnings where those differ between builds."""
import math
import statistics

from . import rows as rowsel
from .build_context import ran_on
from .page import Bullets, Heading, Paragraph, Table
from .report_builds import row_title, timed
from .report_words import rows_word



def row_medians(build, counter):
    """[(row, median of counter)] over the build's timed rows that carry it."""
    out = []
    for name, r in build.results.items():
        if timed(r) and not math.isnan(r.median(counter)):
            out.append((name, r.median(counter)))
    return out


def context_value(build, field, unit=""):
    value = build.context.get(field)
    return "not recorded" if value in (None, "") else f"{value}{unit}"


def context_number(build, field, unit):
    """A context figure rounded as a reader takes it ("4188 GB/s", not 4188.283403)."""
    try:
        return f"{float(build.context[field]):.0f}{unit}"
    except (KeyError, ValueError):
        return context_value(build, field, unit)


def sm_clock_text(build):
    clocks = [v for _, v in row_medians(build, "sm_clock_MHz")]
    if not clocks:
        return "not recorded"
    return (f"median {statistics.median(clocks):.0f} MHz ({min(clocks):.0f}-{max(clocks):.0f} "
            f"over {rows_word(len(clocks))})")


# A board power reading this far over the card's enforced limit is not a reading: files from before
# cubench read NVML's energy counter at its update boundaries held such figures (969 W on a
# 700 W H100; docs/results/h100/README.md, "Power").
OVER_LIMIT = 1.03


def power_text(build):
    watts = [v for _, v in row_medians(build, "power_W")]
    if not watts:
        return "not recorded"
    text = f"median {statistics.median(watts):.0f} W, highest {max(watts):.0f} W"
    try:
        limit = float(str(build.context.get("gpu_power_limit_W", "")).split()[0])
    except (ValueError, IndexError):
        return text
    over = [w for w in watts if w > limit * OVER_LIMIT]
    if over:
        text += (f"; {len(over)} row(s) over the card's {limit:.0f} W limit: not readings, figures of "
                 "an old reader of the energy counter (before it was read at its update boundaries)")
    return text


def rows_over_zero(build, counter):
    return [(n, v) for n, v in row_medians(build, counter) if v > 0]


def capped_text(build):
    carried = row_medians(build, "power_capped_pct")
    if not carried:
        return "not recorded"
    capped = [v for _, v in carried if v > 0]
    if not capped:
        return f"none of {rows_word(len(carried))}"
    return f"{len(capped)} of {rows_word(len(carried))} (up to {max(capped):.0f}% of polls)"


def throttled_text(build):
    carried = row_medians(build, "slowdown_pct") + row_medians(build, "throttled_samples")
    if not carried:
        return "not recorded"
    rows = sorted({row_title(n) for n, _ in rows_over_zero(build, "slowdown_pct")
                   + rows_over_zero(build, "throttled_samples")})
    return "none" if not rows else f"{rows_word(len(rows))}: " + ", ".join(rows[:rowsel.NAMED_IN_NOTE]) + \
        (f" and {len(rows) - rowsel.NAMED_IN_NOTE} more" if len(rows) > rowsel.NAMED_IN_NOTE else "")


def other_processes_text(build):
    at_start = build.context.get("gpu_other_processes_at_start")
    during = row_medians(build, "other_processes")
    start = f"{at_start} at start" if at_start not in (None, "") else "not recorded at start"
    if not during:
        return start
    busy = [v for _, v in during if v > 0]
    return start + ("; none during the samples" if not busy else
                    f"; up to {max(busy):.0f} during the samples of {rows_word(len(busy))}")


def dates_text(build):
    return build.context.get("process_dates") or build.context.get("date") or "not recorded"


CONDITIONS = (
    ("GPU", lambda b: ran_on(b.context, why=True)),
    ("power limit", lambda b: context_value(b, "gpu_power_limit_W", " W")),
    ("default / max SM clock", lambda b: f"{context_value(b, 'gpu_default_sm_clock_mhz', ' MHz')} / "
                                         f"{context_value(b, 'gpu_max_sm_clock_mhz', ' MHz')}"),
    ("SM clock of the samples", sm_clock_text),
    ("board power", power_text),
    ("rows power-capped", capped_text),
    ("rows throttled", throttled_text),
    ("other processes on the GPU", other_processes_text),
    ("copy ceiling", lambda b: context_number(b, "copy_ceiling_GBps", " GB/s")),
    ("NVML", lambda b: context_value(b, "nvml")),
    ("samples", lambda b: b.samples_text()),
    ("run", dates_text),
)


def condition_warnings(comparison):
    """What a reader must know before trusting a verdict: the GPU differed, was capped, throttled
    or shared, or a build's samples cannot carry a significance test."""
    c, out = comparison, []
    gpus = {ran_on(b.context) for b in c.builds}
    if len(gpus) > 1:
        out.append(f"The builds ran on different GPUs: {', '.join(sorted(gpus))}.")
    limits = {b.context.get("gpu_power_limit_W") for b in c.builds} - {None}
    if len(limits) > 1:
        out.append(f"The power limit differed between runs: {', '.join(sorted(limits))} W.")
    for b in c.builds:
        capped = rows_over_zero(b, "power_capped_pct")
        if capped:
            out.append(f"{b.label} ran power-capped in {rows_word(len(capped))}: its clock, and so its time, "
                       "followed the power cap there (the cycles columns of tools/compare --table take "
                       "the clock out).")
        throttled = {n for n, _ in rows_over_zero(b, "slowdown_pct") + rows_over_zero(b, "throttled_samples")}
        if throttled:
            out.append(f"{b.label} was throttled in {rows_word(len(throttled))} (thermal or hardware "
                       "slowdown, or samples under 75% of the default clock).")
        busy = [v for _, v in row_medians(b, "other_processes") if v > 0]
        start = str(b.context.get("gpu_other_processes_at_start", "0")).split(" ")[0]
        if busy or start not in ("0", ""):
            out.append(f"{b.label} shared the GPU with other processes ({other_processes_text(b)}).")
    marked = sorted({n for (n, _), j in c.judgements.items() if j.clock_mark})
    if marked:
        out.append(f"The SM clock differed by more than {rowsel.CLOCK_MARK * 100:g}% from the base's in "
                   f"{rows_word(len(marked))} (marked ! in the tables).")
    return out


def conditions_blocks(comparison):
    c = comparison
    rows = [[what] + [text(b) for b in c.builds] for what, text in CONDITIONS]
    warnings = condition_warnings(c)
    return [Heading(2, "The GPU's conditions"),
            Paragraph("From each file's context and the counters its rows carry (the medians over "
                      "each row's samples)."),
            Table([""] + [b.label for b in c.builds], rows),
            Bullets(warnings) if warnings else Paragraph("Nothing to warn of: one GPU, no power cap "
                                                         "or throttling recorded, no other process.")]
