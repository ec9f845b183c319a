"""tools/report's words: times, sizes and ratios as the page writes them, each family's sentence
made from its rows, and the page's first sentences: the family verdicts counted (and again per
LibTorch mode: eager, graph, compiled) and the recommendation."""
import statistics

from . import verdicts
from .page import Bullets, Paragraph, Strong
from .report_builds import Judgement, row_title, timed
from .verdicts import FASTER, SLOWER, TOO_NOISY


# A speed-up is written as a multiple from here on ("2.1x faster"), as a percentage below it.
MULTIPLE_FROM = 1.5



def fmt_time(us):
    for unit, scale in (("s", 1e6), ("ms", 1e3), ("us", 1.0)):
        if us >= scale:
            return f"{us / scale:.4g} {unit}"
    return f"{us * 1e3:.4g} ns"


def fmt_bytes(n):
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def fmt_multiple(r):
    return f"{r:.1f}" if r >= MULTIPLE_FROM else f"{r:.2f}"


def fmt_percent(r):
    pct = (r - 1) * 100
    return f"{pct:.0f}" if round(pct, 1) >= 10 else f"{pct:.1f}"  # 9.97 reads 10, not 10.0


def fmt_range(ratios):
    """Factors above 1 as a reader says them, in one unit: "2.1-3.3x" (or "1.08-2.0x") where the
    largest is MULTIPLE_FROM or more, else "5.2-8.0%"; one value where they all read alike."""
    fmt, unit = (fmt_multiple, "x") if max(ratios) >= MULTIPLE_FROM else (fmt_percent, "%")
    lo, hi = fmt(min(ratios)), fmt(max(ratios))
    return f"{hi}{unit}" if lo == hi else f"{lo}-{hi}{unit}"


def rows_word(n):
    return f"{n} row" if n == 1 else f"{n} rows"


class Outcome:
    """One build's rows of one family against the base, counted for the family's sentence."""

    def __init__(self, label, judgements, not_built_why):
        self.label, self.n, self.not_built_why = label, len(judgements), not_built_why
        self.faster = [j.speedup for j in judgements if j.word == FASTER]
        self.slower = [1 / j.speedup for j in judgements if j.word == SLOWER]
        self.noisy = sum(j.word == TOO_NOISY for j in judgements)
        self.one_process = any(j.verdict.rule == verdicts.ONE_PROCESS for j in judgements)

    def weight(self):
        """The clause with the most to say comes first."""
        return (len(self.faster) + len(self.slower),)


def clause(outcome, base_label, family, first, no_utest):
    """One build's part of a family's sentence; the family is named in the first clause ("at
    svd"), the later ones say "there"."""
    o, place = outcome, (f"at {family}" if first else "there")
    if o.not_built_why:
        return f"{o.label} was built without {family if first else 'it'} ({o.not_built_why})"
    if o.n == 0:
        return f"{o.label} has no row of {family if first else 'it'} to compare"
    kind = "called" if o.one_process else ("beyond their spread" if no_utest else "significant")
    counted = f"{len(o.faster) + len(o.slower)} of {rows_word(o.n)} {kind}"
    noisy = f"; {o.noisy} too noisy to tell" if o.noisy else ""
    if o.faster and o.slower:
        return (f"{o.label} is faster than {base_label} {place} in {len(o.faster)} of {rows_word(o.n)} "
                f"({fmt_range(o.faster)}) and slower in {len(o.slower)} ({fmt_range(o.slower)}){noisy}")
    if o.faster:
        return f"{o.label} is {fmt_range(o.faster)} faster than {base_label} {place} ({counted}{noisy})"
    if o.slower:
        return f"{o.label} is {fmt_range(o.slower)} slower than {base_label} {place} ({counted}{noisy})"
    if o.noisy:
        return (f"{o.label} gained nothing {place} that the samples can show ({o.noisy} of "
                f"{rows_word(o.n)} too noisy to tell)")
    return f"{o.label} gained nothing {place} (every row the same)"


def family_outcomes(comparison, family, names):
    """Each other build's Outcome at the family, in build order; None where the base has no
    timed row of it (nothing to compare against)."""
    c = comparison
    if not any(timed(c.base.results.get(n)) for n in names):
        return None
    outcomes = []
    for i, b in enumerate(c.others, 1):
        judged = [c.judgements[(n, i)] for n in names if (n, i) in c.judgements]
        whys = [c.why_not_built(n, i) for n in names]
        why = whys[0] if whys and all(whys) and not judged else None
        outcomes.append(Outcome(b.label, judged, why))
    return outcomes


def family_sentence(comparison, family, names):
    """The family's verdict in one sentence, from its rows' judgements."""
    c = comparison
    outcomes = family_outcomes(c, family, names)
    if outcomes is None:
        why = next((c.why_not_built(n, 0) for n in names if c.why_not_built(n, 0)), None)
        lacking = f"was built without it ({why})" if why else "has no timed row of it"
        ran = [b.label for b in c.others if any(timed(b.results.get(n)) for n in names)]
        return (f"Not compared: {c.base.label}, the base, {lacking}"
                + (f"; {' and '.join(ran)} ran it." if ran else "."))
    ordered = sorted(outcomes, key=lambda o: tuple(-w for w in o.weight()))  # stable: build order
    clauses = [clause(o, c.base.label, family, i == 0, c.args.no_utest) for i, o in enumerate(ordered)]
    return "; ".join(clauses) + "."



FASTER_FAMILY, SLOWER_FAMILY, MIXED_FAMILY, SAME_FAMILY = "faster", "slower", "mixed", "same"
# A family is mixed only where its rows called faster or slower split by more than this: the
# smaller side is over a quarter of them. 21 faster and 3 slower is faster (3 of 24 is 12.5%).
MIXED_SHARE = 0.25


def standing(outcome):
    """Where one build stands at one family against the base: faster, slower, mixed or same;
    None where the family was not compared (the build lacks it)."""
    o = outcome
    if o.not_built_why or o.n == 0:
        return None
    faster, slower = len(o.faster), len(o.slower)
    if not faster and not slower:
        return SAME_FAMILY
    if min(faster, slower) > MIXED_SHARE * (faster + slower):
        return MIXED_FAMILY
    return FASTER_FAMILY if faster > slower else SLOWER_FAMILY


def standings(comparison):
    """{build label: {family: standing or None}}, over every family of the page, in its order."""
    c = comparison
    out = {b.label: {} for b in c.others}
    for family, names in c.families().items():
        outcomes = family_outcomes(c, family, names)
        for b, o in zip(c.others, outcomes or [None] * len(c.others)):
            out[b.label][family] = standing(o) if o is not None else None
    return out


def judged_rows(comparison, i):
    """[(row, Verdict)] of build i against the base, every row both timed."""
    c = comparison
    return [(n, c.judgements[(n, i)].verdict) for n in c.names if (n, i) in c.judgements]


def step_judgements(comparison, j, i):
    """{row: Judgement} of build i against build j (the one before it), every row both timed:
    the question of a user who has j and considers i."""
    c, base, other = comparison, comparison.builds[j], comparison.builds[i]
    out = {}
    for n in c.names:
        b, r = base.results.get(n), other.results.get(n)
        if timed(b) and timed(r):
            out[n] = Judgement(b, r, c.args, base.processes(), other.processes())
    return out


def the_work_changed(judgement, min_effect):
    """Whether a faster or slower row's cycles (time x SM clock) moved too: a row whose cycles
    changed under min_effect ran faster or slower because its clock did, and says nothing of the
    build. A row without clocks is taken at its word."""
    return not abs(judgement.cycles_change) < min_effect  # NaN: not known, so it counts


def recommendation(label, base_label, judgements, min_effect):
    """One line: which build to pick for these rows, and why. judgements: {row: Judgement}. A pick
    needs more than noise: faster or slower rows whose cycles changed as well (not the clock), and
    more of them than the rule's false-positive rate makes likely among that many rows."""
    judged = [(n, j.verdict) for n, j in judgements.items()]
    c = verdicts.counts(judged)
    if not judged:
        return f"No recommendation for {label}: no row both builds timed."
    work = {n for n, j in judgements.items() if j.verdict.called and the_work_changed(j, min_effect)}
    clock = len(c[FASTER]) + len(c[SLOWER]) - len(work)
    faster = [(n, v) for n, v in c[FASTER] if n in work]
    slower = [(n, v) for n, v in c[SLOWER] if n in work]
    noisy = c[TOO_NOISY]
    clock_words = (f"; {clock} more changed with the SM clock only (their cycles did not)"
                   if clock else "")
    allowed = verdicts.noise_calls(len(judged))
    if faster or slower:
        if len(faster) + len(slower) <= allowed:
            return (f"No pick between {label} and {base_label}: {len(faster) + len(slower)} of "
                    f"{rows_word(len(judged))} called, no more than the rule calls between two "
                    f"runs of one build ({allowed} of {len(judged)} at 1 in "
                    f"{1 / verdicts.FALSE_POSITIVE_RATE:.0f}){clock_words}.")
    if faster and not slower:
        return (f"Pick {label} over {base_label}: faster in {rows_word(len(faster))} and slower in "
                f"none{clock_words}.")
    if slower and not faster:
        return (f"Keep {base_label}: {label} is slower in {rows_word(len(slower))} and faster in "
                f"none{clock_words}.")
    if faster and slower:
        gain = statistics.geometric_mean([v.speedup for _, v in faster + slower])
        worst = ", ".join(row_title(n) for n, _ in sorted(slower, key=lambda x: x[1].speedup)[:3])
        more = f" and {len(slower) - 3} more" if len(slower) > 3 else ""
        if gain >= 1:
            return (f"Pick {label} over {base_label} unless your workload is among its slower rows "
                    f"({worst}{more}): across the {len(faster) + len(slower)} rows that changed it is "
                    f"{gain:.3g}x faster (geometric mean){clock_words}.")
        return (f"Keep {base_label} unless your workload is among {label}'s faster rows: across the "
                f"{len(faster) + len(slower)} rows that changed {label} is {1 / gain:.3g}x slower "
                f"(geometric mean){clock_words}.")
    if clock:
        return (f"No pick between {label} and {base_label}: every row called changed with the SM "
                f"clock only ({clock}), not the work.")
    if noisy:
        return (f"No reason to switch to {label} that these files can show: {len(noisy)} of "
                f"{len(judged)} rows are too noisy to tell; run more processes per build "
                "(tools/run-matrix) to decide.")
    return f"Either {label} or {base_label}: every row is the same."


# The values of the LibTorch families' `mode` axis (kGraphModes, fixtures/libraries/torch/torch_case.h),
# in the page's order: eager calls, a CUDA graph's replay, AOTInductor's compiled module.
GRAPH_MODES = ("eager", "graph", "compiled")


def row_mode(comparison, name):
    """The row's mode (GRAPH_MODES), or None for a row without one (another family's `mode`, such as
    transformer_fwd's infer or train, is not one)."""
    r = next(b.results[name] for b in comparison.builds if name in b.results)
    mode = r.axis_values.get("mode")
    return mode if mode in GRAPH_MODES else None


def mode_lines(comparison, label, base_label, judged):
    """The summary again per mode, where the judged rows have two modes or more: "compiled, 2.11
    against 2.6: ...", so that a build that speeds up compiled models is told apart from one that
    speeds up eager calls (the question a user of torch.compile asks of an upgrade)."""
    by_mode = {}
    for name, verdict in judged:
        mode = row_mode(comparison, name)
        if mode is not None:
            by_mode.setdefault(mode, []).append((name, verdict))
    if len(by_mode) < 2:
        return []
    return [f"{mode}, " + verdicts.summary(label, base_label, by_mode[mode])
            for mode in GRAPH_MODES if mode in by_mode]


def overall_blocks(comparison):
    """The page's first words: per other build, its rows against the base counted (the rule every
    tool uses; per LibTorch mode too where the rows have several), then one recommendation line
    with its reason; with three builds or more, each build against the one before it as well (the
    upgrade a user of that one weighs)."""
    c = comparison
    blocks = []
    for i, b in enumerate(c.others, 1):
        judged = judged_rows(c, i)
        line = verdicts.summary(b.label, c.base.label, judged) if judged else \
            f"{b.label} against {c.base.label}: no row both timed"
        not_compared = [f for f, st in standings(c)[b.label].items() if st is None]
        tail = f"; not compared: {', '.join(not_compared)}." if not_compared else "."
        blocks.append(Paragraph([Strong(b.label), line[len(b.label):] + tail]))
        per_mode = mode_lines(c, b.label, c.base.label, judged)
        if per_mode:
            blocks.append(Bullets(per_mode))
        judgements = {n: c.judgements[(n, i)] for n in c.names if (n, i) in c.judgements}
        blocks.append(Paragraph(recommendation(b.label, c.base.label, judgements, c.args.min_effect)))
    for i in range(2, len(c.builds)):
        before, b = c.builds[i - 1], c.builds[i]
        step = step_judgements(c, i - 1, i)
        judged = [(n, j.verdict) for n, j in step.items()]
        line = verdicts.summary(b.label, before.label, judged) if judged else \
            f"{b.label} against {before.label}: no row both timed"
        blocks.append(Paragraph([Strong(b.label), line[len(b.label):] + "."]))
        per_mode = mode_lines(c, b.label, before.label, judged)
        if per_mode:
            blocks.append(Bullets(per_mode))
        blocks.append(Paragraph(recommendation(b.label, before.label, step, c.args.min_effect)))
    return blocks
