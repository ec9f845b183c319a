"""Which rows of several result files are compared, and what is said about them besides their
verdicts: the name filter and renames, rows a build left out (not built) or a file lacks, labels
that tell the files apart, times in a unit that reads, what ran (kernels, cuBLASLt algorithm), the
clock's part in a verdict. tools/compare and tools/report both use it."""
import math
import os
import re

from .build_context import label_of, not_built_of
from .input_error import InputError

NAMED_IN_NOTE = 5  # at most this many rows are named in a note; the rest are counted
CLOCK_MARK = 0.05  # a row whose SM clocks differ more than this between files is marked `!`
NOT_BUILT = "not built"


def name_filter(pattern):
    try:
        return re.compile(pattern)
    except re.error as e:
        raise InputError(f"--filter is not a valid regex: {e}")


def rename_rules(files, rename, rename_in):
    """[[(regex, replacement)] per file] from --rename (every file) and --rename-in (one file)."""
    def rule(r, option):
        if "=" not in r:
            raise InputError(f"{option} wants REGEX=REPLACEMENT, got '{r}'")
        return tuple(r.split("=", 1))
    rules = [[rule(r, "--rename") for r in rename] for _ in files]
    for r in rename_in:
        index, _, rest = r.partition(":")
        if not index.isdigit() or not 1 <= int(index) <= len(files):
            raise InputError(f"--rename-in wants N:REGEX=REPLACEMENT with N a file's place "
                             f"(1 to {len(files)}), got '{r}'")
        rules[int(index) - 1].append(rule(rest, "--rename-in"))
    return rules


def unique_labels(paths, contexts, given=None):
    """A column name per file that says what stack made it (label_of), or the label the user gave;
    files whose names would read the same are told apart by the first of GPU, file name and path
    that differs among them (then by place: "#2")."""
    given = given or [None] * len(paths)
    labels = [g if g else label_of(p, c) for p, c, g in zip(paths, contexts, given)]
    extras = (lambda p, c: c.get("gpu", ""), lambda p, c: os.path.basename(p), lambda p, c: os.path.relpath(p))
    for lab in sorted({lab for lab in labels if labels.count(lab) > 1}):
        group = [i for i, other in enumerate(labels) if other == lab]
        for extra in extras:
            words = [extra(paths[i], contexts[i]) for i in group]
            if all(words) and len(set(words)) == len(words):
                for i, w in zip(group, words):
                    labels[i] = f"{lab} [{w}]"
                break
        else:
            for i in group[1:]:
                labels[i] = f"{lab} #{i + 1}"
    return labels


UNITS_LARGEST_FIRST = (("s", 1e6), ("ms", 1e3), ("us", 1.0), ("ns", 1e-3))


def time_text(us):
    """A time of us microseconds in the unit that keeps it between 1 and 1000, at three
    significant digits: "6.57 us", "1.01 ms", "12.2 s"."""
    if us is None or math.isnan(us):
        return ""
    us = float(f"{us:.3g}")  # rounded first: 999.95 us reads "1 ms", not "1e+03 us"
    for name, size in UNITS_LARGEST_FIRST:
        if us >= size:
            value = us / size
            # seconds have no larger unit here: a long time keeps its digits ("1234 s", not "1.23e+03")
            return f"{value:.0f} {name}" if value >= 1000 else f"{value:.3g} {name}"
    return f"{us * 1e3:.3g} ns"


MESSAGE_CHARS = 100  # a message in a table cell, cut to its first clauses within this


def short_message(text, name="", limit=MESSAGE_CHARS):
    """A row's message as a table cell holds it: without the row's own name in front (the row
    names it), whole where short, else its first clauses within limit characters, or its first
    words and "..." (the whole message goes under the table)."""
    base = name[:-len("/manual_time")] if name.endswith("/manual_time") else name
    for prefix in (name + ": ", base + ": "):
        if name and text.startswith(prefix):
            text = text[len(prefix):]
            break
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    for mark in ("; ", ": ", ", "):
        at = cut.rfind(mark)
        if at > limit // 3:
            return cut[:at] + " ..."
    return cut.rsplit(" ", 1)[0] + " ..."


def named(names, limit=NAMED_IN_NOTE):
    """'a, b, c and 4 more'."""
    shown = ", ".join(names[:limit])
    more = len(names) - limit
    return shown + (f" and {more} more" if more > 0 else "")


class LeftOut:
    """Rows a file lacks because its build left their family out: the family's source needs an
    optional library (the schema's "library") that the file's context["not_built"] says the build
    went without, and why. Such rows stay in the table, marked, instead of vanishing."""

    def __init__(self, loaded, schema):
        self.loaded, self.schema = loaded, schema
        self.not_built = [not_built_of(ctx, path) for path, ctx, _ in loaded]

    def library(self, name):
        """The optional library the family of row `name` needs ("" for none or not known)."""
        if self.schema is None:
            return ""
        holder = next(res[name] for _, _, res in self.loaded if name in res)
        family = self.schema.families.get(holder.family)
        return family.library if family is not None else ""

    def why(self, name, i):
        """Why file i has no row `name`, or None (it has it, or no build note explains it)."""
        if name in self.loaded[i][2] or not self.not_built[i]:
            return None
        return self.not_built[i].get(self.library(name)) if self.library(name) else None

    def rows(self, listed, wanted):
        """Rows not yet listed that some file has and every file lacking them was built without."""
        out = []
        for _, _, res in self.loaded:
            for n in res:
                if n in listed or n in out or not wanted.search(n):
                    continue
                lacking = [i for i, (_, _, r) in enumerate(self.loaded) if n not in r]
                if lacking and all(self.why(n, i) for i in lacking):
                    out.append(n)
        return out

    def notes(self, names, labels):
        """One line per file and library its build left out, for the rows it marks."""
        said = {}
        for n in names:
            for i in range(len(self.loaded)):
                why = self.why(n, i)
                if why:
                    said.setdefault((i, self.library(n)), why)
        return [f"{NOT_BUILT} under {labels[i]}: the {lib} families ({why})"
                for (i, lib), why in sorted(said.items())]


def missing_rows(loaded, listed, wanted, left_out):
    """{label index: [row names]} of rows a file lacks with no reason its build gives, among the
    rows some other file has (after the filter): a row silently absent from one file is named,
    never just dropped."""
    everywhere = []
    for _, _, res in loaded:
        for n in res:
            if wanted.search(n) and n not in everywhere:
                everywhere.append(n)
    out = {}
    for i, (_, _, res) in enumerate(loaded):
        lacking = [n for n in everywhere if n not in res and not left_out.why(n, i)]
        if lacking:
            out[i] = lacking
    return out


def missing_notes(missing, labels, limit=10):
    return [f"not in {labels[i]} ({len(names)} row{'s' if len(names) != 1 else ''}, no verdict): "
            f"{named(names, limit)}" for i, names in sorted(missing.items())]


# cuBLASLt's algorithm id, which only the family's own words say (gemm's "case" note, "cuBLASLt
# algo 21, autotuned: ..."): the id alone, without the figures around it that differ in any run.
CUBLASLT_ALGO = re.compile(r"cuBLASLt algo -?\d+")


def what_ran(result):
    """{"algorithm": cuBLASLt's, "kernels": the kernels one run launched as CUPTI named them
    (--cubench_kernels=on)}, each only where the row's notes say it."""
    out = {}
    algos = [m.group(0) for n in result.notes if n["kind"] == "case"
             for m in [CUBLASLT_ALGO.search(n["text"])] if m]
    if algos:
        out["algorithm"] = algos[0]
    kernels = [n["text"] for n in result.notes if n["kind"] == "kernels" and n.get("named", True)]
    if kernels:
        out["kernels"] = "; ".join(kernels)
    return out


def ran_differently(base, other):
    """(what ran in other, what ran in base) as text where both rows name the same thing (the
    algorithm, or the kernels) and it differs; None where they agree or only one names it: a
    file that names its kernels against one that does not says nothing about another kernel."""
    theirs, mine = what_ran(base), what_ran(other)
    shared = [k for k in ("algorithm", "kernels") if k in theirs and k in mine]
    if not shared or all(theirs[k] == mine[k] for k in shared):
        return None
    return "; ".join(mine[k] for k in shared), "; ".join(theirs[k] for k in shared)


def names_what_ran(result):
    return bool(what_ran(result))


def clock_made_it(judged, min_effect, several):
    """The note on faster/slower rows whose cycles changed under min_effect: the SM clock moved,
    not the work. judged: [(row, label, Verdict, cycles change)]. None where there is none."""
    rows = [f"{n} ({label})" if several else n for n, label, v, cycles in judged
            if v.called and abs(cycles) < min_effect]  # NaN: no
    if not rows:
        return None
    return (f"{len(rows)} faster or slower verdict(s) whose cycles (time x SM clock) changed under "
            f"{min_effect * 100:g}%: the clock made the difference, not the work (faster "
            f"because it ran at a higher clock, or slower at a lower one): {named(rows)}")


def clock_differs(base, other):
    clock_b, clock_o = base.median("sm_clock_MHz"), other.median("sm_clock_MHz")
    return clock_b > 0 and clock_o > 0 and abs(clock_o / clock_b - 1) > CLOCK_MARK  # NaN: unknown
