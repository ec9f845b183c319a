"""Where a cubench run's wall time went, read from its result file alone: per family, its rows
and the seconds of their set-up, first call, check, warm-up and timed samples (the counters
setup_s, first_call_ms, validate_s, warmup_s, sampling_s), then the costliest rows; Markdown.
What the counters do not hold (the copy ceiling measured at the start, rows not timed: failed or
skipped, Google Benchmark between rows) is the gap between their sum and the run's wall time.

A file reads for what it has. One from a cubench older than some counters (first_call_ms is old,
the other four came at c5b9141, 2026-12-04), or tools/torch_reference.py's (it counts none), gets
those columns blank, and one line above the table names them and says what the file is; rows
lacking a counter that other rows carry get blank cells, named in one line too. A total is the
sum of the cells a row has. Only a file that is not a result file (not JSON, not Google
Benchmark output, no rows) is refused: one line on stderr, exit status 2."""
import json
import os
from collections import Counter, defaultdict

from . import result_schema
from . import results
from . import row_outcome
from . import tool_warnings
from .cli import parser, run
from .input_error import InputError

PARTS = (("setup_s", 1.0, "set-up s"), ("first_call_ms", 1e-3, "first call s"),
         ("validate_s", 1.0, "check s"), ("warmup_s", 1.0, "warm-up s"),
         ("sampling_s", 1.0, "samples s"))
NAMES = [name for name, _, _ in PARTS]
# setup_s, validate_s, warmup_s and sampling_s came into cubench at c5b9141 (2026-12-04), while
# its result schema was at version 1: a version-1 file may lack them (its schema then does not
# declare them), every version-2 file has them. first_call_ms is older (a version-1 file from
# before them carries it, and so do files older than the schema).
WRITTEN_SINCE = "cubench writes them since c5b9141 of 2026-12-04"
TORCH_REFERENCE = "tools/torch_reference.py"


# --- what a row says ------------------------------------------------------------------------------

def seconds(row):
    """{part: its seconds, or None where the row does not carry it}."""
    return {name: float(row[name]) * scale if name in row else None for name, scale, _ in PARTS}


def add(a, b):
    """a + b where blank (None) is nothing rather than zero: blank + blank stays blank."""
    if a is None:
        return b
    return a if b is None else a + b


def total(cells):
    """The sum of the cells a row has (blank where it has none)."""
    out = None
    for value in cells.values():
        out = add(out, value)
    return out


def first_repetitions(rows, schema=None):
    """{run name: its seconds}, of the rows that finished. A row repeated (--benchmark_repetitions)
    paid its set-up, first call, check and warm-up once (its first repetition says them) and
    sampled in every repetition, so sampling_s is summed over its repetitions. A row not timed
    (failed or skipped: its status) has placeholders for counters (cubench writes none): it is
    left out."""
    first = {}
    for row in rows:
        if row_outcome.outcome(row, schema).status != row_outcome.MEASURED:
            continue
        name, spent = row_outcome.run_name(row), seconds(row)
        if name not in first:
            first[name] = spent
        else:
            first[name]["sampling_s"] = add(first[name]["sampling_s"], spent["sampling_s"])
    return first


# --- what the file lacks, said once ---------------------------------------------------------------

def what_file(context, schema, missing):
    """What the file is, that no row of it carries the counters missing: older than them (by its
    schema version, or no schema), PyTorch's timings, or a cubench that declares them."""
    if schema is None:
        if str(context.get("executable", "")).endswith(TORCH_REFERENCE):
            return f"{TORCH_REFERENCE}'s file, which counts none of them"
        return f"older file (before cubench wrote a schema; {WRITTEN_SINCE})"
    if any(name in schema.counters for name in missing):
        return f"schema version {schema.version} declares them, yet no finished row carries them"
    if schema.version != 1:  # every cubench of a later version writes them: not its age
        return f"schema version {schema.version}, which does not declare them"
    revision = str(context.get("git_revision", "")).split()  # "c6db17d (from CUBENCH_GIT_REVISION)"
    cubench = f"cubench {revision[0]}" if revision else "a cubench of schema version 1"
    return f"older file ({cubench}; {WRITTEN_SINCE})"


def blank_columns(first):
    """The parts no listed row carries, in PARTS' order."""
    return [n for n in NAMES if all(spent[n] is None for spent in first.values())]


def partly_blank(first):
    """[(part, rows lacking it)] for the parts some listed rows carry and others lack."""
    out = []
    for n in NAMES:
        lacking = sum(spent[n] is None for spent in first.values())
        if 0 < lacking < len(first):
            out.append((n, lacking))
    return out


def untimed_words(untimed):
    """The rows not timed, counted: "2 failed, 1 not run" (a skip is not a failure)."""
    failed = sum(n for status, n in untimed.items() if status not in row_outcome.SKIPS)
    said = [f"{failed} failed"] if failed else []
    said += [f"{untimed[s]} {s.replace('_', ' ')}" for s in row_outcome.SKIPS if untimed.get(s)]
    return ", ".join(said) or "0 failed"


def notes(path, context, schema, first, untimed):
    """The lines that say which cells are blank and why: at most one for the columns no row
    fills, one for the cells some rows leave blank; untimed is {status: rows} of the rows not
    timed."""
    lines = []
    if not first:
        lines.append(f"{path}: no row finished ({untimed_words(untimed)}): nothing to list")
        return lines
    missing = blank_columns(first)
    if missing:
        lines.append(f"{path}: {what_file(context, schema, missing)}: no {', '.join(missing)} "
                     "in its rows: those columns are blank")
    partly = partly_blank(first)
    if partly:
        lacking = ", ".join(f"{n} ({k} of {len(first)} rows)" for n, k in partly)
        lines.append(f"{path}: some rows lack counters the others carry: {lacking}: those cells "
                     "are blank, and the sums and totals count the cells there are")
    return lines


# --- the tables -----------------------------------------------------------------------------------

def cell(value):
    return "" if value is None else f"{value:.1f}"


def table_row(name, count, spent):
    cells = [name] + ([str(count)] if count is not None else [])
    cells += [cell(spent[n]) for n in NAMES] + [cell(total(spent))]
    return "| " + " | ".join(cells) + " |"


def summed(spents):
    """Column by column, the sum of the cells there are (blank where there are none)."""
    out = dict.fromkeys(NAMES)
    for spent in spents:
        for n in NAMES:
            out[n] = add(out[n], spent[n])
    return out


def cost(spent):
    value = total(spent)
    return 0.0 if value is None else value


def read_rows(path):
    """(context, schema, first_repetitions of its rows, {run name: family} of them, {status: how
    many rows} of the rows not timed); InputError for a file that is not a result file. A warning
    about the file (an interrupted run's) is said once the file has loaded: a refusal stays one
    line."""
    with tool_warnings.warnings_held():
        data = results.read(path)
        schema = result_schema.schema_of(data["context"], path)
        rows = list(filter(row_outcome.is_iteration, data["benchmarks"]))
    families, not_timed = {}, {}  # not_timed: {run name: the status of a repetition not timed}
    for row in rows:
        o = row_outcome.outcome(row, schema)
        families.setdefault(row_outcome.run_name(row), o.family)
        if o.status != row_outcome.MEASURED:
            not_timed.setdefault(row_outcome.run_name(row), o.status)
    untimed = Counter(not_timed.values())
    if schema is None and not is_cubench_or_torch(data["context"], rows):
        exe = data["context"].get("executable", "")
        raise InputError(f"{path}: a Google Benchmark file, but not cubench's (no {result_schema.SCHEMA_FIELD}, "
                         f"no row with cubench's samples, sample_cv or a part of its time, executable {json.dumps(exe)}): "
                         "where-the-time-went reads cubench's own timing counters")
    return data["context"], schema, first_repetitions(rows, schema), families, untimed


# What cubench's rows carry and another program's Google Benchmark rows do not: how many samples
# a row took and their spread (since before the schema), or the parts of its time this tool
# reads. A file without a schema, without any of them, that names a program not called cubench is
# another program's Google Benchmark output.
CUBENCH_SINCE_ALWAYS = ("samples", "sample_cv") + tuple(NAMES)


def is_cubench_or_torch(context, rows):
    """Whether a file without a schema is an older cubench's (its rows carry its counters, or it
    names cubench as its program) or tools/torch_reference.py's, and not another project's Google
    Benchmark file (which names its own program and carries none of cubench's counters)."""
    executable = str(context.get("executable", ""))
    if not executable or executable.endswith(TORCH_REFERENCE) or os.path.basename(executable) == "cubench":
        return True  # a file that names no program is read for what it has
    return any(c in row for row in rows for c in CUBENCH_SINCE_ALWAYS)


def main(argv):
    p = parser("tools/where-the-time-went", __doc__)
    p.add_argument("file", help="a cubench result file (JSON)")
    p.add_argument("--rows", type=int, default=10, help="the costliest rows to list (default 10)")
    a = p.parse_args(argv)
    if a.rows < 1:  # a count under 1 would slice from the end: the wrong rows, said as the costliest
        raise InputError(f"--rows wants a count of at least 1, got {a.rows}")
    context, schema, first, family_of, untimed = read_rows(a.file)
    for line in notes(a.file, context, schema, first, untimed):
        print(line + "\n")
    families = defaultdict(list)
    for name, spent in first.items():
        families[family_of[name]].append(spent)
    heads = [h for _, _, h in PARTS]
    print("| family | rows | " + " | ".join(heads) + " | total s |")
    print("|---|---:|" + "---:|" * (len(heads) + 1))
    sums = {f: summed(spents) for f, spents in families.items()}
    for f in sorted(sums, key=lambda f: -cost(sums[f])):
        print(table_row(f, len(families[f]), sums[f]))
    print(table_row("**all**", len(first), summed(sums.values())))
    print(f"\nThe {a.rows} costliest rows:\n")
    print("| row | " + " | ".join(heads) + " | total s |")
    print("|---|" + "---:|" * (len(heads) + 1))
    for name in sorted(first, key=lambda n: -cost(first[n]))[:a.rows]:
        print(table_row(name, None, first[name]))
    return 0

