"""What the Python tools' tests share: running a tool, the sample results (tests/data), the one-line
error every tool exits 2 with, tools/compare's table read back, tools/plot leaving a chart out, toy
result files with a schema, version-3 files, and the charts tools/plot draws, caught before they
are saved."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


TOOLS = os.path.join(HERE, "..", "tools")


DATA = os.path.join(HERE, "data")


sys.path.insert(0, TOOLS)


def tool(name, *args):
    return subprocess.run([sys.executable, os.path.join(TOOLS, name), *args],
                          capture_output=True, text=True)


def data(name):
    return os.path.join(DATA, name)


def compare_table(test, a, b, *extra):
    """tools/compare --table of files a and b: ({benchmark: {column less its file's prefix: cell}}
    from the CSV, the Markdown table's text); both calls exit 0."""
    r = tool("compare.py", "--table", a, b, "--format", "csv", *extra)
    test.assertEqual(r.returncode, 0, r.stderr)
    rows = {row["benchmark"]: {k.split(": ", 1)[-1]: v for k, v in row.items()}
            for row in csv.DictReader(io.StringIO(r.stdout))}
    md = tool("compare.py", "--table", a, b, *extra)
    test.assertEqual(md.returncode, 0, md.stderr)
    return rows, md.stdout


def assert_plot_leaves_out(test, path, line, chart):
    """tools/plot on the file at path exits 0, says `line` alone on stderr and draws no `chart`."""
    with tempfile.TemporaryDirectory() as out:
        r = tool("plot.py", "--out-dir", out, path)
        test.assertEqual(r.returncode, 0, r.stderr)
        test.assertEqual(r.stderr.splitlines(), [line])
        test.assertFalse(os.path.exists(os.path.join(out, chart)))


def listing_line(family, axes, default=True):
    """A line of cubench --cubench_list=axes (fixtures/detail/run/axes_listing.h)."""
    name = "/".join([family] + [str(v) for v in axes.values()])
    return json.dumps({"name": name, "family": family, "default_suite": default, "axes": axes})


def assert_one_line_error(test, r, pattern, code=2):
    """Exit status code and exactly one line on stderr, matching pattern (a regex)."""
    test.assertEqual(r.returncode, code, r.stdout + r.stderr)
    lines = r.stderr.splitlines()
    test.assertEqual(len(lines), 1, r.stderr)
    test.assertRegex(lines[0], pattern)


# A schema as cubench writes it (context["cubench_schema"]; here as JSON text, as older files hold
# it), for families and a counter no tool has seen: toy/widget (main counter widgets_per_s against
# size n, a line per shape), toy/gadget (no size axis: bars per mode), toy (shorter than toy/widget: the longest match wins),
# and gemm (a hand-made chart's family: no generic chart).
TOY_SCHEMA = {
    "version": 1,
    "counters": {
        "widgets_per_s": {"unit": "widget/s", "better": "higher", "description": "widgets made per second"},
        "wobble": {"unit": "mm", "better": "lower", "description": "how far a widget wobbles"},
        "sm_clock_MHz": {"unit": "MHz", "better": "none", "description": "SM clock of the samples"},
        "TFLOPS": {"unit": "TFLOP/s", "better": "higher", "description": "FLOPs per second"}},
    "families": {
        "toy/widget": {"description": "widgets of a shape", "axes": [{"name": "shape", "kind": "string"},
                                                                     {"name": "n", "kind": "int"}],
                       "main_counter": "widgets_per_s", "size_axis": "n", "timer": "cuda_events",
                       "counters": ["widgets_per_s", "wobble"]},
        "toy/gadget": {"description": "", "axes": [{"name": "mode", "kind": "string"}, {"name": "n", "kind": "pow2"}],
                       "main_counter": "", "size_axis": "", "timer": "cuda_events", "counters": []},
        "toy": {"description": "", "axes": [{"name": "what", "kind": "string"}], "main_counter": "",
                "size_axis": "", "timer": "cuda_events", "counters": []},
        "gemm": {"description": "C = A^T B", "axes": [{"name": "dtype", "kind": "string"}, {"name": "m", "kind": "int"},
                                                      {"name": "n", "kind": "int"}, {"name": "k", "kind": "int"}],
                 "main_counter": "TFLOPS", "size_axis": "m", "timer": "cuda_events", "counters": []}}}


TOY_SIZES = (10, 1000, 100000)


def toy_row(name, i, time_us, **counters):
    return dict({"name": name, "run_name": name, "run_type": "iteration", "repetitions": 5,
                 "repetition_index": i, "threads": 1, "iterations": 10, "real_time": time_us,
                 "cpu_time": time_us, "time_unit": "us", "label": ""}, **counters)


def toy_file(directory, name, square_speedup=1.0, wobble=0.5, schema=TOY_SCHEMA, sizes=TOY_SIZES):
    """Five repetitions of toy/widget/<round|square>/<n> for n in sizes, toy/gadget/<fast|slow>/<64|1024>
    and one square GEMM; the square widgets made square_speedup times as fast as the round ones."""
    rows = []
    for shape in ("round", "square"):
        for n in sizes:
            for i in range(5):
                t = n * 1e-3 * (1 + 0.001 * i)
                rows.append(toy_row(f"toy/widget/{shape}/{n}/manual_time", i, t,
                                    widgets_per_s=n / (t * 1e-6) * (square_speedup if shape == "square" else 1),
                                    wobble=wobble + 0.001 * i, sm_clock_MHz=1980.0))
    for mode, scale in (("fast", 1), ("slow", 3)):
        for n in (64, 1024):
            rows += [toy_row(f"toy/gadget/{mode}/{n}/manual_time", i, n * scale + i, sm_clock_MHz=1980.0)
                     for i in range(5)]
    rows += [toy_row("gemm/bf16/256/256/256/manual_time", i, 10.0 + i, TFLOPS=3.3, sm_clock_MHz=1980.0)
             for i in range(5)]
    context = {"cuda_toolkit": "13.0", "cublas": "13.1.0", "gpu": "NVIDIA H200"}
    if schema is not None:
        context["cubench_schema"] = json.dumps(schema)
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        json.dump({"context": context, "benchmarks": rows}, f)
    return path


def chart_summary(figures):
    """What each chart draws, as JSON: per panel its title, axis labels and scales, annotations,
    each file's line (label, colour, points) and bars (label, colour, positions, heights)."""
    from matplotlib.colors import to_hex
    out = {}
    for chart, axes in sorted(figures.items()):
        panels = []
        for ax in axes:
            series = []
            for c in ax.containers:
                if c.get_label().startswith("_"):
                    continue  # the error bars of bars
                if hasattr(c, "patches"):
                    series.append(["bars", c.get_label(), to_hex(c.patches[0].get_facecolor()),
                                   [[round(p.get_x(), 9), round(p.get_height(), 9)] for p in c.patches]])
                else:
                    line = c.lines[0]
                    series.append(["line", c.get_label(), to_hex(line.get_color()),
                                   [[round(float(x), 9), round(float(y), 9)]
                                    for x, y in zip(line.get_xdata(), line.get_ydata())]])
            panels.append({"title": ax.get_title(), "x": ax.get_xlabel(), "y": ax.get_ylabel(),
                           "scales": [ax.get_xscale(), ax.get_yscale()],
                           "notes": [t.get_text() for t in ax.texts], "series": series,
                           "categories": [t.get_text() for t in ax.get_xticklabels()] if ax.patches else []})
        out[chart] = panels
    return out


V3 = os.path.join(DATA, "v3")  # version-3 files, made by tests/data/v3/make_v3.py


def v3(name):
    return os.path.join(V3, name)


def plot_figures(test, *paths, whole=False):
    """{chart's file name: its panels}, or with whole, {chart's file name: its figure}: every chart
    tools/plot draws of paths, caught before it is saved (test asserts that plot succeeded)."""
    from cubench_tools import chart_drawing, plot
    figures = {}
    saved = chart_drawing.save

    def keep(plt, fig, axes, n, title, path):
        figures[os.path.basename(path)] = fig if whole else list(axes.flat)[:n]
        return saved(plt, fig, axes, n, title, path)
    chart_drawing.save = keep
    try:
        with tempfile.TemporaryDirectory() as out, open(os.devnull, "w") as quiet:
            stderr, sys.stderr = sys.stderr, quiet
            try:
                test.assertEqual(plot.main(["--out-dir", out, *paths]), 0)
            finally:
                sys.stderr = stderr
    finally:
        chart_drawing.save = saved
    return figures
