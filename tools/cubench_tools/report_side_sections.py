"""tools/report's sections beside the verdicts: the kernels that changed, what was left out (not
built, not run, skipped, missing) and the cost side (start-up, peak memory, first calls)."""
import math

from . import rows as rowsel
from .page import Bullets, Code, Heading, Paragraph, Strong, Table, Verdict
from .report_builds import is_startup, row_title, timed
from .report_rows import family_blocks
from .report_words import fmt_bytes, fmt_time, rows_word
from .row_outcome import SKIPS


# A row's peak memory that moved by this much against the base is named under the memory table.
MEMORY_CHANGE = 0.10



def kernel_blocks(comparison):
    c = comparison
    rows, named = [], 0
    for n in c.names:
        named += n in c.base.results and rowsel.names_what_ran(c.base.results[n])
        for i, b in enumerate(c.others, 1):
            named += n in b.results and rowsel.names_what_ran(b.results[n])
            differs = (rowsel.ran_differently(c.base.results[n], b.results[n])
                       if n in c.base.results and n in b.results else None)
            j = c.judgements.get((n, i))
            if differs and j is not None and j.verdict.called:  # what ran explains a verdict
                mine, theirs = differs
                word = Verdict(f"{j.word} ({j.speedup:.2f}x)")
                rows.append([Code(row_title(n)), b.label, word, Code(mine), Code(theirs)])
    blocks = [Heading(2, "Kernels that changed")]
    if rows:
        blocks += [Paragraph(f"Rows called faster or slower where both builds name what ran (kernels, or "
                             f"cuBLASLt's algorithm) and it differs from {c.base.label}'s: the library's "
                             "own reason for the verdict."),
                   Table(["row", "build", "verdict", "what ran there", f"what ran under {c.base.label}"],
                         rows)]
    elif named:
        blocks.append(Paragraph("The same kernels and algorithms ran under every build, in every row "
                                "whose notes name them."))
    else:
        blocks.append(Paragraph("The files name no kernels: run cubench with --cubench_kernels=on "
                                "(tools/run-matrix --kernels) for each row's kernels."))
    return blocks


def configurations_text(configurations):
    if isinstance(configurations, int):
        return [f"{configurations} configuration{'s' if configurations != 1 else ''}"]
    if isinstance(configurations, str):
        return [configurations]
    out = [f"{len(configurations)} configuration{'s' if len(configurations) != 1 else ''}: "]
    for k, name in enumerate(configurations):
        out += ([", "] if k else []) + [Code(str(name))]
    return out


def left_out_blocks(comparison):
    c = comparison
    items = []
    for b in c.builds:
        for library, why in b.not_built.items():
            families = sorted(name for name, f in (c.schema.families.items() if c.schema else ())
                              if f.library == library)
            needs = (f" (the famil{'y' if len(families) == 1 else 'ies'} {', '.join(families)})"
                     if families else "")
            items.append([Strong(b.label), f": not built: {library}{needs}: {why}"])
    for b in c.builds:
        for entry in b.not_run:
            items.append([Strong(b.label), f": not run: {entry['family']}: {entry['reason']}"]
                         + ([" ("] + configurations_text(entry["configurations"]) + [")"]
                            if "configurations" in entry else []))
    items += skipped_rows_items(c)
    items += missing_rows_items(c)
    return [Heading(2, "Not built, not run"),
            Bullets(items) if items else Paragraph("Every build built and ran every row compared.")]


SKIP_WORDS = {"not_run": "not run", "not_supported": "not supported"}


def skipped_rows_items(comparison):
    """Each build's rows skipped (their status: not run at their turn, not supported here),
    grouped by the reason: they are not failures, and a reader should know what was not run."""
    c, items = comparison, []
    wanted = rowsel.name_filter(c.args.filter)
    for b in c.builds:
        skipped = {}
        for n, r in b.results.items():
            if wanted.search(n) and r.status in SKIPS:
                skipped.setdefault((r.status, r.reason), []).append(row_title(n))
        for (status, reason), names in skipped.items():
            items.append([Strong(b.label), f": {SKIP_WORDS[status]}: "] + named_rows(names)
                         + ([f": {reason}"] if reason else []))
    return items


def missing_rows_items(comparison):
    """Rows a build lacks that its file gives no reason for, and rows only other builds ran."""
    c, items = comparison, []
    wanted = rowsel.name_filter(c.args.filter)
    for i, b in enumerate(c.others, 1):
        lacking = [n for n in c.base.results if wanted.search(n) and n not in b.results
                   and not c.why_not_built(n, i)]
        if lacking:
            items.append([Strong(b.label), f": lacks {rows_word(len(lacking))} of {c.base.label}'s, for no "
                          "reason its file gives: "] + named_rows(lacking))
        extra = [n for n in b.results if wanted.search(n) and n not in c.base.results and n not in c.names]
        if extra:
            items.append([Strong(b.label), f": {rows_word(len(extra))} that {c.base.label} lacks, "
                          "not compared: "] + named_rows(extra))
    return items


def named_rows(names):
    out = []
    for k, n in enumerate(names[:rowsel.NAMED_IN_NOTE]):
        out += ([", "] if k else []) + [Code(n)]
    more = len(names) - rowsel.NAMED_IN_NOTE
    return out + ([f" and {more} more"] if more > 0 else [])


def memory_cell(comparison, i, names):
    build = comparison.builds[i]
    if not any(timed(build.results.get(n)) for n in names):
        return rowsel.NOT_BUILT if all(comparison.why_not_built(n, i) for n in names) else "-"
    peaks = [build.results[n].median("peak_mem_bytes") for n in names if timed(build.results.get(n))]
    used = [build.results[n].median("used_mem_bytes") for n in names if timed(build.results.get(n))]
    peaks, used = [v for v in peaks if not math.isnan(v)], [v for v in used if not math.isnan(v)]
    if not peaks and not used:
        return ""
    return f"{fmt_bytes(max(peaks)) if peaks else '-'} / {fmt_bytes(max(used)) if used else '-'}"


def memory_changes(comparison):
    """Rows whose peak memory moved by MEMORY_CHANGE or more against the base's."""
    c, items = comparison, []
    for b in c.others:
        moved = []
        for n in c.names:
            base_r, r = c.base.results.get(n), b.results.get(n)
            if not (timed(base_r) and timed(r)):
                continue
            was, now = base_r.median("peak_mem_bytes"), r.median("peak_mem_bytes")
            if was > 0 and now >= 0 and abs(now / was - 1) >= MEMORY_CHANGE:
                moved.append((n, was, now))
        for n, was, now in moved[:rowsel.NAMED_IN_NOTE]:
            items.append([Strong(b.label), ": ", Code(n), f" peaks at {fmt_bytes(now)} against "
                          f"{fmt_bytes(was)} under {c.base.label} ({(now / was - 1) * 100:+.0f}%)"])
        if len(moved) > rowsel.NAMED_IN_NOTE:
            items.append([Strong(b.label), f": and {len(moved) - rowsel.NAMED_IN_NOTE} more rows"])
    return items


def first_calls_text(comparison):
    c = comparison
    common = [n for n in c.names
              if all(timed(b.results.get(n)) and not math.isnan(b.results[n].median("first_call_ms"))
                     for b in c.builds)]
    if not common:
        return None
    sums = [sum(b.results[n].median("first_call_ms") for n in common) * 1e3 for b in c.builds]  # us
    return (f"First calls (each row's first run: module loading and library set-up), summed over the "
            f"{rows_word(len(common))} every build ran: "
            + "; ".join(f"{b.label} {fmt_time(s)}" for b, s in zip(c.builds, sums)) + ".")


def cost_blocks(comparison, charts):
    c = comparison
    blocks = [Heading(2, "Cost: start-up and memory")]
    startup = {f: names for f, names in c.families().items() if is_startup(f)}
    if startup:
        blocks.append(Paragraph("Start-up, a fresh process per sample: what a user waits for before the "
                                "first result."))
        for family, names in startup.items():
            blocks += family_blocks(c, family, names, charts)
    else:
        blocks.append(Paragraph("No start-up rows in the files (cubench's startup/ families)."))
    memory_rows = [[Code(f)] + [memory_cell(c, i, names) for i in range(len(c.builds))]
                   for f, names in c.families().items()]
    memory_rows = [row for row in memory_rows
                   if any(cell not in ("", "-", rowsel.NOT_BUILT) for cell in row[1:])]
    blocks.append(Heading(3, "Peak memory", anchor="peak-memory"))
    if memory_rows:
        blocks += [Paragraph("Per family and build, the highest over its rows of the operation's own memory "
                             "pool: reserved (peak_mem_bytes) / in use (used_mem_bytes)."),
                   Table(["family"] + [b.label for b in c.builds], memory_rows, range(1, len(c.builds) + 1))]
        changes = memory_changes(c)
        blocks.append(Bullets(changes) if changes else
                      Paragraph(f"No row's peak memory moved by {MEMORY_CHANGE * 100:g}% or more against "
                                f"{c.base.label}."))
    else:
        blocks.append(Paragraph("The rows carry no peak_mem_bytes or used_mem_bytes."))
    first_calls = first_calls_text(c)
    if first_calls:
        blocks.append(Paragraph(first_calls))
    return blocks
