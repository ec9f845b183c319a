"""tools/report's sections of verdicts: per family its sentence, its rows' table (a long message
cut to its first clauses, whole under the table) and its chart; and how to read them."""
import re

from . import rows as rowsel
from . import verdicts
from .page import Bullets, Code, Folded, Heading, Paragraph, Strong, Table, Verdict
from .report_builds import is_startup, row_title
from .report_words import family_sentence, fmt_time
from .row_outcome import MEASURED


# The most characters of a row's message (an error, a reason it was not run) that a table cell
# shows: a longer one would widen its column until the times beside it scroll off the page; the
# whole message goes under the table.
SHORT_MESSAGE = 40
# Where a message is cut into clauses for its short form: after ":", ";", "." or "," and before "(".
CLAUSE_END = re.compile(r"(?<=[:;.,]) | (?=\()")



def cell_of(comparison, name, i):
    b = comparison.builds[i]
    r = b.results.get(name)
    if r is None:
        return rowsel.NOT_BUILT if comparison.why_not_built(name, i) else "missing"
    if r.status != MEASURED:  # its message: an error's, or a skip's (not run, not supported)
        return folded_message(r.message, name, b.label)
    return fmt_time(r.median_time()) if r.times else "missing"


def folded_message(message, name, label):
    """A row's message in build label's cell: without the row's own name in front (the row names
    it) and, where longer than SHORT_MESSAGE, as its first clauses, the whole message under the
    table with the build it is of (Folded)."""
    title = row_title(name)
    text = message
    for prefix in (name + ": ", title + ": "):
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    short = short_message(text)
    return text if short == text else Folded(short, f"{label}: {message}")


def short_message(text):
    """The longest run of text's first clauses that fits in SHORT_MESSAGE characters ("inaccurate
    here, reported, not timed"); a first clause longer than that, cut at a word and marked ..."""
    if len(text) <= SHORT_MESSAGE:
        return text
    clauses = CLAUSE_END.split(text)
    short = clauses[0]
    for clause in clauses[1:]:
        longer = f"{short} {clause}"
        if len(longer.rstrip(":;,. ")) > SHORT_MESSAGE:
            break
        short = longer
    short = short.rstrip(":;,. ")
    if len(short) > SHORT_MESSAGE:
        short = short[:SHORT_MESSAGE - 3].rsplit(" ", 1)[0].rstrip(":;,. ") + "..."
    return short


def rows_table(comparison, names, family):
    """Row, each build's median time, then per other build its speed-up, verdict, significance."""
    c = comparison
    header = ["row"] + [f"{b.label} time" for b in c.builds]
    for b in c.others:
        header += [f"{b.label} speed-up", f"{b.label} verdict", f"{b.label} significance"]
    rows = []
    for n in names:
        row = [Code(row_title(n, family))] + [cell_of(c, n, i) for i in range(len(c.builds))]
        for i in range(1, len(c.builds)):
            j = c.judgements.get((n, i))
            if j is None:
                row += ["", "", ""]
                continue
            row += [f"{j.speedup:.2f}x", Verdict(j.word + (" !" if j.clock_mark else "")), j.significance]
        rows.append(row)
    right = list(range(1, len(c.builds) + 1)) + [len(c.builds) + 1 + 3 * k for k in range(len(c.others))]
    return Table(header, rows, right)


def rows_notes(comparison, names):
    """What the table's marks mean, and the verdicts the clock made (compare's note)."""
    c, notes = comparison, []
    marks = [j for (n, _), j in c.judgements.items() if n in names and j.clock_mark]
    if marks:
        notes.append(f"! after a verdict: the SM clocks of the two builds differ by more than "
                     f"{rowsel.CLOCK_MARK * 100:g}% in that row (see the GPU's conditions).")
    judged = [(n, c.builds[i].label, j.verdict, j.cycles_change)
              for (n, i), j in c.judgements.items() if n in names]
    clocked = rowsel.clock_made_it(judged, c.args.min_effect, True)
    if clocked:
        notes.append(clocked + ".")
    return notes


def family_blocks(comparison, family, names, charts):
    """The family's sentence, its rows' table with the notes on its marks, and its charts
    (charts: {family: [blocks]}, from chart_blocks)."""
    spec = comparison.schema.families.get(family) if comparison.schema is not None else None
    title = f"{family}: {spec.description}" if spec is not None and spec.description else family
    blocks = [Heading(3, title, anchor=anchor(family)),
              Paragraph(family_sentence(comparison, family, names)),
              rows_table(comparison, names, family)]
    blocks += [Paragraph(note) for note in rows_notes(comparison, names)]
    blocks += charts.get(family, [])
    return blocks


def anchor(family):
    return "family-" + re.sub(r"[^A-Za-z0-9]+", "-", family).strip("-")


def verdict_blocks(comparison):
    families = comparison.families()
    items = [[Strong(family), ": ", family_sentence(comparison, family, names)]
             for family, names in families.items()]
    return [Heading(2, "Verdicts"),
            Paragraph(f"Each build against {comparison.base.label}, on the time, row by row; a family's "
                      "sentence counts its rows (the rule: How to read this page, below)."),
            Bullets(items)]


def row_blocks(comparison, charts):
    blocks = [Heading(2, "Rows"),
              Paragraph("Per family: its sentence, the rows behind it (each build's median time, its "
                        f"speed-up against {comparison.base.label}, the verdict and its significance) and "
                        "its chart. The start-up families are under Cost.")]
    for family, names in comparison.families().items():
        if not is_startup(family):
            blocks += family_blocks(comparison, family, names, charts)
    return blocks


def verdict_rule(args):
    """The rule the verdicts were given by, in words."""
    effect = f"{args.min_effect * 100:g}%"
    if args.no_utest:
        return f"the median changed by at least {effect} and beyond either side's spread (no U test)"
    return (f"a Mann-Whitney U test over the samples gives p < {args.alpha:g} and the median changed "
            f"by at least {effect}")


def has_folded(comparison):
    """Whether a rows table folds a message (a cell says [1])."""
    c = comparison
    return any(isinstance(cell_of(c, n, i), Folded) for n in c.names for i, b in enumerate(c.builds)
               if b.results.get(n) is not None and b.results[n].status != MEASURED)


def reading_blocks(comparison):
    c, args = comparison, comparison.args
    rules = [verdicts.rule_text(r, args.alpha, args.min_effect) for r in
             (verdicts.UTEST, verdicts.NO_UTEST, verdicts.ONE_PROCESS)
             if any(j.verdict.rule == r for j in c.judgements.values())]
    items = [f"faster / slower: {'; or, '.join(rules) or verdict_rule(args)}; too noisy to tell: a "
             "change the samples cannot tell from noise (why, in the significance cell); same: a "
             f"change under {args.min_effect * 100:g}%, or one the samples could have shown and did "
             "not (docs/methodology.md, Reading a comparison).",
             f"The rows' tables: each build's median time; speed-up: {c.base.label}'s time over the "
             "build's (above 1 is faster); ! after a verdict: the two builds' SM clocks differ by more than "
             f"{rowsel.CLOCK_MARK * 100:g}% in that row"
             + ("; [1] after a cell's words: the row's message, whole under the table." if has_folded(c)
                else ".")]
    if any(j.verdict.rule == verdicts.ONE_PROCESS for j in c.judgements.values()):
        items.append(verdicts.ONE_PROCESS_CAVEAT + ".")
    return [Heading(2, "How to read this page"), Bullets(items)]
