"""The one page a user hands their team: two or more cubench result files (one per build, e.g. a
CUDA toolkit each), compared, as one Markdown file and one self-contained HTML file.

  tools/report --out PATH [LABEL=]RESULT.json [LABEL=]RESULT.json [...]
               [--filter R] [--rename R=S] [--rename-in N:R=S] [--alpha A] [--min-effect E]
               [--no-utest] [--history DB]

e.g. tools/report --out report 11.8=cuda-11.8.json 12.4=cuda-12.4.json 13.0=cuda-13.0.json

--history DB (a tools/history database) adds a trend section at the end: each compared row's time
across the history's runs on the base build's GPU, a chart per family with its change points.

Writes PATH.md (GitHub shows it; its charts are PNGs in PATH-charts/, beside it) and PATH.html
(one file: its charts embedded, nothing outside it needed), and prints their paths. LABEL names a
build on the page (without one, the stack the file names: "CUDA 13.0 (cuBLAS 13.1.0)"; a LibTorch
build's, by its PyTorch: "LibTorch 2.5.1+cu124 (CUDA 12.4, cuDNN 9.1.0, cuBLAS 12.4.5)"). Builds
of one PyTorch install (tools/run-matrix --torch under two labels) are said, first, to be an A/A.
A run without a GPU is titled by the CPU ("the CPU (no GPU)"). The first file is the base: every
other build is judged against it, row by row, by tools/compare's rule
(tools/cubench_tools/verdicts.py: a U test over processes where both files are merged from
several; else the one-process rule, which calls no change under 10%; the options are compare's).
The page holds:
  - first, per other build, its rows counted against the base ("13.0 against 11.8: faster in 43
    of 78 rows (1.02-5.89x), slower in 1 (...), the same in 31, too noisy to tell in 3") and one
    recommendation with its reason (pick it, keep the base, either, or no pick: a pick needs
    faster or slower rows whose cycles changed too, more of them than the rule's false-positive
    rate makes likely among that many rows); with three builds or more, each build against the
    one before it as well; then each family's
    sentence (a family is mixed only where its called rows split past a quarter) and how to read
    the page;
  - per family, its verdict in one sentence made from its rows ("13.0 is 2.1-3.3x faster than
    11.8 at svd (4 of 4 rows significant); 12.4 gained nothing there (no significant change)"),
    then the rows behind it: each build's median time, speed-up, verdict and significance (a
    row's long message, such as why it was not timed, cut to its first clauses in the cell, [1],
    and whole under the table); and the family's chart (tools/plot's);
  - the GPU's conditions during each build's run: GPU, power cap and clocks, the SM clock the
    samples ran at, rows power-capped or throttled, other processes on the GPU, the samples;
  - the kernels that changed: rows whose notes name other kernels (cubench --cubench_kernels=on)
    or another cuBLASLt algorithm than the base's;
  - what was not built and why (context "not_built"), rows not run (context "not_run": a list of
    {"family", "reason", "configurations"}, or JSON text of one), rows skipped (their status not
    run or not supported, with its reason: skips, not failures) and rows missing for no reason a
    file gives;
  - the cost side: the start-up families' rows, peak memory (peak_mem_bytes / used_mem_bytes)
    per family and build, the first calls' time;
  - the exact commands (context "command_line", which tools/run-matrix records; else the
    executable) and every version and build field of each file's context, with what the puzzling
    ones mean (cuda_architectures, google_benchmark, ...).
A build of one process is judged by the one-process rule, and its significance cells say so
("one process a side: one process: run more"): merge several processes per build
(tools/run-matrix, or tools/merge-processes) for verdicts on smaller changes.
Bad input (a file missing, not JSON, not Google Benchmark's, fewer than two files, two files with
one label, an unwritable PATH) is one line on stderr and exit status 2, and nothing is written.
"""
import os
import re

from . import cli
from . import family_charts
from . import ratio_chart as ratio_chart_module
from . import verdicts
from .build_context import label_of, ran_on
from .input_error import InputError
from .page import Bullets, Chart, Code, Details, Heading, Paragraph, Strong, html_page, markdown
from .report_builds import Comparison, load_builds
from .report_conditions import conditions_blocks
from .report_context import command_blocks, version_blocks
from .report_rows import reading_blocks, row_blocks, verdict_blocks
from .report_side_sections import cost_blocks, kernel_blocks, left_out_blocks
from .report_words import overall_blocks


PROG = "tools/report"
# tools/plot's hand-made charts and the family each belongs to; a generic chart is its family's
# name with / as _ (family_charts.generic).
OTHER = ""  # the charts of no family with a section of its own
HAND_MADE_CHART_FAMILY = {"gemm.png": "gemm", "sigmoid.png": "sigmoid", "allreduce.png": "allreduce",
                          "svd.png": "svd", "resnet.png": "resnet50_train",
                          "resnet-memory.png": "resnet50_train", "transformer.png": "transformer_fwd"}


# --- the command line -----------------------------------------------------------------------------

def parse_args(argv):
    p = cli.parser(PROG, __doc__)
    p.add_argument("files", nargs="+", metavar="[LABEL=]RESULT.json",
                   help="a result file per build, the base first; LABEL names the build on the page")
    p.add_argument("--out", required=True, metavar="PATH",
                   help="writes PATH.md, PATH.html and PATH-charts/ (the Markdown's charts)")
    p.add_argument("--filter", help="regex on benchmark names (after renaming)")
    p.add_argument("--rename", action="append", default=[], metavar="REGEX=REPLACEMENT",
                   help="rewrite names before matching, as tools/compare's")
    p.add_argument("--rename-in", action="append", default=[], metavar="N:REGEX=REPLACEMENT",
                   help="as --rename, in the Nth file only (1-based)")
    p.add_argument("--alpha", type=float, default=verdicts.DEFAULT_ALPHA,
                   help=f"significance level (default {verdicts.DEFAULT_ALPHA})")
    p.add_argument("--min-effect", type=float, default=verdicts.DEFAULT_MIN_EFFECT,
                   help=f"smallest relative change called a change (default {verdicts.DEFAULT_MIN_EFFECT})")
    p.add_argument("--no-utest", action="store_true", help="no significance test (the spread rule alone)")
    p.add_argument("--history", metavar="DB",
                   help="a tools/history database: a trend chart per family of the compared rows "
                        "across its runs on the base build's GPU, change points marked")
    args = p.parse_args(argv)
    args.filter_given = args.filter is not None
    args.filter = "." if args.filter is None else args.filter
    verdicts.check_options(args.alpha, args.min_effect)
    if len(args.files) < 2:
        raise InputError("needs two result files or more, one per build (the base first), "
                         f"got {len(args.files)}")
    return args


def output_paths(out):
    """(PATH.md, PATH.html, PATH-charts) for --out PATH (a .md or .html ending is let be)."""
    stem = re.sub(r"\.(md|html)$", "", out)
    # '', '.md', 'dir/' or '.' name no file: their outputs would be hidden ones (.md, .html, -charts)
    if os.path.basename(stem) in ("", ".", ".."):
        raise InputError(f"--out {out!r}: names no file; give PATH for PATH.md, PATH.html and "
                         "PATH-charts/ (e.g. --out report)")
    return stem + ".md", stem + ".html", stem + "-charts"


def check_outputs(md_path, html_path, charts_dir):
    """Every output checked before any work, so bad input writes nothing."""
    cli.check_output_file(md_path, "--out")
    cli.check_output_file(html_path, "--out")
    if os.path.exists(charts_dir) and not os.path.isdir(charts_dir):
        raise InputError(f"--out {charts_dir}: exists and is not a directory (the charts' folder)")
    if os.path.isdir(charts_dir):  # one there already is written into: found out now, not after
        cli.output_dir(charts_dir, "--out")


# --- the page ---------------------------------------------------------------------------------------

def stack_of(build):
    """The stack a file names, without the processes the header says separately."""
    return label_of(build.path, {k: v for k, v in build.context.items() if k != "processes"})


def one_install_warnings(builds):
    """A warning per group of builds of one PyTorch install (tools/run-matrix records each build's
    Torch_DIR, as its real path, and torch version): their comparison is an A/A, said first, as a
    reader would otherwise read it as two PyTorch builds."""
    groups = {}
    for b in builds:
        key = (b.context.get("torch_dir"), b.context.get("torch_version"))
        if all(key):
            groups.setdefault(key, []).append(b.label)
    return [f"{', '.join(labels[:-1])} and {labels[-1]} are one PyTorch install (torch {version}, "
            f"Torch_DIR {torch_dir}): this comparison is an A/A, the install against itself, not "
            "two PyTorch builds; a difference between them is noise."
            for (torch_dir, version), labels in groups.items() if len(labels) > 1]


def header_blocks(comparison, first_chart=()):
    c = comparison
    gpus = sorted({ran_on(b.context) for b in c.builds})
    title = f"cubench report: {', '.join(b.label for b in c.builds)} on {' and '.join(gpus)}"
    items = [[Strong(b.label), " (the base)" if k == 0 else "", ": ", Code(b.path),
              f": {stack_of(b)}; {b.samples_text()}"] for k, b in enumerate(c.builds)]
    warnings = [Paragraph([Strong("Warning:"), " " + w]) for w in one_install_warnings(c.builds)]
    blocks = [Heading(1, title)] + warnings
    blocks += overall_blocks(c) + list(first_chart) + [Bullets(items)]
    notes = list(dict.fromkeys(b.context["note"] for b in c.builds if isinstance(b.context.get("note"), str)))
    if notes:  # hand-made or annotated files say so before anything is read from them
        blocks.append(Paragraph(("The files say: " if len(notes) == 1 else "Notes in the files: ")
                                + " / ".join(notes)))
    return title, blocks


def chart_blocks(comparison, paths, notes):
    """{family: [its charts, and tools/plot's notes on what it left out of them]} for the
    families with a section; charts and notes of no such family under OTHER."""
    families = set(comparison.family.values())
    out = {}
    for path in paths:
        name = os.path.basename(path)
        family = HAND_MADE_CHART_FAMILY.get(name) or next(
            (f for f in families if f.replace("/", "_") + ".png" == name), None)
        family = family if family in families else OTHER
        out.setdefault(family, []).append(Chart(path, f"{family} chart" if family != OTHER else name))
    for note in notes:  # plot's notes begin with the family they are about: "allreduce: left out..."
        family = note.split(":", 1)[0]
        out.setdefault(family if family in families else OTHER, []).append(Paragraph(f"Not drawn: {note}."))
    return out


def draw_charts(builds, charts_dir):
    """tools/plot's charts of the builds, a colour per build; (paths, notes on what was left out)."""
    try:
        cli.quiet_matplotlib()
        import matplotlib  # noqa: F401 - checked before the work, not in the middle of it
    except ImportError:
        raise InputError("matplotlib is missing (Debian: apt-get install python3-matplotlib)")
    charts, notes = family_charts.charts_for([(b.label, b.context, b.results) for b in builds], charts_dir)
    if charts:
        cli.output_dir(charts_dir, "--out")
    return [chart() for chart in charts], notes


def ratio_chart(comparison, charts_dir):
    """The first screen's chart: every row's speed-up against the base with its interval, one
    PNG in charts_dir; [] where no row was judged."""
    c = comparison
    rows = [(n, i, c.base.results[n], c.builds[i].results[n], j.verdict)
            for (n, i), j in c.judgements.items()]
    if not rows:
        return []
    cli.output_dir(charts_dir, "--out")
    path = ratio_chart_module.draw(os.path.join(charts_dir, "every-row.png"), rows,
                                   {i: b.label for i, b in enumerate(c.builds) if i}, c.family)
    return [Chart(path, "every row's speed-up against the base, with its interval")]


def folded(summary, blocks):
    """A section folded under a one-line summary of what it holds; opened, it reads as before."""
    return [Details(summary, blocks)]


def page(comparison, argv, chart_paths, chart_notes, first_chart=()):
    """The answer on the first screen (each build's rows counted and the pick, one chart of every
    row, the families' sentences), then, folded, how to read it, the rows and charts behind it,
    and what a reader checks before trusting it."""
    charts = chart_blocks(comparison, chart_paths, chart_notes)
    title, blocks = header_blocks(comparison, list(first_chart))
    blocks += verdict_blocks(comparison)
    blocks += folded("How to read this page", reading_blocks(comparison))
    blocks += folded("Rows: each family's table and chart", row_blocks(comparison, charts))
    if charts.get(OTHER):
        blocks += folded("Other charts", charts[OTHER])
    blocks += folded("The GPU's conditions", conditions_blocks(comparison))
    blocks += folded("Kernels that changed", kernel_blocks(comparison))
    blocks += folded("Not built, not run, missing", left_out_blocks(comparison))
    blocks += folded("The cost side: start-up, memory, first calls", cost_blocks(comparison, charts))
    blocks += folded("Commands", command_blocks(comparison, argv))
    blocks += folded("Versions and build fields", version_blocks(comparison))
    return title, blocks


def open_history(db_path):
    """The --history database, opened before any work (a bad one is one line, nothing written)."""
    from . import history_store
    return history_store.connect(db_path, create=False)


def trend_blocks(builds, db, db_path, charts_dir, min_effect):
    """The compared rows across a history's runs on the base build's GPU (tools/history): a
    heading, what was found, a chart per family."""
    from . import change_points
    from . import history_charts
    from . import history_store
    names = {r.run_name for b in builds for r in b.results.values()}
    gpu = builds[0].context.get("gpu") or None
    series = {n: p for n, p in history_store.series(db, None, gpu).items() if n in names}
    blocks = [Heading(2, "Trend: the history's runs", anchor="trend")]
    if not series:
        return blocks + [Paragraph(f"{db_path} holds none of these rows on {gpu or 'this GPU'}.")]
    changes = change_points.changes_of(series, min_effect)
    found = [f"{name}: {'slower' if ratio > 1 else 'faster'} x{ratio:.3g} from run {i + 1} ({words})"
             for name, c in changes.items() for i, ratio, words in c]
    runs = len({p["run"] for points in series.values() for p in points})
    blocks.append(Paragraph(
        f"From {db_path}: {len(series)} of the compared rows over {runs} runs on {gpu}; "
        f"{len(found)} change point(s) (tools/history's step fit: at least {min_effect:.0%} and "
        "beyond three standard errors; docs/history.md)."))
    if found:
        blocks.append(Bullets(found[:20] + ([f"and {len(found) - 20} more (tools/history show)"]
                                            if len(found) > 20 else [])))
    for path in history_charts.trend_charts(cli.output_dir(charts_dir, "--out"), series, changes,
                                     prefix="trend-"):
        blocks.append(Chart(path, f"trend of {os.path.basename(path)[6:-4]} across the history"))
    return blocks


def main(argv):
    args = parse_args(argv)
    md_path, html_path, charts_dir = output_paths(args.out)
    check_outputs(md_path, html_path, charts_dir)
    history_db = open_history(args.history) if args.history else None
    builds = load_builds(args)
    comparison = Comparison(builds, args)
    chart_paths, chart_notes = draw_charts(builds, charts_dir)
    title, blocks = page(comparison, argv, chart_paths, chart_notes, ratio_chart(comparison, charts_dir))
    if args.history:
        blocks += trend_blocks(builds, history_db, args.history, charts_dir, args.min_effect)
    cli.write_file(md_path, markdown(blocks, os.path.dirname(os.path.abspath(md_path))), "--out")
    cli.write_file(html_path, html_page(blocks, title), "--out")
    print(md_path)
    print(html_path)
    return 0
