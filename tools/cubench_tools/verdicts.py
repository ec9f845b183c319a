"""The one rule that says whether a row of one build is faster or slower than the same row of
another: tools/compare (two files or N), tools/report and tools/history all call judge().

A verdict is a property of the pair, not of which file is the base: every threshold applies to
the log of the time ratio, |ln(other / base)|, so swapping the files flips faster and slower and
changes nothing else (a 2% threshold is ln 1.02 either way: 100 -> 102 and 102 -> 100 alike).

What a sample is decides which rule applies:
  - Both files merged from several processes of their build (context "processes" >= 2, as
    tools/merge-processes and tools/run-matrix write them): a process is a sample, and the verdict
    is the U test's. faster / slower: a Mann-Whitney U test over the processes gives p < alpha
    (default 0.05) AND the medians are at least min_effect apart (default 2%). too noisy to
    tell: not flagged, but a change of min_effect could not have been flagged either (the test
    cannot reach p < alpha at these counts: 3 vs 3 gives 0.1 at best; or a side's spread,
    interquartile range / median, exceeds min_effect). same: otherwise. With no_utest: flagged
    where the change is at least min_effect and beyond either side's spread. Whatever a row's
    time depends on that changes from one process to the next (the host, a choice made per
    process) is in these samples: nothing more is asked.
  - A side of one process (cubench's default run, however many repetitions it has): its samples
    share the process's state, so they cannot see how far another process of the same binary
    lands. A row is called faster or slower only where the change is at least ONE_PROCESS_FLOOR
    (10%), at least NOISE_MULTIPLE (2) times either row's own sample spread (sample_cv), at least
    min_effect, and the rows' 95% intervals (time_ci_pct) are apart.
    Some rows' time depends on what a process draws once, and their own spread says nothing of
    it (drawn_per_process() reads which from the row itself):
      host-paced: the GPU waits on the host (gpu_util_pct under HOST_PACED_UTIL_PCT, or the runs
        were not queued ahead of the GPU and their noise never settled under its target): the
        host's state in that process sets the pace (cuSOLVER's gesvd, a launch, an 8 B
        all-reduce);
      chosen per process: the row picked among candidates while it ran (an autotuner): another
        process may pick another.
    Between processes of one build such rows move by up to 1.5x (the committed A/As) while their
    own spread is a fraction of that: each side whose row says so has its interval widened by
    PER_PROCESS_SPREAD (15%) on top of the rule above (an 8 B all-reduce of 11% own spread needs
    2 x 11% + 2 x 15% in log ratio, about 1.7x, from one process a side); under it the word is too
    noisy to tell, with the reason.
    A change under min_effect is same; a row of one sample, or one whose spread is not known, is
    too noisy to tell; any other change is too noisy to tell with the reason "one process: run
    more".
docs/results/verdict-bars.py holds the rule to its bars on every committed A/A (H100 and H200,
one process a side and four: at most 1 row in 80 called) and on CUDA 11.8 against 13.0 (9 in 10
of the rows 20%+ apart still called); a test holds its figures.
"""
import functools
import math
import statistics

from .input_error import InputError

FASTER, SLOWER, SAME, TOO_NOISY = "faster", "slower", "same", "too noisy to tell"
VERDICTS = (FASTER, SLOWER, SAME, TOO_NOISY)
DEFAULT_ALPHA = 0.05
# Below this a difference is `same` however small its p-value: A/A runs of one binary on the H200
# show real but immaterial shifts under it.
DEFAULT_MIN_EFFECT = 0.02
# One process a side: the smallest change called, and how many times a row's own sample spread
# the change must be (see the module's text for where they come from).
ONE_PROCESS_FLOOR = 0.10
NOISE_MULTIPLE = 2.0
# One process a side: how much wider a side's interval is where its row's time depends on what its
# process draws once (the host's pace, a choice among candidates), as a relative change: each
# such side adds ln(1 + PER_PROCESS_SPREAD) to the log ratio the change must pass. Such a row's
# own samples see a fraction of how far another process lands: on the committed A/As an 8 B
# all-reduce of 6-11% own spread lands 1.52x apart, launch/empty of 5-12% 1.36x, gesvd of 4-8%
# 1.31x, an autotuned GEMM of 0.3% 1.20x. 0.15 calls none of them (0.10 calls 3 of 4,298 rows),
# and still 92% or more of CUDA 11.8 against 13.0's rows 20%+ apart (0.25 would miss 16%).
PER_PROCESS_SPREAD = 0.15
# The share of an A/A's rows the rule may call faster or slower (docs/results/verdict-bars.py holds
# it there on every committed A/A): a page reads fewer calls than this rate makes likely among its
# rows as noise, never as a reason to pick a build.
FALSE_POSITIVE_RATE = 1 / 80
# How unlikely, under FALSE_POSITIVE_RATE, a count of calls must be to count as more than noise.
NOISE_LEVEL = 0.05
# A row whose GPU was busy under this share of its sampling waits on the host.
HOST_PACED_UTIL_PCT = 90.0
UTIL_COUNTER = "gpu_util_pct"
# The rules, as Verdict.rule names them.
UTEST, NO_UTEST, ONE_PROCESS = "utest", "no-utest", "one-process"
CI_COUNTER = "time_ci_pct"  # a row's 95% interval's half-width, in % of its time
CV_COUNTER = "sample_cv"    # a row's samples' relative standard deviation
SAMPLES_COUNTER = "samples"


class Verdict:
    """A row's judgement: change (relative, other / base - 1), word (one of VERDICTS), p (the U
    test's, or None), rule (UTEST, NO_UTEST or ONE_PROCESS) and why (what a reader should know
    about a word that is not faster or slower, "" where nothing)."""

    def __init__(self, change, word, p=None, rule=UTEST, why=""):
        self.change, self.word, self.p, self.rule, self.why = change, word, p, rule, why

    @property
    def called(self):
        return self.word in (FASTER, SLOWER)

    @property
    def speedup(self):
        """base time / other time: 1.41 for a row that takes 1/1.41 of the base's time."""
        return 1.0 / (1.0 + self.change)

    def __repr__(self):
        return f"Verdict({self.change:+.3f}, {self.word!r}, rule={self.rule!r})"


def check_options(alpha, min_effect):
    """--alpha and --min-effect, as every tool that judges takes them: one line, exit 2 on a bad
    one. min_effect is a fraction under 1: no row can be 100% faster."""
    if not 0 < alpha < 1:
        raise InputError(f"--alpha wants a significance level between 0 and 1, got {alpha}")
    if not 0 <= min_effect < 1:
        raise InputError(f"--min-effect wants a relative change from 0 up to (not including) 1 "
                         f"(0.02 is 2%), got {min_effect}")


def processes_of(context):
    """How many processes a file's samples are: context "processes" (a merged file), else 1."""
    try:
        return max(1, int(context.get("processes", 1)))
    except (TypeError, ValueError):
        return 1


def utest(a, b):
    from scipy.stats import mannwhitneyu
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


@functools.lru_cache(maxsize=None)
def smallest_p(n, m):
    """The smallest p-value the U test can give for n against m samples: that of two samples that
    do not overlap at all (3 vs 3: 0.1, 5 vs 5: 0.008). Asked of scipy itself."""
    return utest(list(range(n)), list(range(n, n + m)))


def spread(times):
    """A side's noise across processes: interquartile range over median. The IQR and not the
    range: the U test works on ranks, so one outlying process moves it by one rank at most. One
    sample shows no spread: 0."""
    if len(times) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive")
    return (q3 - q1) / statistics.median(times)


def _median_counter(result, counter):
    return result.median(counter)  # NaN where the row does not carry it


def own_noise(result):
    """A row's relative noise as its one process saw it: its samples' sample_cv (cubench's rows
    carry it); else the spread of its repetitions' times; NaN where neither says (one repetition
    of an older file)."""
    cv = _median_counter(result, CV_COUNTER)
    if not math.isnan(cv):
        if len(result.times) > 1:  # a merged side: the processes' spread counts too
            cv = max(cv, statistics.stdev(result.times) / statistics.mean(result.times))
        return cv
    if len(result.times) > 1:
        return statistics.stdev(result.times) / statistics.mean(result.times)
    return math.nan


def sample_count(result):
    n = _median_counter(result, SAMPLES_COUNTER)
    return len(result.times) if math.isnan(n) else n


def _half_width(result):
    """The 95% interval's half-width in microseconds; 0 where the row does not carry one (the
    other tests still apply)."""
    ci = _median_counter(result, CI_COUNTER)
    return 0.0 if math.isnan(ci) else result.median_time() * ci / 100


def _direction(change):
    return SLOWER if change > 0 else FASTER


def beyond(log_ratio, fraction):
    """Whether a time ratio (as its log) is at least a relative change of fraction either way:
    ln 1.02 for 2%, so that 100 -> 102 and 102 -> 100 are judged alike."""
    return abs(log_ratio) >= math.log1p(fraction)


def _notes(result, kind):
    return [n for n in getattr(result, "notes", ()) if n.get("kind") == kind]


def drawn_per_process(result):
    """Why a row's time depends on something its process draws once, which its own samples cannot
    show, as words for a reader; "" where nothing the row carries says so. Read from the row:
      - its gpu_util_pct (NVML's share of the sampling a kernel ran) under HOST_PACED_UTIL_PCT:
        the GPU waited on the host, whose pace in this process set the time;
      - where it carries no utilisation: its runs were not queued ahead of the GPU (no "queued"
        note: the host launches and synchronises inside the timing) and its noise never settled
        under its target (a stop note other than noise_reached): the host's pace again;
      - a case note saying it was autotuned: it chose among candidates in this process, and
        another process may choose another."""
    util = _median_counter(result, UTIL_COUNTER) if hasattr(result, "median") else math.nan
    if not math.isnan(util) and util < HOST_PACED_UTIL_PCT:
        return f"host-paced (GPU busy {util:.0f}% of the time)"
    stops = _notes(result, "stop")
    if (math.isnan(util) and stops and not _notes(result, "queued")
            and all(n.get("rule") != "noise_reached" for n in stops)):
        return "host-paced (runs not queued ahead of the GPU, noise never settled)"
    if any("autotuned" in n.get("text", "") for n in _notes(result, "case")):
        return "chosen per process (autotuned)"
    return ""


def _one_process(base, other, min_effect):
    change = other.median_time() / base.median_time() - 1.0
    d = math.log1p(change)
    if not beyond(d, min_effect):
        return Verdict(change, SAME, rule=ONE_PROCESS)
    if min(sample_count(base), sample_count(other)) < 2:
        return Verdict(change, TOO_NOISY, rule=ONE_PROCESS, why="one sample: run more")
    noise = max(own_noise(base), own_noise(other))
    if math.isnan(noise):
        return Verdict(change, TOO_NOISY, rule=ONE_PROCESS, why="spread not known: run more")
    drawn = [w for w in (drawn_per_process(base), drawn_per_process(other)) if w]
    threshold = (max(math.log1p(min_effect), math.log1p(ONE_PROCESS_FLOOR), NOISE_MULTIPLE * noise)
                 + len(drawn) * math.log1p(PER_PROCESS_SPREAD))
    drawn = drawn[0] if drawn else ""
    apart = abs(other.median_time() - base.median_time()) > _half_width(base) + _half_width(other)
    if abs(d) >= threshold and apart:
        return Verdict(change, _direction(change), rule=ONE_PROCESS)
    if drawn:
        return Verdict(change, TOO_NOISY, rule=ONE_PROCESS, why=f"one process, {drawn}: run more")
    return Verdict(change, TOO_NOISY, rule=ONE_PROCESS, why=ONE_PROCESS_WHY)


ONE_PROCESS_WHY = "one process: run more"


def _processes(base, other, alpha, min_effect, no_utest):
    a, b = base.times, other.times
    change = statistics.median(b) / statistics.median(a) - 1.0
    d = math.log1p(change)
    noise = max(spread(a), spread(b))
    if no_utest:
        p, shown = None, beyond(d, min_effect) and abs(d) >= math.log1p(noise)
        blind = noise > min_effect
        rule = NO_UTEST
    else:
        p = utest(a, b)
        shown = p < alpha and beyond(d, min_effect)
        blind = noise > min_effect or smallest_p(len(a), len(b)) >= alpha
        rule = UTEST
    if shown:
        return Verdict(change, _direction(change), p, rule)
    if not blind:
        return Verdict(change, SAME, p, rule)
    if noise > min_effect:
        why = f"spread {noise * 100:.2g}% over {min_effect * 100:g}%"
    else:
        why = f"{len(a)} vs {len(b)} cannot reach p < {alpha:g}"
    return Verdict(change, TOO_NOISY, p, rule, why)


def judge(base, other, base_processes=1, other_processes=1, alpha=DEFAULT_ALPHA,
          min_effect=DEFAULT_MIN_EFFECT, no_utest=False):
    """The Verdict on other's time against base's (two measured Results of one row), each file's
    samples being base_processes and other_processes processes (processes_of(context))."""
    several = (base_processes >= 2 and other_processes >= 2
               and len(base.times) >= 2 and len(other.times) >= 2)
    if several:
        return _processes(base, other, alpha, min_effect, no_utest)
    return _one_process(base, other, min_effect)


def noise_calls(rows):
    """The most faster-or-slower calls that FALSE_POSITIVE_RATE makes unsurprising among rows
    judged (more than NOISE_LEVEL likely, binomially): 3 of 78 rows, 0 of 4."""
    from scipy.stats import binom
    k = 0
    while binom.sf(k, rows, FALSE_POSITIVE_RATE) >= NOISE_LEVEL:  # P(calls > k)
        k += 1
    return k


def rule_text(rule, alpha=DEFAULT_ALPHA, min_effect=DEFAULT_MIN_EFFECT):
    """What calls a row faster or slower under a rule, in words for a note."""
    effect = f"{min_effect * 100:g}%"
    if rule == NO_UTEST:
        return f"processes, no U test: a median change of at least {effect} beyond either side's spread"
    if rule == ONE_PROCESS:
        return (f"one process a side: a change of at least {max(min_effect, ONE_PROCESS_FLOOR) * 100:g}% "
                f"either way and {NOISE_MULTIPLE:g}x either row's sample spread, the 95% intervals "
                f"apart; {PER_PROCESS_SPREAD * 100:g}% more per side whose row is host-paced or chosen per process")
    return f"processes as samples: U test p < {alpha:g} and a median change of at least {effect}"


ONE_PROCESS_CAVEAT = (
    "one process: run more: a side is one process, whose samples cannot see how far another "
    "process of the same build lands; one-process A/A pairs of one build differ by up to 15%, so "
    f"a change under {ONE_PROCESS_FLOOR * 100:g}% (or under {NOISE_MULTIPLE:g}x the row's own spread) "
    f"is not called, and a row whose time is host-paced or chosen per process needs {PER_PROCESS_SPREAD * 100:g}% "
    "more per side (such rows move by up to 1.5x between processes of one build). For a verdict on smaller changes, merge 4 or "
    "more processes per build (tools/run-matrix, or tools/merge-processes)")


def word_of(v):
    """The verdict as a table cell: the word, and why where it is not faster or slower."""
    return f"{v.word} ({v.why})" if v.why else v.word


def counts(judged):
    """{word: [(row, Verdict)]} of [(row, Verdict)], every word present."""
    out = {w: [] for w in VERDICTS}
    for name, v in judged:
        out[v.word].append((name, v))
    return out


def _range(vs):
    s = sorted(v.speedup if v.speedup >= 1 else 1 / v.speedup for v in vs)
    return f"{s[0]:.3g}x" if s[0] == s[-1] or f"{s[0]:.3g}" == f"{s[-1]:.3g}" else f"{s[0]:.3g}-{s[-1]:.3g}x"


def _short(name):
    """A row's name as a sentence names it: without Google Benchmark's "/manual_time"."""
    return name[:-len("/manual_time")] if name.endswith("/manual_time") else name


def summary(label, base_label, judged, limit=3):
    """The line a reader acts on: "13.0 against 11.8: faster in 18 of 24 rows (1.05-3.3x), slower
    in 1 (gemm/...: 1.04x), the same in 3, too noisy to tell in 2"."""
    c, n = counts(judged), len(judged)
    parts = [f"{label} against {base_label}: faster in {len(c[FASTER])} of {n} row{'s' if n != 1 else ''}"
             + (f" ({_range([v for _, v in c[FASTER]])})" if c[FASTER] else "")]
    slower = c[SLOWER]
    if slower:
        worst = sorted(slower, key=lambda x: x[1].speedup)
        which = ", ".join(f"{_short(name)}: {1 / v.speedup:.3g}x" for name, v in worst[:limit])
        more = f" and {len(slower) - limit} more" if len(slower) > limit else ""
        parts.append(f"slower in {len(slower)} ({which}{more})")
    else:
        parts.append("slower in none")
    parts.append(f"the same in {len(c[SAME])}")
    parts.append(f"too noisy to tell in {len(c[TOO_NOISY])}")
    return ", ".join(parts)


def speedup_text(v):
    """A change as a person reads it: "1.41x faster", "1.08x slower" (never "faster x0.707")."""
    s = v.speedup
    if s >= 1:
        return f"{s:.3g}x faster"
    return f"{1 / s:.3g}x slower"
