"""The seed articles' toolkit claims beside what cubench measures: prints one markdown table from
the claims (articles-claims.json, beside this script) and three result files, one per toolkit.

    tools/pyrun ../docs/results/h200/articles-claims-table.py [--claims CLAIMS.json] \\
        11.8=RESULT.json 12.4=RESULT.json 13.0=RESULT.json [--alpha A] [--min-effect E]

(from the repository root; or any python3 with scipy: python3 docs/results/h200/articles-claims-table.py ...)

The result files are cubench's, best merged from several processes (tools/merge-processes,
tools/run-matrix): a process is a sample. Per claim the table holds the article's claim, each
cubench row that measures the same operation with its median under 11.8, 12.4 and 13.0, each
step's ratio (the later median over the earlier) and tools/compare's verdict on it (faster,
slower, same, too noisy to tell; for a memory counter less and more stand for faster and slower),
and "holds here?", read from the verdicts of the step the claim names:
  yes             every row measured there agrees with the article
  partly          some do, others say same, the opposite or too noisy to tell
  no              none does: they say same or the opposite (too noisy rows besides)
  not comparable  the article names no direction, every row measured is too noisy to tell, or
                  no row was measured in both files (not built, not run, missing, failed)
A row a file lacks says why: not built (the file's context "not_built" left its family's
library out), not run (context "not_run"), or missing (the file gives no reason).
A claim's "measure" is "time" (the row's samples) or a counter (each sample's value: a merged
file's per-process first_call_ms or peak memory); compare's rule judges either.

Bad input (a file missing, claims that are not a list of claims, a result file that is not
cubench's, labels other than the three toolkits) is one line on stderr and exit status 2.
"""
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools"))
from cubench_tools import cli  # noqa: E402
from cubench_tools import report_builds  # noqa: E402
from cubench_tools import report_words  # noqa: E402
from cubench_tools import verdicts  # noqa: E402
from cubench_tools.input_error import InputError  # noqa: E402
from cubench_tools.result_schema import family_and_axes, merged_schema  # noqa: E402
from cubench_tools.results import Result, load  # noqa: E402

PROG = "docs/results/h200/articles-claims-table.py"
TOOLKITS = ("11.8", "12.4", "13.0")
DEFAULT_CLAIMS = os.path.join(HERE, "articles-claims.json")
TIME = "time"
# What compare's faster / slower mean for a memory counter: less / more of it.
MEMORY_WORDS = {verdicts.FASTER: "less", verdicts.SLOWER: "more"}
CLAIMED = ("faster", "less")
REQUIRED_TEXT = ("id", "article", "claim")
OPTIONAL_TEXT = ("title", "title_original", "operation", "quote", "figures", "vague", "versions",
                 "gpu", "method", "step_note", "rows_note")
MISSING = "missing"
ARROW = "\u2192"


# --- the command line -------------------------------------------------------------------------------

def parse_args(argv):
    p = cli.parser(PROG, __doc__)
    p.add_argument("files", nargs="+", metavar="LABEL=RESULT.json",
                   help="a result file per toolkit, labelled 11.8, 12.4 and 13.0")
    p.add_argument("--claims", default=DEFAULT_CLAIMS, help="the claims (default: articles-claims.json "
                                                           "beside this script)")
    p.add_argument("--alpha", type=float, default=verdicts.DEFAULT_ALPHA,
                   help=f"significance level (default {verdicts.DEFAULT_ALPHA})")
    p.add_argument("--min-effect", type=float, default=verdicts.DEFAULT_MIN_EFFECT,
                   help=f"smallest relative change called a change (default {verdicts.DEFAULT_MIN_EFFECT})")
    args = p.parse_args(argv)
    verdicts.check_options(args.alpha, args.min_effect)
    return args


def labelled_paths(specs):
    """{toolkit: path} from exactly one LABEL=RESULT.json per toolkit."""
    want = f"want {' '.join(f'{t}=RESULT.json' for t in TOOLKITS)}"
    paths = {}
    for spec in specs:
        label, path = report_builds.label_and_path(spec)
        if label not in TOOLKITS:
            raise InputError(f"'{spec}': {want} (a label per toolkit)")
        if label in paths:
            raise InputError(f"two files are labelled '{label}': {want}")
        paths[label] = path
    if len(paths) != len(TOOLKITS):
        lacking = ", ".join(t for t in TOOLKITS if t not in paths)
        raise InputError(f"no file for {lacking}: {want}")
    return paths


def load_builds(specs):
    """The three files as report_builds.Build (label, context, rows, not_built, not_run), oldest first."""
    paths = labelled_paths(specs)
    return [report_builds.Build(t, paths[t], *load(paths[t])) for t in TOOLKITS]


# --- the claims -------------------------------------------------------------------------------------

def is_memory(measure):
    """Memory counters read less / more; every other measure (the time, a first call's ms) is a
    time and reads faster / slower."""
    return measure.endswith("_bytes") or measure == "fragmentation"


def read_claims(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text, not a claims file")
    try:
        claims = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON ({e.msg} at line {e.lineno} column {e.colno})")
    if not isinstance(claims, list) or not claims:
        raise InputError(f"{path}: not a list of claims (want [{{\"id\": ..., \"claim\": ..., "
                         "\"rows\": [...]}}, ...])")
    seen = set()
    for i, claim in enumerate(claims):
        check_claim(path, i, claim)
        if claim["id"] in seen:
            raise InputError(f"{path}: two claims have the id '{claim['id']}'")
        seen.add(claim["id"])
    return claims


def check_claim(path, i, claim):
    """InputError naming the claim and its first fault unless it has the fields the table reads."""
    where = f"{path}: claim {i + 1}"
    if not isinstance(claim, dict):
        raise InputError(f"{where} is not an object")
    for field in REQUIRED_TEXT:
        if not isinstance(claim.get(field), str) or not claim[field]:
            raise InputError(f"{where} has no \"{field}\" text")
    where = f"{path}: claim {claim['id']}"
    for field in OPTIONAL_TEXT:
        if claim.get(field) is not None and not isinstance(claim[field], str):
            raise InputError(f"{where}: \"{field}\" is not text or null")
    if claim.get("claimed") not in CLAIMED + (None,):
        raise InputError(f"{where}: \"claimed\" is not one of {', '.join(CLAIMED)} or null")
    step = claim.get("step")
    if (not isinstance(step, list) or len(step) != 2 or not all(s in TOOLKITS for s in step)
            or TOOLKITS.index(step[0]) >= TOOLKITS.index(step[1])):
        raise InputError(f"{where}: \"step\" is not two of {', '.join(TOOLKITS)}, the older first")
    rows = claim.get("rows")
    if not isinstance(rows, list) or not rows:
        raise InputError(f"{where}: \"rows\" is not a list of {{\"name\", \"measure\"}} objects")
    for row in rows:
        if not (isinstance(row, dict) and isinstance(row.get("name"), str)
                and isinstance(row.get("measure", TIME), str)):
            raise InputError(f"{where}: \"rows\" is not a list of {{\"name\", \"measure\"}} objects")
        # A memory claim judged on a time (or the reverse) would answer a question not asked.
        if claim.get("claimed") is not None and (claim["claimed"] == "less") != is_memory(measure_of(row)):
            raise InputError(f"{where}: claims {claim['claimed']} but row {row['name']} measures "
                             f"{measure_of(row)}")


def measure_of(row):
    return row.get("measure", TIME)


# --- one row under one build ---------------------------------------------------------------------------

def result_of(build, name):
    """The row's Result in a build's file, named with or without Google Benchmark's /manual_time."""
    return build.results.get(name + "/manual_time", build.results.get(name))


def samples(result, measure):
    """The values compare judges: the row's times, or each sample's value of a counter."""
    if measure == TIME:
        return list(result.times)
    return [v for v in result.counters.get(measure, []) if not math.isnan(v)]


def why_absent(build, name, schema):
    """Why a build's file has no row `name`: not built (its family's library left out), not run
    (the run left it out and said so), or missing."""
    family = schema.family(name + "/manual_time") if schema is not None else None
    if family is not None and family.library in build.not_built:
        return f"not built ({build.not_built[family.library]})"
    family_name = family_and_axes(name, schema)[0]
    for entry in build.not_run:
        configurations = entry.get("configurations")
        named = isinstance(configurations, list) and any(
            str(c).removesuffix("/manual_time") == name for c in configurations)
        whole_family = not isinstance(configurations, list) and entry["family"] in (family_name, name)
        if named or whole_family:
            return f"not run ({entry['reason']})"
    return MISSING


class Cell:
    """One row under one build: its samples of the measure, or why there are none."""

    def __init__(self, build, name, measure, schema):
        result = result_of(build, name)
        self.result, self.processes = result, build.processes()
        self.values, self.absent = [], None
        if result is None:
            self.absent = why_absent(build, name, schema)
        elif result.error:
            self.absent = f"failed ({result.error})"
        else:
            self.values = samples(result, measure)
            if not self.values:
                self.absent = f"no {measure}" if measure != TIME else "no samples"

    def median(self):
        return statistics.median(self.values)


def fmt_value(value, measure):
    if measure == TIME:
        return report_words.fmt_time(value)
    if measure.endswith("_ms"):
        return report_words.fmt_time(value * 1e3)
    if measure.endswith("_bytes"):
        return report_words.fmt_bytes(value)
    return f"{value:.4g}"


# --- a step: one row from one build to the next ----------------------------------------------------------

class Step:
    """A row's change from an older build's cell to a newer one's: the ratio of the medians and
    compare's verdict (memory counters: less / more), or why there is none."""

    def __init__(self, old, new, measure, args):
        self.ratio, self.word, self.absent = None, None, None
        if old.absent or new.absent:
            self.absent = old.absent or new.absent
        elif old.median() == 0 or new.median() == 0:
            # compare's rule is relative (a change and a spread over the median): a zero median
            # leaves it nothing to divide by.
            self.absent = "a zero median: no relative change"
        else:
            # the time: the rows themselves, whose spread the one-process rule reads; a counter:
            # its values as the samples
            a, b = (old.result, new.result) if measure == TIME else (stand_in(old.values), stand_in(new.values))
            word = verdicts.judge(a, b, old.processes, new.processes, args.alpha, args.min_effect).word
            self.ratio = new.median() / old.median()
            self.word = MEMORY_WORDS.get(word, word) if is_memory(measure) else word

    def text(self):
        if self.absent:
            return "\u2014"
        return f"{self.ratio:#.3g}x, {self.word}"


def stand_in(values):
    """A Result holding values as its samples, which is what verdicts.judge reads of a counter."""
    r = Result("claim row")
    r.times = list(values)
    return r


# --- holds here? ---------------------------------------------------------------------------------------

def opposite(claimed):
    return {"faster": verdicts.SLOWER, "less": "more"}[claimed]


def counted(steps, word):
    return sum(s.word == word for s in steps)


def holds(claim, steps):
    """(yes / partly / no / not comparable, why) from the verdicts of the claim's step, one Step
    per row."""
    claimed = claim.get("claimed")
    if claimed is None:
        return "not comparable", "the article names no direction of change"
    old, new = claim["step"]
    judged = [s for s in steps if s.word is not None]
    unmeasured = [s.absent for s in steps if s.word is None]
    if not judged:
        return "not comparable", f"no row measured in both {old} and {new} ({reasons_text(unmeasured)})"
    agree = counted(judged, claimed)
    noisy = counted(judged, verdicts.TOO_NOISY)
    against = counted(judged, opposite(claimed))
    tally = ((verdicts.SAME, counted(judged, verdicts.SAME)), (opposite(claimed), against),
             (verdicts.TOO_NOISY, noisy))
    others = ", ".join(f"{word} in {n}" for word, n in tally if n)
    measured = f"{report_words.rows_word(len(judged))} measured at {old} {ARROW} {new}"
    # Rows left out are said, so that a yes over one row of three is not read as a yes over three.
    left_out = (f"; {report_words.rows_word(len(unmeasured))} not measured in both ({reasons_text(unmeasured)})"
                if unmeasured else "")
    if agree == len(judged):
        return "yes", f"{claimed} in {agree} of {measured}{left_out}"
    if agree:
        return "partly", f"{claimed} in {agree} of {measured}, {others}{left_out}"
    if noisy == len(judged):
        return "not comparable", f"too noisy to tell in {noisy} of {measured}{left_out}"
    return "no", f"{others} of {measured}, none {claimed}{left_out}"


def reasons_text(absent):
    """Why rows were not measured, counted by kind: '2 missing, not built'."""
    kinds = [a.split(" (")[0] for a in absent]
    return ", ".join(f"{kinds.count(k)} {k}" if kinds.count(k) > 1 else k for k in sorted(set(kinds)))


# --- the table -----------------------------------------------------------------------------------------

def steps_of(builds):
    """The consecutive steps the table shows: (older index, newer index)."""
    return [(i, i + 1) for i in range(len(builds) - 1)]


def cell_text(text):
    """Text safe in a markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def row_label(row):
    measure = measure_of(row)
    return f"`{row['name']}`" + ("" if measure == TIME else f" {measure}")


def claim_line(claim, builds, schema, args):
    """One table line for a claim: its rows joined within each cell."""
    rows = claim["rows"]
    cells = {b.label: [Cell(b, r["name"], measure_of(r), schema) for r in rows] for b in builds}
    shown = []
    for i, j in steps_of(builds):
        shown.append([Step(cells[builds[i].label][k], cells[builds[j].label][k], measure_of(r), args)
                      for k, r in enumerate(rows)])
    old, new = claim["step"]
    judged_step = [Step(cells[old][k], cells[new][k], measure_of(r), args) for k, r in enumerate(rows)]
    answer, why = holds(claim, judged_step)
    said = claim["claim"] + (f" *Vague: {claim['vague']}.*" if claim.get("vague") else "")
    article = claim["article"] + "".join(f"; {claim[k]}" for k in ("versions", "gpu") if claim.get(k))
    line = [f"**{claim['id']}**", article, said, "<br>".join(row_label(r) for r in rows)]
    for b in builds:
        line.append("<br>".join(c.absent or fmt_value(c.median(), measure_of(r))
                                for c, r in zip(cells[b.label], rows)))
    line += ["<br>".join(s.text() for s in step) for step in shown]
    line.append(f"**{answer}**: {why}")
    return "| " + " | ".join(cell_text(c) for c in line) + " |"


def header(builds):
    cells = ["claim", "article (versions; GPU)", "the article says", "cubench row (measure)"]
    cells += [f"{b.label} median" for b in builds]
    cells += [f"{builds[i].label} {ARROW} {builds[j].label} ({builds[j].label} / {builds[i].label}, verdict)"
              for i, j in steps_of(builds)]
    cells.append("holds here?")
    return ["| " + " | ".join(cells) + " |", "|" + "---|" * len(cells)]


def notes(claims, builds, args):
    """What the table's words rest on, one paragraph each: the rule, the files, and each claim's
    own notes (a list)."""
    out = [f"Verdicts: tools/compare's rule on each row's samples (U test p < {args.alpha:g} and a "
           f"median change of at least {args.min_effect * 100:g}%; too noisy to tell where the samples "
           "could not have shown such a change); a merged file's sample is a process, and a counter's "
           "samples are each process's value of it. Memory counters read less / more for faster / slower. "
           "\"holds here?\" reads the verdicts of the step each claim names."]
    out.append("Files: " + "; ".join(f"{b.label} {b.path} ({b.context.get('gpu', 'GPU not named')}, "
                                      f"{b.samples_text()})" for b in builds))
    gpus = {b.context.get("gpu", "?") for b in builds}
    if len(gpus) > 1:
        out.append(f"The files ran on different GPUs: {', '.join(sorted(gpus))}.")
    if any(b.processes() < 2 for b in builds):
        out.append(verdicts.ONE_PROCESS_CAVEAT)
    out.append("\n".join(claim_note(c) for c in claims))
    return out


def claim_note(claim):
    """How the article measured, why these rows, and what the step holds besides the article's."""
    said = [claim.get(k) for k in ("method", "rows_note", "step_note") if claim.get(k)]
    return (f"- **{claim['id']}** ({claim.get('title') or claim['article']}): "
            + "; ".join(said) + ".")


def table(claims, builds, args):
    schema = merged_schema([b.context for b in builds])
    lines = header(builds) + [claim_line(c, builds, schema, args) for c in claims]
    return "\n".join(lines) + "\n\n" + "\n\n".join(notes(claims, builds, args)) + "\n"


def main(argv):
    args = parse_args(argv)
    claims = read_claims(args.claims)
    builds = load_builds(args.files)
    sys.stdout.write(table(claims, builds, args))
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(PROG, main))
