"""ctest: the Python tools on committed sample results (tests/data): the N-way table's numbers and
marks, CSV, exit codes on bad input, the compare.py front, files cut mid-write, and that every
chart is written with one colour per file. (Each class of bad input file is also a ctest case of
its own: tools.bad_input.* in tests/CMakeLists.txt.)

Exit status convention, every tool: 0 done; 2 a bad flag, input file or output path, with exactly
one line on stderr; 1 the work failed or an internal error, one line too."""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "tools")
DATA = os.path.join(HERE, "data")
sys.path.insert(0, TOOLS)


def tool(name, *args):
    return subprocess.run([sys.executable, os.path.join(TOOLS, name), *args],
                          capture_output=True, text=True)


def data(name):
    return os.path.join(DATA, name)


def assert_one_line_error(test, r, pattern, code=2):
    """Exit status code and exactly one line on stderr, matching pattern (a regex)."""
    test.assertEqual(r.returncode, code, r.stdout + r.stderr)
    lines = r.stderr.splitlines()
    test.assertEqual(len(lines), 1, r.stderr)
    test.assertRegex(lines[0], pattern)


class Table(unittest.TestCase):
    def table(self, *extra):
        r = tool("compare.py", "--table", data("cuda-13.0.json"), data("cuda-11.8.json"),
                 "--format", "csv", "--counters", "TFLOPS,GBps", *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        return {row["benchmark"]: row for row in rows}, rows

    def test_numbers_and_columns_name_their_stack(self):
        by_name, rows = self.table()
        g = by_name["gemm/bf16/8192/8192/8192/manual_time"]
        self.assertEqual(g["CUDA 13.0 (cuBLAS 13.1.0): time us"], "1600")
        self.assertEqual(g["CUDA 11.8 (cuBLAS 11.11.3): time us"], "1760")
        self.assertEqual(g["CUDA 11.8 (cuBLAS 11.11.3): change %"], "+10.0")
        self.assertAlmostEqual(float(g["CUDA 13.0 (cuBLAS 13.1.0): TFLOPS"]), 687.2, places=1)
        self.assertNotIn("allreduce/fp32/1073741824/outofplace/manual_time", by_name)  # not in b

    def test_significance_needs_p_and_effect(self):
        by_name, _ = self.table()
        verdict = "CUDA 11.8 (cuBLAS 11.11.3): verdict"
        self.assertEqual(by_name["gemm/bf16/8192/8192/8192/manual_time"][verdict], "slower")
        # 1% slower with p < 0.05 is under the minimum effect: same; its clocks differ by 15%: '!'
        self.assertEqual(by_name["gemm/bf16/4096/4096/4096/manual_time"][verdict], "same !")
        self.assertEqual(by_name["sigmoid/vectorized/fp32/10000000/cold/manual_time"][verdict], "same")
        self.assertEqual(by_name["launch/empty/manual_time"][verdict], "same")
        by_name, _ = self.table("--min-effect", "0.005")
        self.assertEqual(by_name["gemm/bf16/4096/4096/4096/manual_time"][verdict], "slower !")

    def test_errors_show_as_the_cell(self):
        by_name, _ = self.table()
        self.assertIn("wrong result", by_name["svd/gesvd/fp32/1024/manual_time"]["CUDA 11.8 (cuBLAS 11.11.3): time us"])

    def test_a_file_against_itself_is_all_same_and_columns_name_the_files(self):
        r = tool("compare.py", "--table", data("cuda-13.0.json"), data("cuda-13.0.json"), "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        verdict = "CUDA 13.0 (cuBLAS 13.1.0) [cuda-13.0.json]: verdict"
        self.assertTrue(rows)
        self.assertTrue(all(row[verdict] == "same" for row in rows), rows)

    def test_rename_in_one_file_leaves_the_others_alone(self):
        both, _ = self.table("--rename", "^gemm/bf16/4096/=x/")
        self.assertIn("x/4096/4096/manual_time", both)  # renamed in both files: still matched
        first, _ = self.table("--rename-in", "1:^gemm/bf16/4096/=x/")
        self.assertNotIn("x/4096/4096/manual_time", first)  # the second file kept the old name
        self.assertNotIn("gemm/bf16/4096/4096/4096/manual_time", first)
        self.assertIn("gemm/bf16/8192/8192/8192/manual_time", first)

    def test_markdown(self):
        r = tool("compare.py", "--table", data("cuda-13.0.json"), data("cuda-11.8.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("| benchmark |"))
        self.assertIn("| slower |", r.stdout)


class BadInput(unittest.TestCase):
    def one_line_exit_2(self, *args, expect):
        assert expect, "an empty expectation matches any message"
        assert_one_line_error(self, tool("compare.py", *args), "^tools/compare: .*" + re.escape(expect))

    def test_not_json(self):
        self.one_line_exit_2("--table", data("bad/not-json.json"), data("cuda-13.0.json"), expect="not JSON")

    def test_not_google_benchmark(self):
        self.one_line_exit_2("--table", data("not-gbench.json"), data("cuda-13.0.json"),
                             expect="not Google Benchmark output")

    def test_nothing_in_common(self):
        self.one_line_exit_2("--table", data("cuda-13.0.json"), data("nothing-in-common.json"),
                             expect="is in the other files")

    def test_u_test_needs_repetitions(self):
        self.one_line_exit_2("--table", data("one-repetition.json"), data("cuda-13.0.json"),
                             expect="at least 2 repetitions")
        r = tool("compare.py", "--table", "--no-utest", data("one-repetition.json"), data("cuda-13.0.json"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_rename_that_merges_two_benchmarks(self):
        self.one_line_exit_2("--table", data("cuda-13.0.json"), data("cuda-11.8.json"),
                             "--rename-in", "2:/(4096|8192)/.*=/n", expect="renaming maps both")

    def test_rename_in_names_a_file_that_is_not_there(self):
        self.one_line_exit_2("--table", data("cuda-13.0.json"), data("cuda-11.8.json"),
                             "--rename-in", "3:a=b", expect="--rename-in wants N:")

    def test_missing_file(self):
        self.one_line_exit_2("--table", data("no-such.json"), data("cuda-13.0.json"), expect="cannot read")

    def test_compare_py_front_checks_input_first(self):
        self.one_line_exit_2(data("bad/not-json.json"), data("cuda-13.0.json"), expect="not JSON")

    def test_compare_py_front_says_when_files_share_nothing(self):
        self.one_line_exit_2(data("cuda-13.0.json"), data("nothing-in-common.json"),
                             expect="share no benchmark")
        self.one_line_exit_2(data("cuda-13.0.json"), data("cuda-11.8.json"), "--filter", "^svd/gesvdj",
                             expect="share no benchmark matching --filter '^svd/gesvdj'")

    def test_an_option_the_mode_lacks_is_named(self):
        two = (data("cuda-13.0.json"), data("cuda-11.8.json"))
        for args, expect in ((("--format", "csv"), "--format is not an option of two-file mode"),
                             (("--min-effect", "0.1"), "--min-effect is not an option of two-file mode"),
                             (("--counters", "TFLOPS"), "--counters is not an option of two-file mode"),
                             (("--table", "-d", "x.json"), "-d is not an option of --table"),
                             (("--table", "--no-color"), "--no-color is not an option of --table"),
                             (("--benchmark_filter=x",), "unrecognized arguments: --benchmark_filter=x")):
            with self.subTest(args=args):
                self.one_line_exit_2(*two, *args, expect=expect)

    def test_flag_values(self):
        two = ("--table", data("cuda-13.0.json"), data("cuda-11.8.json"))
        self.one_line_exit_2(*two, "--alpha", "2", expect="--alpha wants a significance level")
        self.one_line_exit_2(*two, "--alpha", "x", expect="argument --alpha: invalid float value")
        self.one_line_exit_2(*two, "--counters", "TFLOPZ", expect="unknown counter(s) TFLOPZ")
        self.one_line_exit_2(*two, "--counters", "TFLOPS,images_per_s",
                             expect="unknown counter(s) images_per_s: not in the compared rows, whose "
                                    "counters are: GBps, pct_peak, recon_error, sm_clock_MHz, TFLOPS")
        self.one_line_exit_2(*two, "--filter", "^nothing", expect="--filter '^nothing' matches no benchmark")
        self.one_line_exit_2(data("cuda-13.0.json"), expect="takes exactly two files, got 1")
        self.one_line_exit_2(data("cuda-13.0.json"), data("cuda-11.8.json"), "-d", DATA,
                             expect="is a directory")

    def test_no_figure_that_is_not_from_the_inputs(self):
        r = tool("compare.py", "--table", data("cuda-13.0.json"), data("cuda-11.8.json"))
        self.assertNotIn("7 of 81", r.stdout)
        # cuda-11.8.json against cuda-13.0.json: 4 rows with times in both files, 1 of them slower.
        self.assertIn("1 of this table's 4 verdicts say faster or slower", r.stdout)


class NumericContext(unittest.TestCase):
    """A context field may be a number ("gpu": 200): every tool takes it as its text."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        with open(data("cuda-11.8.json")) as f:
            doc = json.load(f)
        doc["context"].update(gpu=200, cuda_toolkit=11.8, cublas=11, date=20261202,
                              processes=5, copy_ceiling_GBps=4200)
        self.path = os.path.join(self.dir.name, "numeric-context.json")
        with open(self.path, "w") as f:
            json.dump(doc, f)

    def tearDown(self):
        self.dir.cleanup()

    def test_read_gives_text(self):
        import results
        context = results.read(self.path)["context"]
        self.assertEqual({k: context[k] for k in ("gpu", "cuda_toolkit", "cublas", "date", "processes",
                                                  "copy_ceiling_GBps")},
                         {"gpu": "200", "cuda_toolkit": "11.8", "cublas": "11", "date": "20261202",
                          "processes": "5", "copy_ceiling_GBps": "4200"})

    def test_compare_table_names_the_gpus(self):
        r = tool("compare.py", "--table", data("cuda-13.0.json"), self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("files ran on different GPUs: 200, NVIDIA H200", r.stdout)
        self.assertIn("CUDA 11.8 (cuBLAS 11), 5 processes: time us", r.stdout)

    def test_plot_and_merge(self):
        r = tool("plot.py", "--out-dir", os.path.join(self.dir.name, "plots"), data("cuda-13.0.json"), self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        merged = os.path.join(self.dir.name, "merged.json")
        r = tool("merge_processes.py", merged, self.path, self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(merged) as f:
            self.assertEqual(json.load(f)["context"]["process_dates"], "20261202, 20261202")


class ComparePyFront(unittest.TestCase):
    def setUp(self):
        script = os.environ.get("GBENCH_COMPARE", "/usr/share/benchmark/compare.py")
        if not os.path.exists(script):
            self.skipTest(f"compare.py not at {script}")

    def test_runs_google_benchmarks_compare_with_u_test(self):
        r = tool("compare.py", data("cuda-13.0.json"), data("cuda-11.8.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"Comparing {data('cuda-13.0.json')} to {data('cuda-11.8.json')}", r.stdout)
        self.assertIn("gemm/bf16/8192/8192/8192/manual_time", r.stdout)
        self.assertIn("U Test", r.stdout)

    def test_filter_rename_and_its_own_options_reach_it(self):
        r = tool("compare.py", data("cuda-13.0.json"), data("cuda-11.8.json"), "--filter", "^x/",
                 "--rename", "^gemm/bf16/=x/", "--no-utest", "--no-color")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("x/8192/8192/8192/manual_time", r.stdout)
        self.assertNotIn("gemm/", r.stdout)
        self.assertNotIn("launch/empty", r.stdout)
        self.assertNotIn("U Test", r.stdout)
        self.assertNotIn("\x1b[", r.stdout)


def process_file(directory, name, launch_times):
    """A one-benchmark result file: launch/empty with these per-repetition times (us)."""
    rows = [{"name": "launch/empty/manual_time", "run_name": "launch/empty/manual_time",
             "run_type": "iteration", "repetition_index": i, "real_time": t, "time_unit": "us",
             "sm_clock_MHz": 1980.0 + i} for i, t in enumerate(launch_times)]
    rows.append(dict(rows[0], name="launch/empty/manual_time_median", run_type="aggregate"))
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        json.dump({"context": {"date": name, "cuda_toolkit": "13.0"}, "benchmarks": rows}, f)
    return path


class MergeProcesses(unittest.TestCase):
    def test_one_sample_per_process_at_its_median(self):
        with tempfile.TemporaryDirectory() as d:
            parts = [process_file(d, "p1.json", [5.0, 4.0, 4.2]),
                     process_file(d, "p2.json", [4.6, 4.5, 9.0, 4.4])]
            out = os.path.join(d, "merged.json")
            r = tool("merge_processes.py", out, *parts)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                merged = json.load(f)
        rows = merged["benchmarks"]
        self.assertEqual([row["real_time"] for row in rows], [4.2, 4.5])  # 4.5: the lower median
        self.assertEqual([row["sm_clock_MHz"] for row in rows], [1982.0, 1981.0])  # its own counters
        self.assertEqual([(row["repetition_index"], row["repetitions"]) for row in rows], [(0, 2), (1, 2)])
        self.assertEqual(merged["context"]["processes"], "2")
        self.assertEqual(merged["context"]["process_dates"], "p1.json, p2.json")

    def test_process_spread_is_flagged_in_process_and_not_across_processes(self):
        # Two processes per build, each tight inside and 6% apart: the first process of A against
        # the first of B looks like a change; a process as the unit shows the same build twice.
        with tempfile.TemporaryDirectory() as d:
            a = [process_file(d, "a1.json", [4.00, 4.01, 4.02, 4.01, 4.00]),
                 process_file(d, "a2.json", [4.24, 4.25, 4.26, 4.25, 4.24])]
            b = [process_file(d, "b1.json", [4.25, 4.26, 4.24, 4.25, 4.26]),
                 process_file(d, "b2.json", [4.01, 4.00, 4.02, 4.01, 4.00])]
            for name, parts in (("a.json", a), ("b.json", b)):
                self.assertEqual(tool("merge_processes.py", os.path.join(d, name), *parts).returncode, 0)

            def verdict(x, y):
                r = tool("compare.py", "--table", x, y, "--format", "csv")
                self.assertEqual(r.returncode, 0, r.stderr)
                row = next(csv.DictReader(io.StringIO(r.stdout)))
                return next(v for k, v in row.items() if k.endswith("verdict"))
            self.assertEqual(verdict(a[0], b[0]), "slower")
            r = tool("compare.py", "--table", os.path.join(d, "a.json"), os.path.join(d, "b.json"))
            self.assertIn("CUDA 13.0 (cuBLAS ?), 2 processes [a.json]: time us", r.stdout)
            self.assertNotIn("one process's repetitions", r.stdout)
            r = tool("compare.py", "--table", a[0], os.path.join(d, "b.json"))
            self.assertIn("a1.json: samples are one process's repetitions", r.stdout)
            self.assertEqual(verdict(os.path.join(d, "a.json"), os.path.join(d, "b.json")), "same")

    def test_bad_input_is_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            part, out = process_file(d, "p1.json", [4.0, 4.1]), os.path.join(d, "m.json")
            for args, expect in (((out, part), "merging needs at least two result files"),
                                 ((out,), "the following arguments are required: RUN.json"),
                                 ((out, part, data("cuda-13.0.json")), "p1.json lacks: the processes of one merge"),
                                 ((part, part, part), "is also an input"),
                                 ((out, part, data("bad/not-json.json")), "not-json.json: not JSON"),
                                 ((d, part, part), "is a directory; name a file"),
                                 ((os.path.join(d, "no", "m.json"), part, part), "does not exist")):
                with self.subTest(args=args):
                    r = tool("merge_processes.py", *args)
                    assert_one_line_error(self, r, "^tools/merge-processes: .*" + re.escape(expect))
                    self.assertFalse(os.path.exists(out))


class Plot(unittest.TestCase):
    def test_every_chart_is_written(self):
        with tempfile.TemporaryDirectory() as out:
            r = tool("plot.py", "--out-dir", out, data("cuda-13.0.json"), data("cuda-11.8.json"),
                     data("torch-h200.json"), data("allreduce-2gpu.json"))
            self.assertEqual(r.returncode, 0, r.stderr)
            for chart in ("gemm.png", "sigmoid.png", "allreduce.png", "svd.png", "resnet.png",
                          "resnet-memory.png", "transformer.png"):
                path = os.path.join(out, chart)
                self.assertTrue(os.path.getsize(path) > 10000, chart)
                with open(path, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_nothing_to_plot(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "plots")
            r = tool("plot.py", "--out-dir", out, data("nothing-in-common.json"))
            assert_one_line_error(self, r, "^tools/plot: nothing to plot: no gemm, .* results in the files$")
            self.assertFalse(os.path.exists(out))  # no empty folder left behind

    def test_only_one_gpu_allreduce_is_nothing_to_plot_in_one_line(self):
        with open(data("cuda-13.0.json")) as f:
            doc = json.load(f)
        doc["benchmarks"] = [row for row in doc["benchmarks"] if row["name"].startswith("allreduce/")]
        self.assertTrue(doc["benchmarks"])
        with tempfile.TemporaryDirectory() as d:
            path, out = os.path.join(d, "allreduce-1gpu.json"), os.path.join(d, "plots")
            with open(path, "w") as f:
                json.dump(doc, f)
            r = tool("plot.py", "--out-dir", out, path)
            assert_one_line_error(self, r, r"^tools/plot: nothing to plot: no gemm, .* results in the "
                                           r"files \(allreduce: left out 1 one-GPU benchmark\(s\): .*\)$")
            self.assertFalse(os.path.exists(out))

    def test_one_gpu_allreduce_is_left_out_with_a_line(self):
        with tempfile.TemporaryDirectory() as out:
            r = tool("plot.py", "--out-dir", out, data("cuda-13.0.json"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr.splitlines(), [
                "tools/plot: allreduce: left out 1 one-GPU benchmark(s): without two or more ranks "
                "nothing is communicated, so there is no bus bandwidth to draw; no allreduce.png"])
            self.assertFalse(os.path.exists(os.path.join(out, "allreduce.png")))

    def test_out_dir_that_is_a_file(self):
        r = tool("plot.py", "--out-dir", data("cuda-13.0.json"), data("cuda-13.0.json"))
        assert_one_line_error(self, r, "^tools/plot: --out-dir .*cuda-13.0.json: exists and is not a directory$")


class PlotColoursAndAxes(unittest.TestCase):
    """The figures themselves, caught before they are saved."""

    def figures(self, *paths):
        import plot
        figures = {}
        saved = plot.save

        def keep(plt, fig, axes, n, title, path):
            figures[os.path.basename(path)] = list(axes.flat)[:n]
            return saved(plt, fig, axes, n, title, path)
        plot.save = keep
        try:
            with tempfile.TemporaryDirectory() as out, open(os.devnull, "w") as quiet:
                stderr, sys.stderr = sys.stderr, quiet
                try:
                    self.assertEqual(plot.main(["--out-dir", out, *paths]), 0)
                finally:
                    sys.stderr = stderr
        finally:
            plot.save = saved
        return figures

    def test_a_file_keeps_its_colour_in_every_panel_and_chart(self):
        from matplotlib.colors import to_hex
        figures = self.figures(data("torch-h200.json"), data("cuda-11.8.json"), data("cuda-13.0.json"))
        colour_of, seen = {}, 0
        for chart, axes in figures.items():
            for ax in axes:
                for series in ax.containers:  # a file's line (errorbar) or its bars in a panel
                    if series.get_label().startswith("_"):
                        continue  # the error bars of bars: no colour of their own
                    first = series.lines[0] if hasattr(series, "lines") else series.patches[0]
                    colour = to_hex(first.get_color() if hasattr(series, "lines") else first.get_facecolor())
                    file = series.get_label().rsplit("[", 1)[-1].rstrip("]")
                    self.assertEqual(colour_of.setdefault(file, colour), colour,
                                     f"{file} in {chart}, panel {ax.get_title()}")
                    seen += 1
        self.assertGreater(seen, 10)  # lines and bars of 7 charts
        self.assertEqual(colour_of, {"torch-h200.json": to_hex("C0"), "cuda-11.8.json": to_hex("C1"),
                                     "cuda-13.0.json": to_hex("C2")})  # from the order given

    def test_a_wide_range_gets_a_log_axis(self):
        figures = self.figures(data("allreduce-2gpu.json"))
        self.assertTrue(all(ax.get_yscale() == "log" for ax in figures["allreduce.png"]))
        self.assertTrue(all(ax.get_xscale() == "log" for ax in figures["allreduce.png"]))


class CutMidWrite(unittest.TestCase):
    """truncated.json: cuda-13.0.json's run killed inside its 8th row; 7 complete rows (5 of
    gemm/bf16/8192, 2 of gemm/bf16/4096) load, with one warning."""
    WARNING = "warning: {}: cut mid-write; loaded 7 complete rows"

    def assert_warned_once(self, r, prog, path):
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([line for line in r.stderr.splitlines() if "cut mid-write" in line],
                         [f"{prog}: " + self.WARNING.format(path)])

    def test_compare_table(self):
        r = tool("compare.py", "--table", data("truncated.json"), data("cuda-11.8.json"), "--format", "csv")
        self.assert_warned_once(r, "tools/compare", data("truncated.json"))
        rows = {row["benchmark"]: row for row in csv.DictReader(io.StringIO(r.stdout))}
        self.assertEqual(sorted(rows), ["gemm/bf16/4096/4096/4096/manual_time",
                                        "gemm/bf16/8192/8192/8192/manual_time"])
        self.assertEqual(rows["gemm/bf16/4096/4096/4096/manual_time"]["CUDA 13.0 (cuBLAS 13.1.0): time us"], "200.5")

    def test_compare_py_front(self):
        if not os.path.exists(os.environ.get("GBENCH_COMPARE", "/usr/share/benchmark/compare.py")):
            self.skipTest("no compare.py")
        r = tool("compare.py", data("truncated.json"), data("cuda-11.8.json"))
        self.assert_warned_once(r, "tools/compare", data("truncated.json"))
        self.assertIn("gemm/bf16/4096/4096/4096/manual_time", r.stdout)

    def test_plot(self):
        with tempfile.TemporaryDirectory() as out:
            r = tool("plot.py", "--out-dir", out, data("truncated.json"))
            self.assert_warned_once(r, "tools/plot", data("truncated.json"))
            self.assertEqual(r.stdout.split(), [os.path.join(out, "gemm.png")])

    def test_merge_processes(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "merged.json")
            r = tool("merge_processes.py", out, data("truncated.json"), data("truncated.json"))
            self.assert_warned_once(r, "tools/merge-processes", data("truncated.json"))
            with open(out) as f:
                rows = json.load(f)["benchmarks"]
        self.assertEqual([(row["run_name"], row["real_time"]) for row in rows],
                         [("gemm/bf16/8192/8192/8192/manual_time", 1600)] * 2 +
                         [("gemm/bf16/4096/4096/4096/manual_time", 200)] * 2)  # the lower of 200, 201

    def test_every_cut_point_loads_its_complete_rows_or_says_why_not(self):
        import results
        with open(data("cuda-13.0.json")) as f:
            text = f.read()
        whole = json.loads(text)["benchmarks"]
        list_start = text.index("[", text.index('"benchmarks"'))
        # Where each row of the whole file ends (just past its closing brace): a file cut at
        # offset c holds exactly the rows that end at or before c.
        decoder, ends, at = json.JSONDecoder(), [], list_start + 1
        for row in whole:
            at = re.compile(r"[\s,]*").match(text, at).end()
            decoded, at = decoder.raw_decode(text, at)
            self.assertEqual(decoded, row)
            ends.append(at)
        # Every 7th offset, and each row's last character, its end and the offset after it.
        cuts = sorted(set(range(0, len(text) - 2, 7)) | {e + d for e in ends for d in (-1, 0, 1)})
        cuts = [c for c in cuts if c < len(text.rstrip()) - 1]  # the last "]}" makes it whole
        with tempfile.TemporaryDirectory() as d, open(os.devnull, "w") as quiet:
            path = os.path.join(d, "cut.json")
            stderr, sys.stderr = sys.stderr, quiet
            try:
                for cut in cuts:
                    complete = sum(end <= cut for end in ends)
                    with open(path, "w") as f:
                        f.write(text[:cut])
                    try:
                        rows = results.read(path)["benchmarks"]
                    except results.InputError as e:
                        self.assertEqual(complete, 0, f"cut at {cut}: {e}")  # no complete row yet
                        continue
                    self.assertGreater(cut, list_start)
                    self.assertEqual(len(rows), complete, f"cut at {cut}")
                    self.assertEqual(rows, whole[:complete], f"cut at {cut}")
            finally:
                sys.stderr = stderr

    def test_garbage_in_the_list_is_not_a_cut(self):
        r = tool("compare.py", "--table", data("bad/garbage-in-list.json"), data("cuda-13.0.json"))
        assert_one_line_error(self, r, r"^tools/compare: .*garbage-in-list.json: not JSON \(Expecting value")


class RunMatrix(unittest.TestCase):
    def list_presets(self, cuda118_root):
        env = dict(os.environ)
        env.pop("CUBENCH_CUDA118_ROOT", None)
        if cuda118_root is not None:
            env["CUBENCH_CUDA118_ROOT"] = cuda118_root
        r = subprocess.run([sys.executable, os.path.join(TOOLS, "run_matrix.py"), "--list-presets"],
                           capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        names = [line.split("\t")[0] for line in r.stdout.splitlines()]
        self.assertEqual(names, ["cuda-13.0", "cuda-12.4", "cuda-11.8"])
        listed = {}
        for line in r.stdout.splitlines():
            name, state, nvcc = line.split("\t")
            self.assertTrue(nvcc, line)  # every preset names the nvcc its configure would take
            self.assertEqual(state, "available" if os.path.exists(nvcc) else "missing", line)
            listed[name] = (state, nvcc)
        return listed

    @staticmethod
    def cuda118_default():
        with open(os.path.join(HERE, "..", "CMakePresets.json")) as f:
            presets = {p["name"]: p for p in json.load(f)["configurePresets"]}
        return presets["cuda-11.8"]["cacheVariables"]["CUBENCH_CUDA_ROOT_DEFAULT"]

    def test_lists_presets_and_whether_their_toolkit_is_here(self):
        # CUBENCH_CUDA118_ROOT unset or empty: the preset's default prefix (CUBENCH_CUDA_ROOT_DEFAULT)
        for root in (None, ""):
            with self.subTest(CUBENCH_CUDA118_ROOT=root):
                state, nvcc = self.list_presets(root)["cuda-11.8"]
                self.assertEqual(nvcc, os.path.join(self.cuda118_default(), "bin", "nvcc"))
        # set: the nvcc under it, here once it exists
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(self.list_presets(d)["cuda-11.8"], ("missing", os.path.join(d, "bin", "nvcc")))
            os.mkdir(os.path.join(d, "bin"))
            with open(os.path.join(d, "bin", "nvcc"), "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(os.path.join(d, "bin", "nvcc"), 0o755)
            self.assertEqual(self.list_presets(d)["cuda-11.8"], ("available", os.path.join(d, "bin", "nvcc")))

    def test_unknown_preset_is_one_line(self):
        r = tool("run_matrix.py", "--presets", "cuda-9.0")
        assert_one_line_error(self, r, r"^tools/run-matrix: unknown preset\(s\) cuda-9.0; known: ")

    def test_processes_must_be_a_count(self):
        r = tool("run_matrix.py", "--processes", "0")
        assert_one_line_error(self, r, "^tools/run-matrix: --repetitions and --processes want a count of at least 1$")

    def test_bad_flags_are_one_line(self):
        for args, pattern in ((("--repetitions", "five"), "argument --repetitions: invalid int value"),
                              (("--presets", ","), "--presets names no preset"),
                              (("--no-such-flag",), "unrecognized arguments: --no-such-flag")):
            with self.subTest(args=args):
                assert_one_line_error(self, tool("run_matrix.py", *args), "^tools/run-matrix: " + pattern)


class ExitPath(unittest.TestCase):
    """tools/cli.py's run(): the one way out of every tool."""

    def outcome(self, exception):
        import cli

        def main(argv):
            raise exception
        err = io.StringIO()
        stderr, sys.stderr = sys.stderr, err
        try:
            return cli.run("tools/x", main, []), err.getvalue()
        finally:
            sys.stderr = stderr

    def test_a_bug_is_one_line_named_as_ours_with_status_1(self):
        code, err = self.outcome(ZeroDivisionError("float division by zero"))
        self.assertEqual(code, 1)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertRegex(err, r"^tools/x: internal error \(ZeroDivisionError: float division by zero\); this is a bug")

    def test_bad_input_and_os_errors_are_one_line_with_status_2(self):
        import results
        for exception, line in ((results.InputError("a.json: not JSON\nsecond line"), "tools/x: a.json: not JSON / second line"),
                                (PermissionError(13, "Permission denied", "out.json"), "tools/x: out.json: Permission denied")):
            with self.subTest(exception=exception):
                self.assertEqual(self.outcome(exception), (2, line + "\n"))


class TorchReference(unittest.TestCase):
    def test_names_match_cubench_or_it_says_why_not(self):
        r = tool("torch_reference.py", "--out", os.devnull, "--list", "--filter", "^gemm/bf16/4096/")
        if r.returncode == 2:  # no PyTorch for this python (CI): one clear line, and a skip
            assert_one_line_error(self, r, "^tools/torch_reference.py: PyTorch is not installed")
            self.skipTest("PyTorch is not installed for this python: the names are checked where it is")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["gemm/bf16/4096/4096/4096/manual_time"])

    def test_flags_and_out_are_checked_before_anything_runs(self):
        for args, pattern in ((("--out", HERE), "--out .*: is a directory; name a file"),
                              (("--out", "/no/such/dir/t.json"), "--out .*: its directory /no/such/dir does not exist"),
                              (("--out", "t.json", "--repetitions", "0"), "--repetitions wants a count of at least 1"),
                              (("--out", "t.json", "--filter", "(("), "--filter is not a valid regex"),
                              (("--filter", "x"), "the following arguments are required: --out")):
            with self.subTest(args=args):
                assert_one_line_error(self, tool("torch_reference.py", *args), "^tools/torch_reference.py: " + pattern)


if __name__ == "__main__":
    unittest.main(verbosity=2)
