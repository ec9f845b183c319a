"""tools/report's builds: each result file loaded with its label, and the comparison of every
build against the base (and, with three or more, against the one before it), row by row."""
import json
import os

from . import rows as rowsel
from . import verdicts
from .build_context import not_built_of
from .input_error import InputError
from .result_schema import merged_schema
from .results import load


NOT_RUN_FIELD = "not_run"
# The families whose rows are a cost (a fresh process per sample), not a speed.
STARTUP = "startup"


def label_and_path(spec):
    """(label or None, path) of LABEL=RESULT.json or RESULT.json; a path that exists as given is a
    path even where it holds '='."""
    if "=" not in spec or os.path.exists(spec):
        return None, spec
    label, path = spec.split("=", 1)
    if not label.strip() or not path:
        raise InputError(f"'{spec}': want LABEL=RESULT.json (e.g. 11.8=cuda-11.8.json) or RESULT.json")
    return label.strip(), path



class Build:
    """One result file: its label on the page, its context and its rows {name: Result}."""

    def __init__(self, label, path, context, results):
        self.label, self.path, self.context, self.results = label, path, context, results
        self.not_built = not_built_of(context, path)
        self.not_run = not_run_of(context, path)

    def processes(self):
        return verdicts.processes_of(self.context)

    def repetitions(self):
        """The most samples any row of the file has (a merged file's sample is a process)."""
        return max((len(r.times) for r in self.results.values()), default=0)

    def samples_text(self):
        processes = self.context.get("processes")
        if processes:
            return f"{processes} processes, one sample each"
        n = self.repetitions()
        if n > 1:
            return f"one process, {n} repetitions"
        return "one process, one repetition: no significance test"


def not_run_of(context, path):
    """[{"family", "reason", "configurations"}] of context "not_run" (a list, or JSON text of one,
    as a string is what Google Benchmark's context holds); [] where the file has none."""
    value = context.get(NOT_RUN_FIELD)
    if value is None:
        return []
    where = f"{path}: context \"{NOT_RUN_FIELD}\""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise InputError(f"{where} is not JSON ({e.msg} at line {e.lineno} column {e.colno})")
    entry_ok = (lambda e: isinstance(e, dict) and isinstance(e.get("family"), str)
                and isinstance(e.get("reason"), str)
                and isinstance(e.get("configurations", []), (int, str, list)))
    if not isinstance(value, list) or not all(entry_ok(e) for e in value):
        raise InputError(f"{where} is not a list of {{\"family\": ..., \"reason\": ..., "
                         "\"configurations\": ...}} objects")
    return value


def load_builds(args):
    specs = [label_and_path(spec) for spec in args.files]
    rules = rowsel.rename_rules(args.files, args.rename, args.rename_in)
    read = [(label, path) + load(path, file_rules) for (label, path), file_rules in zip(specs, rules)]
    labels = build_labels([(label, path, ctx) for label, path, ctx, _ in read])
    return [Build(lab, path, ctx, res) for lab, (_, path, ctx, res) in zip(labels, read)]


def build_labels(specs):
    """Each build's label: the one given, else the stack its file names; never two alike (two
    given alike is an error; files of one stack are told apart as tools/compare tells them)."""
    given = [label for label, _, _ in specs if label is not None]
    twice = sorted({label for label in given if given.count(label) > 1})
    if twice:
        raise InputError(f"two files are labelled '{twice[0]}': a label names one build")
    return rowsel.unique_labels([path for _, path, _ in specs], [ctx for _, _, ctx in specs],
                                [label for label, _, _ in specs])


def timed(result):
    return result is not None and result.measured()


class Judgement:
    """One row of one build against the base: the verdict on its time (verdicts.judge, the rule
    every tool uses), with what the page says about it."""

    def __init__(self, base, other, args, base_processes, processes):
        self.verdict = verdicts.judge(base, other, base_processes, processes, args.alpha,
                                      args.min_effect, args.no_utest)
        self.word, self.p = self.verdict.word, self.verdict.p
        self.speedup = base.median_time() / other.median_time()
        self.cycles_change = other.mcycles() / base.mcycles() - 1  # NaN without clocks
        self.clock_mark = rowsel.clock_differs(base, other)
        self.significance = self.significance_text()

    def significance_text(self):
        v = self.verdict
        if v.rule == verdicts.ONE_PROCESS:
            return "one process a side" + (f": {v.why}" if v.why else "")
        if v.rule == verdicts.NO_UTEST:
            return "no U test (--no-utest)" + (f": {v.why}" if v.why else "")
        return f"p = {v.p:.2g}" + (f" ({v.why})" if v.why else "")


class Comparison:
    """The rows compared (compare --table's: the base's rows another build has, and rows a build
    left out with a reason), their families, and each other build's judgement of each."""

    def __init__(self, builds, args):
        self.builds, self.base, self.others, self.args = builds, builds[0], builds[1:], args
        self.schema = merged_schema([b.context for b in builds])
        self.left_out = rowsel.LeftOut([(b.path, b.context, b.results) for b in builds], self.schema)
        self.names = self.compared_names()
        self.family = {n: self.family_of(n) for n in self.names}
        self.judgements = {}
        for n in self.names:
            for i, b in enumerate(builds[1:], 1):
                base_r, r = self.base.results.get(n), b.results.get(n)
                if timed(base_r) and timed(r):
                    self.judgements[(n, i)] = Judgement(base_r, r, args, self.base.processes(),
                                                        b.processes())

    def compared_names(self):
        wanted = rowsel.name_filter(self.args.filter)
        base = self.base.results
        if self.args.filter_given and not any(wanted.search(n) for b in self.builds for n in b.results):
            raise InputError(f"--filter '{self.args.filter}' matches no benchmark of the files")
        names = [n for n in base if wanted.search(n) and any(n in b.results for b in self.others)]
        names += self.left_out.rows(names, wanted)
        if not names:
            matching = f" matching --filter '{self.args.filter}'" if self.args.filter_given else ""
            raise InputError(f"no benchmark of {self.base.path}{matching} is in the other files (names "
                             "must match exactly; --rename can map one naming onto another)")
        return names

    def family_of(self, name):
        return next(b.results[name] for b in self.builds if name in b.results).family

    def families(self):
        """{family: [row names]}, in the order the rows come."""
        out = {}
        for n in self.names:
            out.setdefault(self.family[n], []).append(n)
        return out

    def why_not_built(self, name, i):
        return self.left_out.why(name, i)


def is_startup(family):
    return family == STARTUP or family.startswith(STARTUP + "/")


def row_title(name, family=None):
    """A row as the page names it: without Google Benchmark's "/manual_time", and in its family's
    table without the family ("gesvd/fp32/1024")."""
    base = name[:-len("/manual_time")] if name.endswith("/manual_time") else name
    return base[len(family) + 1:] if family and base.startswith(family + "/") else base
