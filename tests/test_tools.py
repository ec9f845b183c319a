"""ctest: the Python tools on committed sample results (tests/data): the N-way table's numbers and
marks, each of its verdicts (faster, slower, same, too noisy to tell) from constructed pairs of
files, merged from processes (the U test) or of one process (the one-process rule), its cycles
view, CSV, exit codes on bad input, the compact two-file table, times at three significant
digits, files cut mid-write or from an interrupted run, run-matrix's command line (nothing is built), and that every
chart is written with one colour per file. Files with a schema (cubench_schema): a family and a
counter no tool has seen are read, compared, judged, merged and drawn (a generic chart); files
without one give the tables and charts they gave before the schema (tests/data/expected).
Version-3 files (tests/data/v3, a "cubench" object in every row): every tool reads a row's family,
axis values, status and notes from it, so a row whose name or label would read wrongly reports
right, a skip is not timed and not a failure, a malformed object is one line and exit 2, and a
version-2 file converted gives what its original gives; the one reading of older rows
(row_outcome.legacy_outcome) on its own. (Each class of bad input file is also a ctest case of
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
        # these files are one process each (5 repetitions): with a smaller --min-effect the 1% is
        # no longer the same, but one process cannot call a change under 10%
        by_name, _ = self.table("--min-effect", "0.005")
        self.assertEqual(by_name["gemm/bf16/4096/4096/4096/manual_time"][verdict],
                         "too noisy to tell (one process: run more) !")

    def test_errors_show_as_the_cell(self):
        by_name, _ = self.table()
        self.assertIn("wrong result", by_name["svd/gesvd/fp32/1024/manual_time"]["CUDA 11.8 (cuBLAS 11.11.3): time us"])

    def test_a_file_against_itself_is_all_same_and_its_columns_are_told_apart(self):
        r = tool("compare.py", "--table", data("cuda-13.0.json"), data("cuda-13.0.json"), "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        # one path twice: neither GPU, file name nor path tells them apart, so their places do
        self.assertIn("CUDA 13.0 (cuBLAS 13.1.0): time us", rows[0])
        verdict = "CUDA 13.0 (cuBLAS 13.1.0) #2: verdict"
        self.assertTrue(rows)
        self.assertTrue(all(row[verdict] == "same" for row in rows), rows)
        with tempfile.TemporaryDirectory() as d:  # a copy under another name: named by its file
            copy = os.path.join(d, "copy.json")
            with open(data("cuda-13.0.json")) as f, open(copy, "w") as g:
                g.write(f.read())
            r = tool("compare.py", "--table", data("cuda-13.0.json"), copy, "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        header = next(csv.reader(io.StringIO(r.stdout)))
        self.assertIn("CUDA 13.0 (cuBLAS 13.1.0) [cuda-13.0.json]: time us", header)
        self.assertIn("CUDA 13.0 (cuBLAS 13.1.0) [copy.json]: verdict", header)

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

    def test_a_file_of_one_repetition_is_judged_not_refused(self):
        # one-repetition.json: one repetition, no time_ci_pct (an older cubench's): judged by the
        # one-process rule; --no-utest, which speaks for merged files only, changes nothing
        outs = []
        for flags in ((), ("--no-utest",)):
            r = tool("compare.py", "--table", *flags, data("one-repetition.json"), data("cuda-13.0.json"),
                     "--format", "csv")
            self.assertEqual((r.returncode, r.stderr), (0, ""))
            outs.append(r.stdout)
        self.assertEqual(outs[0], outs[1])
        [row] = list(csv.DictReader(io.StringIO(outs[0])))
        self.assertEqual((row["benchmark"], row["CUDA 13.0 (cuBLAS 13.1.0) [cuda-13.0.json]: verdict"]),
                         ("gemm/bf16/8192/8192/8192/manual_time", "same"))

    def test_rename_that_merges_two_benchmarks(self):
        self.one_line_exit_2("--table", data("cuda-13.0.json"), data("cuda-11.8.json"),
                             "--rename-in", "2:/(4096|8192)/.*=/n", expect="renaming maps both")

    def test_rename_in_names_a_file_that_is_not_there(self):
        self.one_line_exit_2("--table", data("cuda-13.0.json"), data("cuda-11.8.json"),
                             "--rename-in", "3:a=b", expect="--rename-in wants N:")

    def test_missing_file(self):
        self.one_line_exit_2("--table", data("no-such.json"), data("cuda-13.0.json"), expect="cannot read")

    def test_the_compact_table_checks_input_too(self):
        self.one_line_exit_2(data("bad/not-json.json"), data("cuda-13.0.json"), expect="not JSON")

    def test_the_compact_table_says_when_files_share_nothing(self):
        self.one_line_exit_2(data("cuda-13.0.json"), data("nothing-in-common.json"),
                             expect="no benchmark of " + data("cuda-13.0.json") + " is in the other files")
        self.one_line_exit_2(data("cuda-13.0.json"), data("cuda-11.8.json"), "--filter", "^svd/gesvdj",
                             expect="--filter '^svd/gesvdj' matches no benchmark of the files")
        # the filter matches rows of the base alone (cuda-11.8.json has no allreduce): it is named
        self.one_line_exit_2(data("cuda-13.0.json"), data("cuda-11.8.json"), "--filter", "^allreduce/",
                             expect="no benchmark of " + data("cuda-13.0.json") + " matching --filter "
                                    "'^allreduce/' is in the other files")

    def test_the_full_tables_options_serve_two_files_too(self):
        two = (data("cuda-13.0.json"), data("cuda-11.8.json"))
        r = tool("compare.py", *two, "--format", "csv")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(next(csv.reader(io.StringIO(r.stdout))),
                         ["benchmark", "CUDA 13.0 (cuBLAS 13.1.0): time us", "CUDA 11.8 (cuBLAS 11.11.3): time us",
                          "change %", "cycles change %", "verdict"])
        r = tool("compare.py", *two, "--min-effect", "0.005")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| gemm/bf16/4096/4096/4096/manual_time | 200 us | 202 us | +1.0 | +16.5 | "
                      "too noisy to tell (one process: run more) ! |", r.stdout)
        r = tool("compare.py", *two, "--counters", "TFLOPS")  # counters: the full table
        self.assertEqual(r.returncode, 0, r.stderr)
        header = r.stdout.splitlines()[0]
        for column in ("CUDA 11.8 (cuBLAS 11.11.3): TFLOPS", "CUDA 11.8 (cuBLAS 11.11.3): p"):
            self.assertIn(f"| {column} |", header)

    def test_options_of_googles_compare_py_are_refused(self):
        two = (data("cuda-13.0.json"), data("cuda-11.8.json"))
        for args in (("-d", "x.json"), ("-a",), ("--no-color",), ("--table", "--no-color"),
                     ("--benchmark_filter=x",)):
            with self.subTest(args=args):
                self.one_line_exit_2(*two, *args, expect="unrecognized arguments: "
                                     + " ".join(a for a in args if a != "--table"))

    def test_flag_values(self):
        two = ("--table", data("cuda-13.0.json"), data("cuda-11.8.json"))
        for alpha in ("2", "0", "1", "-0.05"):
            with self.subTest(alpha=alpha):
                self.one_line_exit_2(*two, "--alpha", alpha, expect="--alpha wants a significance level "
                                     f"between 0 and 1, got {float(alpha)}")
        self.one_line_exit_2(*two, "--alpha", "x", expect="argument --alpha: invalid float value")
        for effect in ("1", "1.5", "-0.1"):  # no row can be 100% faster
            with self.subTest(min_effect=effect):
                self.one_line_exit_2(*two, "--min-effect", effect, expect="--min-effect wants a relative "
                                     f"change from 0 up to (not including) 1 (0.02 is 2%), got {float(effect)}")
                self.one_line_exit_2(*two[1:], "--min-effect", effect, expect="--min-effect wants")  # compact too
        self.one_line_exit_2(*two, "--counters", "TFLOPZ", expect="unknown counter(s) TFLOPZ")
        self.one_line_exit_2(*two, "--counters", "TFLOPS,images_per_s",
                             expect="unknown counter(s) images_per_s: not in the compared rows, whose "
                                    "counters are: GBps, pct_peak, recon_error, sm_clock_MHz, TFLOPS")
        self.one_line_exit_2(*two, "--filter", "^nothing", expect="--filter '^nothing' matches no benchmark")
        self.one_line_exit_2(data("cuda-13.0.json"), expect="compare needs at least two files: the base and "
                                                            "one to judge against it")
        self.one_line_exit_2("--table", data("cuda-13.0.json"), expect="compare needs at least two files")

    def test_no_figure_that_is_not_from_the_inputs(self):
        for table in ((), ("--table",)):
            with self.subTest(table=table):
                r = tool("compare.py", *table, data("cuda-13.0.json"), data("cuda-11.8.json"))
                self.assertNotIn("7 of 81", r.stdout)
                # cuda-11.8.json against cuda-13.0.json: 4 rows with times in both files, 1 of them
                # slower (+10%, intervals apart), the rest unchanged
                self.assertIn("\nCUDA 11.8 (cuBLAS 11.11.3) against CUDA 13.0 (cuBLAS 13.1.0): faster in 0 of 4 "
                              "rows, slower in 1 (gemm/bf16/8192/8192/8192: 1.1x), the same in 3, too noisy to "
                              "tell in 0\n", r.stdout)


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
        from cubench_tools import results
        context = results.read(self.path)["context"]
        self.assertEqual({k: context[k] for k in ("gpu", "cuda_toolkit", "cublas", "date", "processes",
                                                  "copy_ceiling_GBps")},
                         {"gpu": "200", "cuda_toolkit": "11.8", "cublas": "11", "date": "20261202",
                          "processes": "5", "copy_ceiling_GBps": "4200"})

    def test_compare_table_names_the_gpus(self):
        r = tool("compare.py", "--table", data("cuda-13.0.json"), self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("files ran on different GPUs: 200, NVIDIA H200", r.stdout)
        self.assertIn("| CUDA 11.8 (cuBLAS 11), 5 processes: time |", r.stdout)

    def test_plot_and_merge(self):
        r = tool("plot.py", "--out-dir", os.path.join(self.dir.name, "plots"), data("cuda-13.0.json"), self.path)
        self.assertEqual(r.returncode, 0, r.stderr)
        merged = os.path.join(self.dir.name, "merged.json")
        with open(self.path) as f:
            doc = json.load(f)
        doc["context"]["date"] = 20261203  # another process (merge refuses a file twice)
        other = os.path.join(self.dir.name, "numeric-context-2.json")
        with open(other, "w") as f:
            json.dump(doc, f)
        r = tool("merge_processes.py", merged, self.path, other)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(merged) as f:
            self.assertEqual(json.load(f)["context"]["process_dates"], "20261202, 20261203")


class TorchLabels(unittest.TestCase):
    """A LibTorch build's file (its context says "libtorch") is labelled by its PyTorch: the
    version, its CUDA, its cuDNN and the cuBLAS it loaded; a toolkit build's as before."""

    def write(self, name, **context):
        with open(data("one-process-a.json")) as f:  # a LibTorch build's: libtorch 2.11.0
            doc = json.load(f)
        doc["context"].update(context)
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_the_table_names_each_pytorch(self):
        # two PyTorch installs built with one toolkit (cuda-12.4): as tools/run-matrix --torch
        # records them; cuDNN 9.1.0 and 9.5.1 as cudnnGetVersion encodes them
        a = self.write("a.json", libtorch="2.5.1", libtorch_cudnn="90100", cublas="12.4.5", cuda_toolkit="12.4",
                       torch_version="2.5.1+cu124", torch_cuda="12.4")
        b = self.write("b.json", libtorch="2.6.0", libtorch_cudnn="90501", cublas="12.6.4", cuda_toolkit="12.4",
                       torch_version="2.6.0+cu126", torch_cuda="12.6")
        r = tool("compare.py", "--table", a, b)
        self.assertEqual(r.returncode, 0, r.stderr)
        header = r.stdout.splitlines()[0]
        self.assertIn("| LibTorch 2.5.1+cu124 (CUDA 12.4, cuDNN 9.1.0, cuBLAS 12.4.5): time |", header)
        self.assertIn("| LibTorch 2.6.0+cu126 (CUDA 12.6, cuDNN 9.5.1, cuBLAS 12.6.4): verdict |", header)
        self.assertNotIn("CUDA 12.4 (cuBLAS", r.stdout)

    def test_what_each_context_gives(self):
        from cubench_tools.build_context import label_of
        with open(data("one-process-a.json")) as f:
            context = json.load(f)["context"]
        bundled = json.dumps({"libcublas-3b81d170.so.12": "/opt/libtorch/lib/libcublas-3b81d170.so.12",
                              "libcublas.so.12": "/usr/local/cuda-12.4/lib64/libcublas.so.12.4.5.8"})
        for extra, label in (
                ({}, "LibTorch 2.11.0 (CUDA 13.0, cuDNN 9.19.0, cuBLAS 13.1.0)"),  # cubench's own fields
                ({"libtorch_cudnn": "8902", "torch_version": "2.1.2+cu121"},  # CUDA from +cu121
                 "LibTorch 2.1.2+cu121 (CUDA 12.1, cuDNN 8.9.2, cuBLAS 13.1.0)"),
                ({"libtorch_cudnn": "0", "loaded_libraries": bundled},  # LibTorch's own cuBLAS ran
                 "LibTorch 2.11.0 (CUDA 13.0, cuBLAS 12 (bundled))"),
                ({"libtorch": "1.13.1", "libtorch_cuda": "no (CPU-only LibTorch)"}, "LibTorch 1.13.1 (CPU only)"),
                ({"processes": "4"}, "LibTorch 2.11.0 (CUDA 13.0, cuDNN 9.19.0, cuBLAS 13.1.0), 4 processes")):
            with self.subTest(extra=extra):
                self.assertEqual(label_of("x.json", dict(context, **extra)), label)
        toolkit = {k: v for k, v in context.items() if not k.startswith("libtorch")}
        self.assertEqual(label_of("x.json", toolkit), "CUDA 13.0 (cuBLAS 13.1.0)")  # no LibTorch: as before

    def test_a_run_without_a_gpu_is_said_to_have_run_on_the_cpu(self):
        from cubench_tools.build_context import ran_on
        none = "none (no NVIDIA driver on this machine)"
        self.assertEqual(ran_on({"gpu": none}), "the CPU (no GPU)")
        self.assertEqual(ran_on({"gpu": none}, why=True), "the CPU (no GPU: no NVIDIA driver on this machine)")
        self.assertEqual(ran_on({"gpu": "none", "cpu_model": "AMD EPYC 9654"}), "the CPU, AMD EPYC 9654 (no GPU)")
        self.assertEqual(ran_on({"gpu": "NVIDIA H200", "cpu_model": "AMD EPYC 9654"}), "NVIDIA H200")
        a = self.write("a.json", gpu=none)
        r = tool("compare.py", "--table", a, data("one-process-b.json"))
        self.assertIn("files ran on different GPUs: NVIDIA H100 80GB HBM3, the CPU (no GPU)", r.stdout)


class CompactTable(unittest.TestCase):
    """Two files without --table: compare's own compact table (Google Benchmark's compare.py is
    not run): the two times, the changes and the verdict, then the notes."""

    def test_two_files_give_the_compact_table_and_its_notes(self):
        r = tool("compare.py", data("cuda-13.0.json"), data("cuda-11.8.json"))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        lines = r.stdout.splitlines()
        self.assertEqual(lines[:7], [
            "| benchmark | CUDA 13.0 (cuBLAS 13.1.0) | CUDA 11.8 (cuBLAS 11.11.3) | change % | cycles change % | verdict |",
            "|---|---|---|---|---|---|",
            "| gemm/bf16/8192/8192/8192/manual_time | 1.6 ms | 1.76 ms | +10.0 | +10.0 | slower |",
            "| gemm/bf16/4096/4096/4096/manual_time | 200 us | 202 us | +1.0 | +16.5 | same ! |",
            "| sigmoid/vectorized/fp32/10000000/cold/manual_time | 25 us | 25 us | +0.0 |  | same |",
            "| svd/gesvd/fp32/1024/manual_time | 110 ms | wrong result, not timed |  |  |  |",
            "| launch/empty/manual_time | 3.42 us | 3.42 us | +0.0 |  | same |"])
        notes = [line for line in lines[7:] if line]
        self.assertEqual(notes, [
            "CUDA 11.8 (cuBLAS 11.11.3) against CUDA 13.0 (cuBLAS 13.1.0): faster in 0 of 4 rows, slower in 1 "
            "(gemm/bf16/8192/8192/8192: 1.1x), the same in 3, too noisy to tell in 0",
            "faster / slower: one process a side: a change of at least 10% either way and 2x either row's sample "
            "spread, the 95% intervals apart; 15% more per side whose row is host-paced or chosen per process "
            "(docs/methodology.md, Reading a comparison)",
            "not in CUDA 11.8 (cuBLAS 11.11.3) (1 row, no verdict): allreduce/fp32/1073741824/outofplace/manual_time",
            "not timed, no verdict (1; the message is in the time cell): svd/gesvd/fp32/1024/manual_time in "
            "CUDA 11.8 (cuBLAS 11.11.3)",
            "! after a verdict: the two files' median SM clocks differ by more than 5% in that row"])
        self.assertNotIn("U Test", r.stdout)
        self.assertNotIn("OVERALL_GEOMEAN", r.stdout)

    def test_filter_rename_and_no_utest_reach_it(self):
        r = tool("compare.py", data("cuda-13.0.json"), data("cuda-11.8.json"), "--filter", "^x/",
                 "--rename", "^gemm/bf16/=x/", "--no-utest")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| x/8192/8192/8192/manual_time | 1.6 ms | 1.76 ms | +10.0 | +10.0 | slower |", r.stdout)
        self.assertNotIn("gemm/", r.stdout)
        self.assertNotIn("launch/empty", r.stdout)
        self.assertNotIn("\x1b[", r.stdout)


class TimeUnits(unittest.TestCase):
    """A time as the tables write it (rows.time_text): the unit that keeps it between 1 and 1000,
    at three significant digits."""

    def test_the_unit_that_keeps_three_significant_digits(self):
        from cubench_tools import rows
        for us, text in ((550.0, "550 us"), (100.0, "100 us"), (99.9, "99.9 us"), (4.66, "4.66 us"),
                         (0.05, "50 ns"), (1600.0, "1.6 ms"), (250e3, "250 ms"), (99.9e3, "99.9 ms"),
                         (2.5e8, "250 s"), (1e5, "100 ms"), (6.5749, "6.57 us"), (1234.5, "1.23 ms")):
            with self.subTest(us=us):
                self.assertEqual(rows.time_text(us), text)
        self.assertEqual(rows.time_text(float("nan")), "")  # no time: an empty cell
        self.assertEqual(rows.time_text(None), "")

    def test_a_time_that_rounds_up_to_the_next_unit_takes_it(self):
        from cubench_tools import rows
        for us, text in ((999.95, "1 ms"), (999.4, "999 us"), (0.9996, "1 us"), (999999.7, "1 s")):
            with self.subTest(us=us):
                self.assertEqual(rows.time_text(us), text)  # never "1e+03 us"


class CompactOutput(unittest.TestCase):
    """What the compact two-file table says: each time at three significant digits in its unit,
    a row not timed kept with its message in the time cell and named under the table (no
    verdict), each row judged by the one rule, its caveat said once."""

    def compare(self, *files):
        r = tool("compare.py", *files)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        return r.stdout.splitlines()

    def row(self, lines, name):
        """The cells after the name of the one table line of row `name`."""
        found = [line[2:-2].split(" | ") for line in lines if line.startswith(f"| {name} |")]
        self.assertEqual(len(found), 1, lines)
        return found[0][1:]

    def test_two_default_run_processes_get_units_and_verdicts(self):
        # rows of docs/results/h100/default-run/cuda-13.0.json and memory-limit-24GiB.json: one
        # process each, one repetition a row
        lines = self.compare(data("one-process-a.json"), data("one-process-b.json"))
        # a LibTorch build: labelled by its PyTorch (LibTorch 2.11.0 of CUDA 13.0 with cuDNN 91900)
        a, b = (f"LibTorch 2.11.0 (CUDA 13.0, cuDNN 9.19.0, cuBLAS 13.1.0) [one-process-{x}.json]" for x in "ab")
        self.assertEqual(lines[0], f"| benchmark | {a} | {b} | change % | cycles change % | verdict |")
        # 4.66 us and 7.08 us, +52%, in two processes of one build: an 8 B all-reduce is paced by
        # the host (not queued ahead of the GPU, its noise never settled), which one process's
        # spread (11%, 6%) does not show: 2 x 11% + 15% a side is ln 1.66 in log ratio
        self.assertEqual(self.row(lines, "allreduce/bf16/8/outofplace/manual_time"),
                         ["4.66 us", "7.08 us", "+52.0", "+52.0", "too noisy to tell (one process, host-paced "
                          "(runs not queued ahead of the GPU, noise never settled): run more)"])
        self.assertEqual(self.row(lines, "sigmoid/vectorized/fp32/268435456/hot/manual_time"),
                         ["706 us", "706 us", "+0.0", "+0.1", "same"])
        # -7.7%: under what one process can call, the more so for a row autotuned in its process
        self.assertEqual(self.row(lines, "gemm_autotune/fp8/1024/1024/1024/manual_time"),
                         ["6.18 us", "5.7 us", "-7.7", "-7.5", "too noisy to tell (one process, chosen per "
                          "process (autotuned): run more)"])
        # 441 ms and 345 ms, -22%, but the second process took one sample
        self.assertEqual(self.row(lines, "startup/nccl/comm_init/default/manual_time"),
                         ["441 ms", "345 ms", "-21.8", "", "too noisy to tell (one sample: run more)"])
        svd = [line for line in lines if line.startswith("| svd/gesvdp/fp32/2048/manual_time |")]
        self.assertEqual(len(svd), 1)
        # not as a time: the message, without the row's name, cut to its first clause (whole below)
        self.assertIn("| inaccurate here, reported, not timed ... |", svd[0])
        self.assertTrue(svd[0].endswith("|  |  |  |"), svd[0])  # no change, no verdict
        self.assertIn("not timed, no verdict (2; the message is in the time cell, whole below where cut): "
                      f"svd/gesvdp/fp32/2048/manual_time in {a}, svd/gesvdp/fp32/2048/manual_time in {b}",
                      lines)
        self.assertIn(f"{b} against {a}: faster in 0 of 6 rows, slower in none, the same in 1, too noisy "
                      "to tell in 5", lines)
        self.assertEqual(len([line for line in lines if line.startswith("one process: run more: ")]), 1)

    def test_a_time_under_a_millisecond_in_ms_keeps_three_digits(self):
        with tempfile.TemporaryDirectory() as d:
            rows = [dict(toy_row("sigmoid/vectorized/bf16/10000000/hot/manual_time", 0, 0.5512, samples=500.0,
                                 sample_cv=0.01, time_ci_pct=0.2), time_unit="ms", repetitions=1)]
            paths = []
            for name, scale in (("a.json", 1.0), ("b.json", 1.2)):
                paths.append(os.path.join(d, name))
                with open(paths[-1], "w") as f:
                    json.dump({"context": {}, "benchmarks": [dict(r, real_time=r["real_time"] * scale)
                                                              for r in rows]}, f)
            cells = self.row(self.compare(*paths), "sigmoid/vectorized/bf16/10000000/hot/manual_time")
        self.assertEqual(cells[:2] + cells[-1:], ["551 us", "661 us", "slower"])

    def test_repetitions_of_one_process_are_not_processes(self):
        # cuda-13.0.json and cuda-11.8.json: five repetitions a row in one process each: no U test
        lines = self.compare(data("cuda-13.0.json"), data("cuda-11.8.json"))
        self.assertIn("faster / slower: one process a side: a change of at least 10% either way and 2x either row's "
                      "sample spread, the 95% intervals apart; 15% more per side whose row is host-paced or "
                      "chosen per process (docs/methodology.md, Reading a comparison)", lines)
        self.assertFalse([line for line in lines if "U test" in line])
        r = tool("compare.py", "--table", "--format", "csv", data("cuda-13.0.json"), data("cuda-11.8.json"))
        ps = [row["CUDA 11.8 (cuBLAS 11.11.3): p"] for row in csv.DictReader(io.StringIO(r.stdout))]
        self.assertEqual(set(ps), {""})  # no p where no U test ran

    def test_an_older_file_of_one_repetition_is_judged_by_its_spread(self):
        # older-cubench.json: one repetition a row, sample_cv but no time_ci_pct (before 9cd2164)
        lines = self.compare(data("older-cubench.json"), data("older-cubench.json"))
        # a LibTorch build of before its cuDNN was recorded: labelled by its PyTorch, without cuDNN
        stack = "LibTorch 2.11.0 (CUDA 13.0, cuBLAS 13.1.0)"
        self.assertEqual(lines[0], f"| benchmark | {stack} | {stack} #2 | change % | cycles change % | verdict |")
        self.assertIn(f"{stack} #2 against {stack}: faster in 0 of 4 rows, "
                      "slower in none, the same in 4, too noisy to tell in 0", lines)
        out = []
        with tempfile.TemporaryDirectory() as d:
            for scale in (1.3, 1.05):
                with open(data("older-cubench.json")) as f:
                    doc = json.load(f)
                for row in doc["benchmarks"]:
                    row["real_time"] *= scale
                path = os.path.join(d, f"older-x{scale}.json")
                with open(path, "w") as f:
                    json.dump(doc, f)
                out.append(self.compare(data("older-cubench.json"), path))
        # 30% slower: beyond 10% and twice the row's sample_cv (0.24%), with no interval to check
        self.assertEqual(self.row(out[0], "gemm/fp32/1024/1024/1024/manual_time")[2::2], ["+30.0", "slower"])
        # 5% slower: under what one process can call
        self.assertEqual(self.row(out[1], "gemm/fp32/1024/1024/1024/manual_time")[2::2],
                         ["+5.0", "too noisy to tell (one process: run more)"])


ESC = "\x1b["  # how every ANSI colour code starts


def environment(**changes):
    """This environment with changes made; a value None removes the variable."""
    env = dict(os.environ)
    for name, value in changes.items():
        env.pop(name, None)
        if value is not None:
            env[name] = value
    return env


def on_a_terminal(args, env):
    """Runs args with stdout on a pseudo-terminal, as a person at a shell runs them; returns (exit
    status, what the terminal got). The output is read while the command runs: a terminal holds
    only a few KiB, and a writer to a full one waits."""
    import pty
    reader, writer = pty.openpty()
    with subprocess.Popen(args, stdout=writer, stderr=subprocess.PIPE, env=env) as proc:
        os.close(writer)  # the child holds its own copy; ours would keep the reader from its end
        got = b""
        while True:
            try:
                chunk = os.read(reader, 65536)
            except OSError:  # EIO: every writer has gone (Linux's end of a pseudo-terminal)
                break
            if not chunk:
                break
            got += chunk
        proc.stderr.read()
    os.close(reader)
    return proc.returncode, got.decode("utf-8", "replace")


class ColourOnlyOnATerminal(unittest.TestCase):
    """No tool colours a file or a pipe, and none colours a terminal either (tools/compare prints
    its own table; Google Benchmark's compare.py, which coloured its stdout, is no longer run);
    cli.colour_wanted is the rule a tool that colours must follow: a terminal only, and not while
    NO_COLOR is set to a non-empty value (https://no-color.org)."""

    def test_no_colour_codes_in_a_pipe(self):
        with tempfile.TemporaryDirectory() as d:
            timed = os.path.join(d, "timed.json")
            with open(timed, "w") as f:
                json.dump({"context": {}, "benchmarks": [toy_row("gemm/bf16/256/256/256/manual_time", 0, 10.0,
                    setup_s=1.0, first_call_ms=5.0, validate_s=0.5, warmup_s=0.1, sampling_s=2.0)]}, f)
            runs = [("compare.py", "--table", data("cuda-13.0.json"), data("cuda-11.8.json")),
                    ("compare.py", "--table", "--format", "csv", data("cuda-13.0.json"), data("cuda-11.8.json")),
                    ("compare.py", data("cuda-13.0.json"), data("cuda-11.8.json")),
                    ("plot.py", "--out-dir", os.path.join(d, "plots"), data("cuda-13.0.json")),
                    ("merge_processes.py", os.path.join(d, "m.json"), data("one-process-a.json"), data("one-process-b.json")),
                    ("where_the_time_went.py", timed),
                    ("run_matrix.py", "--list-presets")]
            for args in runs:
                with self.subTest(args=args):
                    r = tool(*args)  # stdout and stderr to pipes
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertNotIn(ESC, r.stdout)
                    self.assertNotIn(ESC, r.stderr)

    def test_the_compact_table_is_plain_on_a_terminal_too(self):
        for no_color in (None, "", "1"):
            with self.subTest(NO_COLOR=no_color):
                code, out = on_a_terminal([sys.executable, os.path.join(TOOLS, "compare.py"),
                                           data("cuda-13.0.json"), data("cuda-11.8.json")],
                                          environment(NO_COLOR=no_color))
                self.assertEqual(code, 0, out)
                self.assertIn("| gemm/bf16/8192/8192/8192/manual_time | 1.6 ms | 1.76 ms |", out)
                self.assertNotIn(ESC, out)

    def test_colour_wanted(self):
        from cubench_tools import cli

        class Terminal(io.StringIO):
            def isatty(self):
                return True
        saved = os.environ.get("NO_COLOR")
        try:
            os.environ.pop("NO_COLOR", None)
            self.assertTrue(cli.colour_wanted(Terminal()))
            self.assertFalse(cli.colour_wanted(io.StringIO()))  # a file or a pipe
            os.environ["NO_COLOR"] = ""
            self.assertTrue(cli.colour_wanted(Terminal()))
            os.environ["NO_COLOR"] = "1"
            self.assertFalse(cli.colour_wanted(Terminal()))
        finally:
            os.environ.pop("NO_COLOR", None)
            if saved is not None:
                os.environ["NO_COLOR"] = saved


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
        # the first of B looks like a change to their own samples, but one process a side is not
        # called under 10%; a process as the unit shows the same build twice.
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
            self.assertEqual(verdict(a[0], b[0]), "too noisy to tell (one process: run more)")
            r = tool("compare.py", "--table", os.path.join(d, "a.json"), os.path.join(d, "b.json"))
            self.assertIn("| CUDA 13.0 (cuBLAS ?), 2 processes [a.json]: time |", r.stdout)
            self.assertIn("faster / slower: processes as samples: U test p < 0.05", r.stdout)
            self.assertNotIn("one process", r.stdout)
            r = tool("compare.py", "--table", a[0], os.path.join(d, "b.json"))
            self.assertIn("\none process: run more: a side is one process, whose samples cannot see how far "
                          "another process of the same build lands", r.stdout)
            # Two processes a side cannot be told apart at all (their spread is 2.9%, and the U
            # test's smallest p is 0.33): not flagged, and not called the same either.
            self.assertEqual(verdict(os.path.join(d, "a.json"), os.path.join(d, "b.json")),
                             "too noisy to tell (spread 2.9% over 2%)")

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


def samples_file(directory, name, rows):
    """A file as tools/merge-processes writes it: one sample per process. rows: {benchmark:
    (times in us, SM clocks in MHz per sample, or None for rows without a clock)}."""
    out = []
    for bench, (times, clocks) in rows.items():
        for i, t in enumerate(times):
            row = {"name": bench, "run_name": bench, "run_type": "iteration", "repetitions": len(times),
                   "repetition_index": i, "iterations": 1, "real_time": t, "time_unit": "us",
                   "samples": 40, "sample_cv": 0.003}
            if clocks is not None:
                row["sm_clock_MHz"] = clocks[i]
            out.append(row)
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        json.dump({"context": {"cuda_toolkit": "13.0", "cublas": "13.1.0", "gpu": "NVIDIA H200",
                               "processes": str(max(len(t) for t, _ in rows.values()))},
                   "benchmarks": out}, f)
    return path


TIGHT = [100.0, 100.3, 99.8, 100.1, 99.9]  # five processes within 0.5%
CLOCK = [1500.0] * 5


class PairOfFiles(unittest.TestCase):
    """A base file and another, made by samples_file(), compared with --table."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def table(self, base_rows, other_rows, *extra):
        a = samples_file(self.dir.name, "a.json", base_rows)
        b = samples_file(self.dir.name, "b.json", other_rows)
        r = tool("compare.py", "--table", a, b, "--format", "csv", *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {row["benchmark"]: {k.split(": ", 1)[-1] if k != "benchmark" else k: v
                                   for k, v in row.items()}
                for row in csv.DictReader(io.StringIO(r.stdout))}
        md = tool("compare.py", "--table", a, b, *extra).stdout
        return rows, md

    def word(self, base, other, *extra, base_clocks=CLOCK, other_clocks=CLOCK):
        rows, _ = self.table({"k/manual_time": (base, base_clocks)},
                             {"k/manual_time": (other, other_clocks)}, *extra)
        return rows["k/manual_time"]["verdict"]


class Verdicts(PairOfFiles):
    """Each verdict word from a constructed pair of files, processes as the unit."""

    def test_tight_and_five_percent_slower_is_slower(self):
        self.assertEqual(self.word(TIGHT, [t * 1.05 for t in TIGHT]), "slower")

    def test_tight_and_five_percent_faster_is_faster(self):
        self.assertEqual(self.word(TIGHT, [t * 0.95 for t in TIGHT]), "faster")

    def test_tight_and_no_change_is_same(self):
        self.assertEqual(self.word(TIGHT, list(reversed(TIGHT))), "same")

    def test_a_spread_of_ten_percent_is_too_noisy_to_tell(self):
        noisy = [90.0, 95.0, 100.0, 105.0, 110.0]  # IQR / median: 10%
        self.assertEqual(self.word(noisy, [100.0, 110.0, 90.0, 95.0, 105.0]), "too noisy to tell (spread 10% over 2%)")
        self.assertEqual(self.word(TIGHT, noisy), "too noisy to tell (spread 10% over 2%)")  # either side's spread
        # a change the test still flags in that noise is a verdict: the noise rule only speaks
        # for rows the test did not flag
        self.assertEqual(self.word(noisy, [t * 1.5 for t in noisy]), "slower")

    def test_three_against_three_is_too_noisy_to_tell(self):
        # 3 vs 3: the smallest two-sided p is 0.1, so even a clean 5% shift cannot be flagged
        self.assertEqual(self.word(TIGHT[:3], [t * 1.05 for t in TIGHT[:3]],
                                   base_clocks=CLOCK[:3], other_clocks=CLOCK[:3]),
                         "too noisy to tell (3 vs 3 cannot reach p < 0.05)")
        # ...unless --alpha allows it
        self.assertEqual(self.word(TIGHT[:3], [t * 1.05 for t in TIGHT[:3]], "--alpha", "0.2",
                                   base_clocks=CLOCK[:3], other_clocks=CLOCK[:3]), "slower")

    def test_the_noise_rule_follows_min_effect(self):
        noisy = [90.0, 95.0, 100.0, 105.0, 110.0]
        self.assertEqual(self.word(noisy, list(reversed(noisy)), "--min-effect", "0.15"), "same")

    def test_without_the_u_test_the_spread_rule_still_holds(self):
        noisy = [90.0, 95.0, 100.0, 105.0, 110.0]
        self.assertEqual(self.word(noisy, [t * 1.03 for t in noisy], "--no-utest"),
                         "too noisy to tell (spread 10% over 2%)")
        self.assertEqual(self.word(noisy, [t * 1.3 for t in noisy], "--no-utest"), "slower")
        self.assertEqual(self.word(TIGHT, [t * 1.05 for t in TIGHT], "--no-utest"), "slower")
        self.assertEqual(self.word(TIGHT, TIGHT, "--no-utest"), "same")

    def test_smallest_p_and_spread(self):
        from cubench_tools import verdicts
        self.assertAlmostEqual(verdicts.smallest_p(3, 3), 0.1)
        self.assertAlmostEqual(verdicts.smallest_p(5, 5), 2 / 252)
        self.assertAlmostEqual(verdicts.spread([90.0, 95.0, 100.0, 105.0, 110.0]), 0.10)
        self.assertAlmostEqual(verdicts.spread([100.0, 100.0, 100.0, 100.0, 300.0]), 0.0)  # one outlier
        self.assertEqual(verdicts.spread([100.0]), 0.0)

    def test_summary_counts_each_kind(self):
        noisy = [90.0, 95.0, 100.0, 105.0, 110.0]
        _, md = self.table({"s/manual_time": (TIGHT, CLOCK), "n/manual_time": (noisy, CLOCK),
                            "e/manual_time": (TIGHT, CLOCK)},
                           {"s/manual_time": ([t * 1.05 for t in TIGHT], CLOCK),
                            "n/manual_time": (noisy, CLOCK), "e/manual_time": (TIGHT, CLOCK)})
        notes = [line for line in md.splitlines()[5:] if line]
        self.assertEqual(notes, [
            "CUDA 13.0 (cuBLAS 13.1.0), 5 processes [b.json] against CUDA 13.0 (cuBLAS 13.1.0), 5 processes "
            "[a.json]: faster in 0 of 3 rows, slower in 1 (s: 1.05x), the same in 1, too noisy to tell in 1",
            "faster / slower: processes as samples: U test p < 0.05 and a median change of at least 2% "
            "(docs/methodology.md, Reading a comparison)"])  # merged files: no one-process caveat


def one_process_file(directory, name, rows):
    """A file of one process, one repetition per row: rows is {name: (time us, time_ci_pct,
    samples[, sample_cv])}, sample_cv 0.5% where not given; time_ci_pct or sample_cv None leaves
    it out (an older cubench's row)."""
    out = []
    for row_name, row in rows.items():
        time_us, ci, samples = row[:3]
        cv = row[3] if len(row) > 3 else 0.005
        counters = {"samples": float(samples), "sm_clock_MHz": 1980.0}
        if ci is not None:
            counters["time_ci_pct"] = ci
        if cv is not None:
            counters["sample_cv"] = cv
        out.append(dict(toy_row(row_name, 0, time_us, **counters), repetitions=1))
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        json.dump({"context": {"cuda_toolkit": "13.0", "cublas": "13.1.0", "gpu": "NVIDIA H100"},
                   "benchmarks": out}, f)
    return path


ONE_PROCESS_RUN_MORE = "too noisy to tell (one process: run more)"


class OneRepetition(unittest.TestCase):
    """--table on two files of one process and one repetition per row (cubench's default run):
    no U test; a row is called faster or slower only where its change is at least 10%, at least
    twice either row's own sample spread (sample_cv) and at least --min-effect, with the rows' 95%
    intervals (time_ci_pct) apart; a change under --min-effect is the same; anything else is too
    noisy to tell, with why. One line under the table says what one process cannot see."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def table(self, base, other, *extra):
        """{row: {column: cell}} of the CSV table, and the Markdown table's text."""
        a = one_process_file(self.dir.name, "a.json", base)
        b = one_process_file(self.dir.name, "b.json", other)
        r = tool("compare.py", "--table", a, b, "--format", "csv", *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {row["benchmark"]: {k.split(": ", 1)[-1]: v for k, v in row.items()}
                for row in csv.DictReader(io.StringIO(r.stdout))}
        md = tool("compare.py", "--table", a, b, *extra)
        self.assertEqual(md.returncode, 0, md.stderr)
        return rows, md.stdout

    def word(self, base, other, *extra):
        rows, _ = self.table({"k/manual_time": base}, {"k/manual_time": other}, *extra)
        self.assertEqual(rows["k/manual_time"]["p"], "")  # no U test ran
        return rows["k/manual_time"]["verdict"]

    def test_a_change_of_ten_percent_or_more_with_intervals_apart_is_faster_or_slower(self):
        self.assertEqual(self.word((100.0, 0.5, 500), (115.0, 0.5, 500)), "slower")
        self.assertEqual(self.word((100.0, 0.5, 500), (85.0, 0.5, 500)), "faster")
        # the intervals just apart: 100 +- 5 and 111 +- 5.55
        self.assertEqual(self.word((100.0, 5.0, 500), (111.0, 5.0, 500)), "slower")

    def test_a_change_inside_the_intervals_is_too_noisy_to_tell(self):
        # 100 +- 5.5 and 111 +- 6.1 overlap
        self.assertEqual(self.word((100.0, 5.5, 500), (111.0, 5.5, 500)), ONE_PROCESS_RUN_MORE)
        # either side's interval: a tight base, a wide other
        self.assertEqual(self.word((100.0, 0.1, 500), (115.0, 14.0, 500)), ONE_PROCESS_RUN_MORE)

    def test_a_change_under_ten_percent_is_not_called_however_tight(self):
        # 5% with intervals far apart: a verdict before the one rule; one-process A/A pairs move
        # by more than that
        self.assertEqual(self.word((100.0, 0.1, 500), (105.0, 0.1, 500)), ONE_PROCESS_RUN_MORE)
        self.assertEqual(self.word((100.0, 0.1, 500), (91.0, 0.1, 500)), ONE_PROCESS_RUN_MORE)

    def test_a_change_under_twice_a_rows_sample_spread_is_not_called(self):
        # sample_cv 7% on the base: 13% is under 2 x 7%; at 6% it is over 2 x 6%
        self.assertEqual(self.word((100.0, 0.1, 500, 0.07), (113.0, 0.1, 500)), ONE_PROCESS_RUN_MORE)
        self.assertEqual(self.word((100.0, 0.1, 500), (113.0, 0.1, 500, 0.07)), ONE_PROCESS_RUN_MORE)
        self.assertEqual(self.word((100.0, 0.1, 500, 0.06), (113.0, 0.1, 500)), "slower")

    def test_one_sample_or_no_known_spread_is_too_noisy_to_tell(self):
        # one sample has no interval (cubench writes 0 there) and no spread
        self.assertEqual(self.word((100.0, 0.0, 1), (120.0, 0.5, 500)), "too noisy to tell (one sample: run more)")
        self.assertEqual(self.word((100.0, 0.5, 500, None), (120.0, 0.5, 500, None)),
                         "too noisy to tell (spread not known: run more)")

    def test_a_change_under_min_effect_is_same(self):
        self.assertEqual(self.word((100.0, 0.1, 500), (101.0, 0.1, 500)), "same")  # apart, 1%
        self.assertEqual(self.word((100.0, 5.0, 500), (101.0, 5.0, 500)), "same")  # noisy, 1%
        self.assertEqual(self.word((100.0, 0.0, 1), (101.0, 0.0, 1)), "same")  # one sample, 1%
        self.assertEqual(self.word((100.0, 0.5, 500), (115.0, 0.5, 500), "--min-effect", "0.2"), "same")
        # a --min-effect over 10% is the bar a change must pass
        self.assertEqual(self.word((100.0, 0.5, 500), (115.0, 0.5, 500), "--min-effect", "0.12"), "slower")

    def test_the_note_counts_the_rule_and_says_the_caveat_once(self):
        rows, md = self.table({"s/manual_time": (100.0, 0.5, 500), "n/manual_time": (100.0, 0.5, 500),
                               "e/manual_time": (100.0, 0.5, 500)},
                              {"s/manual_time": (115.0, 0.5, 500), "n/manual_time": (105.0, 0.5, 500),
                               "e/manual_time": (100.5, 0.5, 500)})
        self.assertEqual([rows[n]["verdict"] for n in ("s/manual_time", "n/manual_time", "e/manual_time")],
                         ["slower", ONE_PROCESS_RUN_MORE, "same"])
        lines = md.splitlines()
        self.assertIn("CUDA 13.0 (cuBLAS 13.1.0) [b.json] against CUDA 13.0 (cuBLAS 13.1.0) [a.json]: faster in 0 "
                      "of 3 rows, slower in 1 (s: 1.15x), the same in 1, too noisy to tell in 1", lines)
        self.assertIn("faster / slower: one process a side: a change of at least 10% either way and 2x either row's "
                      "sample spread, the 95% intervals apart; 15% more per side whose row is host-paced or "
                      "chosen per process (docs/methodology.md, Reading a comparison)", lines)
        caveat = [line for line in lines if line.startswith("one process: run more: ")]
        self.assertEqual(len(caveat), 1, md)
        self.assertIn("one-process A/A pairs of one build differ by up to 15%", caveat[0])
        self.assertIn("merge 4 or more processes per build (tools/run-matrix, or tools/merge-processes)", caveat[0])
        self.assertNotIn("U test", md)  # no U test was run

    def test_a_file_without_time_ci_pct_is_judged_without_the_interval(self):
        a = one_process_file(self.dir.name, "a.json", {"k/manual_time": (100.0, 0.5, 500)})
        for other, verdict in (((120.0, None, 500), "slower"), ((105.0, None, 500), ONE_PROCESS_RUN_MORE),
                               ((101.0, None, 500), "same")):
            with self.subTest(other=other):
                old = one_process_file(self.dir.name, "old.json", {"k/manual_time": other})
                for files in ((a, old), (old, a)):
                    r = tool("compare.py", "--table", *files, "--format", "csv")
                    self.assertEqual((r.returncode, r.stderr), (0, ""))
                    row = next(csv.DictReader(io.StringIO(r.stdout)))
                    self.assertEqual(next(v for k, v in row.items() if k.endswith(": verdict")),
                                     verdict.replace("slower", "faster") if files[0] == old else verdict)

    def test_two_committed_default_run_processes(self):
        # rows of docs/results/h100/default-run/cuda-13.0.json and memory-limit-24GiB.json
        r = tool("compare.py", "--table", data("one-process-a.json"), data("one-process-b.json"),
                 "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        def p_and_verdict(row):  # the second file's: the only one judged
            return tuple(next(v for k, v in row.items() if k.endswith(end)) for end in (": p", ": verdict"))
        words = {row["benchmark"]: p_and_verdict(row) for row in csv.DictReader(io.StringIO(r.stdout))}
        # +52% between two processes of one build: host-paced, so not called from one process
        self.assertEqual(words["allreduce/bf16/8/outofplace/manual_time"][1].split(" (")[0], "too noisy to tell")
        self.assertEqual(words["gemm_autotune/fp8/1024/1024/1024/manual_time"],
                         ("", "too noisy to tell (one process, chosen per process (autotuned): run more)"))  # -7.7%
        # -11%: under 2 x its 6.2% sample_cv, and launches are paced by the host
        self.assertEqual(words["launch/empty/manual_time"], ("", "too noisy to tell (one process, host-paced (runs "
                                                                 "not queued ahead of the GPU, noise never settled): run more)"))
        self.assertEqual(words["sigmoid/vectorized/fp32/268435456/hot/manual_time"], ("", "same"))
        # -22%, but the second process took one sample: no interval
        self.assertEqual(words["startup/nccl/comm_init/default/manual_time"],
                         ("", "too noisy to tell (one sample: run more)"))
        self.assertEqual(words["svd/gesvdp/fp32/2048/manual_time"], ("", ""))  # not timed: no verdict


class CyclesView(PairOfFiles):
    """Mcycles: median over samples of time x SM clock; cycles change % against the base."""

    def test_mcycles_is_the_median_of_each_samples_cycles(self):
        times = [100.0, 101.0, 102.0, 103.0, 104.0]
        clocks = [1500.0, 1400.0, 1600.0, 1450.0, 1550.0]
        # per sample: 0.15, 0.1414, 0.1632, 0.14935, 0.1612 Mcycles; median 0.15 (the median time
        # at the median clock would be 102 x 1500 = 0.153)
        rows, _ = self.table({"k/manual_time": (times, clocks)},
                             {"k/manual_time": ([t * 1.05 for t in times], clocks)})
        row = rows["k/manual_time"]
        a = samples_file(self.dir.name, "a.json", {"k/manual_time": (times, clocks)})
        from cubench_tools import results
        _, loaded = results.load(a)
        self.assertAlmostEqual(loaded["k/manual_time"].mcycles(), 0.15)
        self.assertAlmostEqual(float(row["cycles change %"]), 5.0, places=1)

    def test_columns_per_file(self):
        a = samples_file(self.dir.name, "a.json", {"k/manual_time": (TIGHT, CLOCK)})
        b = samples_file(self.dir.name, "b.json", {"k/manual_time": ([t * 1.05 for t in TIGHT], CLOCK)})
        r = tool("compare.py", "--table", a, b, "--format", "csv")
        row = next(csv.DictReader(io.StringIO(r.stdout)))
        base, other = "CUDA 13.0 (cuBLAS 13.1.0), 5 processes [a.json]", "CUDA 13.0 (cuBLAS 13.1.0), 5 processes [b.json]"
        self.assertEqual(list(row), ["benchmark", f"{base}: time us", f"{base}: Mcycles", f"{other}: time us",
                                     f"{other}: Mcycles", f"{other}: change %", f"{other}: cycles change %",
                                     f"{other}: p", f"{other}: verdict"])
        self.assertEqual(row[f"{base}: Mcycles"], "0.15")  # 100 us x 1500 MHz = 150,000 cycles
        self.assertEqual(row[f"{other}: Mcycles"], "0.1575")
        self.assertEqual(row[f"{other}: cycles change %"], "+5.0")

    def test_a_side_without_clocks_leaves_the_cells_empty(self):
        rows, _ = self.table({"k/manual_time": (TIGHT, CLOCK)}, {"k/manual_time": (TIGHT, None)})
        self.assertEqual((rows["k/manual_time"]["cycles change %"], rows["k/manual_time"]["verdict"]), ("", "same"))

    def test_no_clock_anywhere_no_cycles_columns(self):
        rows, _ = self.table({"k/manual_time": (TIGHT, None)}, {"k/manual_time": (TIGHT, None)})
        self.assertNotIn("Mcycles", rows["k/manual_time"])
        self.assertNotIn("cycles change %", rows["k/manual_time"])

    def test_a_verdict_the_clock_made_is_named(self):
        # "clock": 6% faster at a 6% higher clock, the same cycles (and `!`: clocks over 5% apart);
        # "work": 6% faster at the same clock
        _, md = self.table({"clock/manual_time": (TIGHT, CLOCK), "work/manual_time": (TIGHT, CLOCK)},
                           {"clock/manual_time": ([t / 1.06 for t in TIGHT], [c * 1.06 for c in CLOCK]),
                            "work/manual_time": ([t / 1.06 for t in TIGHT], CLOCK)})
        self.assertIn("| clock/manual_time | 100 us | 0.15 | 94.3 us | 0.15 | -5.7 | +0.0 | 0.00794 | faster ! |", md)
        self.assertIn("| work/manual_time | 100 us | 0.15 | 94.3 us | 0.1415 | -5.7 | -5.7 | 0.00794 | faster |", md)
        notes = [line for line in md.splitlines() if "clock made the difference" in line]
        self.assertEqual(notes, ["1 faster or slower verdict(s) whose cycles (time x SM clock) changed under "
                                 "2%: the clock made the difference, not the work (faster because it ran "
                                 "at a higher clock, or slower at a lower one): clock/manual_time"])


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

    def figures(self, *paths, whole=False):
        """{chart's file name: its panels}, or with whole, {chart's file name: its figure}."""
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
                    self.assertEqual(plot.main(["--out-dir", out, *paths]), 0)
                finally:
                    sys.stderr = stderr
        finally:
            chart_drawing.save = saved
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
        for ax in figures["allreduce.png"]:  # the bytes as ticks: 8 at most, the smallest first
            labels = [t.get_text() for t in ax.get_xticklabels()]
            self.assertTrue(2 <= len(labels) <= 8, labels)
            self.assertEqual(labels[0], "8", labels)

    def test_every_charts_text_is_10_px_or_more_on_the_report_page(self):
        """A chart wider than the page shows it is shrunk, its text with it (the sigmoid chart's 18
        inches at 110 dpi, 1980 px, were shown at 1072: its 8-point labels at 6.6 px). Each text's
        points, at the dpi it is saved with and the page's shrinking, give its pixels there."""
        import matplotlib.text
        from cubench_tools import chart_drawing
        with tempfile.TemporaryDirectory() as d:
            toy = (toy_file(d, "a.json"), toy_file(d, "b.json", sizes=(1, 8, 64)))
            runs = (
                (data("torch-h200.json"), data("cuda-11.8.json"), data("cuda-13.0.json")),
                (data("allreduce-2gpu.json"),), toy, (v3("run-a.json"), v3("run-b.json")),
                tuple(os.path.join(HERE, "..", "docs", "results", "h100", "toolkits", f"verdict-cuda-{v}.json")
                      for v in ("11.8", "12.4", "13.0")))
            charts = {}
            for paths in runs:
                charts.update({f"{name} of {', '.join(map(os.path.basename, paths))}": fig
                               for name, fig in self.figures(*paths, whole=True).items()})
        for must in ("gemm.png", "sigmoid.png", "svd.png", "allreduce.png", "resnet.png", "transformer.png",
                     "toy_widget.png", "toy_gadget.png", "gemm_decode.png", "launch_empty.png"):
            self.assertTrue([c for c in charts if c.startswith(must + " ")], must)
        too_small, self.maxDiff = [], None
        for chart, fig in sorted(charts.items()):
            width_px = fig.get_figwidth() * chart_drawing.DPI
            shown = min(1, chart_drawing.PAGE_CHART_PX / width_px)  # the page's shrinking of a wider chart
            texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
            self.assertGreater(len(texts), 5, chart)
            smallest = min(texts, key=lambda t: t.get_fontsize())
            px = smallest.get_fontsize() / 72 * chart_drawing.DPI * shown
            if px < chart_drawing.MIN_TEXT_PX:
                too_small.append(f"{chart}: {smallest.get_text()!r} at {px:.1f} px")
        self.assertEqual(too_small, [])

    def test_a_size_axis_is_logarithmic_from_a_factor_of_10_its_ticks_the_sizes(self):
        from cubench_tools import chart_drawing
        self.assertTrue(chart_drawing.wide_sizes([1, 8, 64]))  # gemm_decode's m
        self.assertTrue(chart_drawing.wide_sizes([10, 100]))
        self.assertFalse(chart_drawing.wide_sizes([1024, 4096]))
        self.assertFalse(chart_drawing.wide_sizes([7, 0, 69.9]))  # 0 is no size on a log axis
        self.assertEqual([chart_drawing.size_label(v) for v in (1, 64, 16384, 2 ** 28, 10 ** 7, 3 * 10 ** 5 + 1, 2.5)],
                         ["1", "64", "16384", "256Mi", "10M", "300001", "2.5"])
        figures = self.figures(data("cuda-13.0.json"))
        for ax in figures["gemm.png"]:  # every panel's squares' n as its ticks, not 2^10
            ns = sorted({int(x) for c in ax.containers if c.get_label()[0] != "_"  # a file's line
                         for x in c.lines[0].get_xdata()})
            self.assertTrue(ns, ax.get_title())
            self.assertEqual((ax.get_xscale(), [t.get_text() for t in ax.get_xticklabels()]),
                             ("log", [str(n) for n in ns]), ax.get_title())


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


class SchemaFiles(unittest.TestCase):
    """Result files with a schema: a family and a counter no tool has seen are read, compared and
    drawn from what the file declares."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.a = toy_file(self.dir.name, "a.json")
        self.b = toy_file(self.dir.name, "b.json", square_speedup=1.2)

    def tearDown(self):
        self.dir.cleanup()

    def csv_table(self, *args):
        r = tool("compare.py", "--table", *args, "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        return {row["benchmark"]: row for row in csv.DictReader(io.StringIO(r.stdout))}

    def test_results_read_the_schema_and_every_counter(self):
        from cubench_tools import result_schema, results
        context, loaded = results.load(self.a)
        schema = result_schema.schema_of(context)
        self.assertEqual(schema.counters["widgets_per_s"].unit, "widget/s")
        widget = schema.families["toy/widget"]
        self.assertEqual(([(a.name, a.kind) for a in widget.axes], widget.main_counter, widget.size_axis),
                         ([("shape", "string"), ("n", "int")], "widgets_per_s", "n"))
        r = loaded["toy/widget/square/1000/manual_time"]
        self.assertEqual(sorted(r.counters), ["sm_clock_MHz", "widgets_per_s", "wobble"])  # no list of ours
        self.assertEqual(len(r.counters["widgets_per_s"]), 5)
        self.assertEqual(result_schema.family_and_axes(r.run_name, schema), ("toy/widget", {"shape": "square", "n": 1000}))
        self.assertEqual(result_schema.family_and_axes("gemm/bf16/8192/12288/4096/manual_time", schema),
                         ("gemm", {"dtype": "bf16", "m": 8192, "n": 12288, "k": 4096}))
        self.assertEqual(result_schema.family_and_axes("toy/gizmo/manual_time", schema), ("toy", {"what": "gizmo"}))
        # toy/widget's n must be a number: the name fits no family, and falls back to the old rule
        self.assertEqual(result_schema.family_and_axes("toy/widget/round/ten/manual_time", schema),
                         ("toy/widget/round/ten", {}))
        self.assertEqual(result_schema.better("widgets_per_s", schema), "higher")
        self.assertEqual(result_schema.better("wobble", schema), "lower")
        self.assertEqual(result_schema.better("sm_clock_MHz", schema), "none")

    def test_files_without_a_schema_fall_back(self):
        from cubench_tools import result_schema, results
        context, loaded = results.load(data("torch-h200.json"))
        self.assertIsNone(result_schema.schema_of(context))
        self.assertIsNone(result_schema.merged_schema([context]))
        self.assertEqual(result_schema.family_and_axes("sigmoid/vectorized/fp16/10000000/cold/manual_time"),
                         ("sigmoid/vectorized/fp16/cold", {}))
        self.assertEqual(result_schema.family_and_axes("gemm/bf16/8192/8192/8192/manual_time", None), ("gemm/bf16", {}))
        # every number of a row is a counter, also those no list ever named
        r = loaded["resnet50_train/tf32/nchw/32/256/manual_time"]
        self.assertIn("allocated_at_start_bytes", r.counters)
        self.assertIn("runs_per_sample", r.counters)
        self.assertFalse(set(r.counters) & {"iterations", "repetitions", "repetition_index", "threads",
                                            "real_time", "cpu_time", "family_index"})
        self.assertEqual([result_schema.better(c) for c in ("TFLOPS", "peak_allocated_bytes", "recon_error",
                                                      "sm_clock_MHz", "never_heard_of")],
                         ["higher", "lower", "lower", "none", "none"])

    def test_the_schema_reads_the_same_as_an_object_or_as_text(self):
        """cubench writes it as an object; files written before it wrote its own hold JSON text."""
        from cubench_tools import input_error, result_schema
        as_text = result_schema.schema_of({"cubench_schema": json.dumps(TOY_SCHEMA)})
        as_object = result_schema.schema_of({"cubench_schema": json.loads(json.dumps(TOY_SCHEMA))})
        self.assertEqual({n: (c.unit, c.better) for n, c in as_object.counters.items()},
                         {n: (c.unit, c.better) for n, c in as_text.counters.items()})
        self.assertEqual(sorted(as_object.families), sorted(as_text.families))
        self.assertTrue(as_object.counters)
        with self.assertRaisesRegex(input_error.InputError, "is a list, not an object"):
            result_schema.schema_of({"cubench_schema": [1]}, "x.json")

    def test_merged_schema_first_file_wins(self):
        from cubench_tools import result_schema
        other = json.loads(json.dumps(TOY_SCHEMA))
        other["counters"]["widgets_per_s"]["unit"] = "widget/min"
        other["counters"]["gizmos"] = {"unit": "gizmo", "better": "higher", "description": ""}
        merged = result_schema.merged_schema([{}, {"cubench_schema": json.dumps(TOY_SCHEMA)},
                                        {"cubench_schema": json.dumps(other)}])
        self.assertEqual(merged.counters["widgets_per_s"].unit, "widget/s")
        self.assertEqual(merged.counters["gizmos"].unit, "gizmo")

    def test_compare_shows_and_judges_a_counter_no_tool_has_seen(self):
        rows = self.csv_table(self.a, self.b)
        square, round_ = rows["toy/widget/square/1000/manual_time"], rows["toy/widget/round/1000/manual_time"]
        b = "CUDA 13.0 (cuBLAS 13.1.0) [b.json]"
        # the default columns: each family's main counter, with its unit; no other counter
        self.assertEqual([k for k in square if k.startswith(b)],
                         [f"{b}: time us", f"{b}: Mcycles", f"{b}: widgets_per_s (widget/s)",
                          f"{b}: TFLOPS (TFLOP/s)", f"{b}: change %", f"{b}: cycles change %", f"{b}: p",
                          f"{b}: verdict"])
        self.assertAlmostEqual(float(square[f"{b}: widgets_per_s (widget/s)"]) / 1e9, 1.198, places=3)
        # the same times, 20% more widgets per second: the counter shows it, and the verdict,
        # always on the time (the A/A's rule), says same
        self.assertEqual((square[f"{b}: change %"], square[f"{b}: verdict"]), ("+0.0", "same"))
        self.assertEqual((round_[f"{b}: change %"], round_[f"{b}: verdict"]), ("+0.0", "same"))
        # times 64..68 us, the same in both files: one process a side, a change under 2% is the
        # same whatever the repetitions' spread
        self.assertEqual(rows["toy/gadget/fast/64/manual_time"][f"{b}: verdict"], "same")
        r = tool("compare.py", "--table", self.a, self.b)
        self.assertIn("\nCUDA 13.0 (cuBLAS 13.1.0) [b.json] against CUDA 13.0 (cuBLAS 13.1.0) [a.json]: faster in 0 "
                      "of 11 rows, slower in none, the same in 11, too noisy to tell in 0\n", r.stdout)

    def test_the_main_counter_is_the_default_column(self):
        schema = json.loads(json.dumps(TOY_SCHEMA))
        schema["families"]["toy/widget"]["main_counter"] = "wobble"
        a = toy_file(self.dir.name, "wa.json", schema=schema)
        c = toy_file(self.dir.name, "wc.json", wobble=0.4, schema=schema)
        row = self.csv_table(a, c)["toy/widget/round/10/manual_time"]
        self.assertIn("CUDA 13.0 (cuBLAS 13.1.0) [wc.json]: wobble (mm)", row)
        self.assertNotIn("CUDA 13.0 (cuBLAS 13.1.0) [wc.json]: widgets_per_s (widget/s)", row)
        self.assertEqual(row["CUDA 13.0 (cuBLAS 13.1.0) [wc.json]: verdict"], "same")

    def test_counters_flag_takes_any_counter_the_rows_carry(self):
        rows = self.csv_table(self.a, self.b, "--counters", "wobble,sm_clock_MHz", "--filter", "^toy/widget/")
        row = rows["toy/widget/round/10/manual_time"]
        a = "CUDA 13.0 (cuBLAS 13.1.0) [a.json]"
        self.assertEqual([k for k in row if k.startswith(a)],
                         [f"{a}: time us", f"{a}: Mcycles", f"{a}: wobble (mm)", f"{a}: sm_clock_MHz (MHz)"])
        self.assertEqual(row[f"{a}: wobble (mm)"], "0.502")
        r = tool("compare.py", "--table", self.a, self.b, "--counters", "widgets_per_sec", "--filter", "^toy/widget/")
        assert_one_line_error(self, r, re.escape(
            "tools/compare: --counters: unknown counter(s) widgets_per_sec: not in the compared rows, "
            "whose counters are: sm_clock_MHz, widgets_per_s, wobble") + "$")

    def figures(self, *paths):
        return PlotColoursAndAxes.figures(self, *paths)

    def test_plot_leaves_out_rows_their_familys_axes_do_not_read(self):
        # toy/num has one number axis in a's schema (which wins); b's build named its rows with two
        # numbers, so they fall back to the old rule, whose family (numbers dropped) is toy/num
        # again but without its axes: left out of the chart, not a crash
        schema = json.loads(json.dumps(TOY_SCHEMA))
        schema["families"]["toy/num"] = {"description": "", "axes": [{"name": "n", "kind": "int"}],
                                         "main_counter": "", "size_axis": "n", "timer": "cuda_events",
                                         "counters": []}
        paths = []
        for name, suffix in (("num-a.json", ""), ("num-b.json", "/7")):
            path = toy_file(self.dir.name, name, schema=schema)
            with open(path) as f:
                data = json.load(f)
            data["benchmarks"] += [toy_row(f"toy/num/{n}{suffix}/manual_time", i, n + i)
                                   for n in (8, 64) for i in range(5)]
            with open(path, "w") as f:
                json.dump(data, f)
            paths.append(path)
        with tempfile.TemporaryDirectory() as out:
            r = tool("plot.py", "--out-dir", out, *paths)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(os.path.join(out, "toy_num.png"), r.stdout.split())

    def test_plot_draws_a_generic_chart_per_family(self):
        with tempfile.TemporaryDirectory() as out:
            r = tool("plot.py", "--out-dir", out, self.a, self.b)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), [os.path.join(out, f) for f in
                                                ("gemm.png", "toy_gadget.png", "toy_widget.png")])
            with open(os.path.join(out, "toy_widget.png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        from matplotlib.colors import to_hex
        figures = self.figures(self.a, self.b)
        self.assertEqual(sorted(figures), ["gemm.png", "toy_gadget.png", "toy_widget.png"])
        [ax] = figures["toy_widget.png"]
        self.assertEqual((ax.get_xlabel(), ax.get_ylabel()), ("n", "widgets_per_s (widget/s), higher is better"))
        self.assertEqual(ax.get_xscale(), "log")  # 10 to 100000
        lines = {c.get_label(): c.lines[0] for c in ax.containers}
        self.assertEqual(sorted(lines), sorted(f"shape={s}: CUDA 13.0 (cuBLAS 13.1.0) [{f}]"
                                               for s in ("round", "square") for f in ("a.json", "b.json")))
        for label, line in lines.items():
            shape, file = label.split(":")[0], label.rsplit("[", 1)[1].rstrip("]")
            self.assertEqual(to_hex(line.get_color()), to_hex("C0" if file == "a.json" else "C1"), label)
            self.assertEqual(line.get_marker(), "o" if shape == "shape=round" else "s", label)
            self.assertEqual(list(line.get_xdata()), list(TOY_SIZES))
        ys = lines["shape=square: CUDA 13.0 (cuBLAS 13.1.0) [b.json]"].get_ydata()
        self.assertTrue(all(abs(y / 1.198e9 - 1) < 1e-3 for y in ys), ys)
        # no size axis: a bar per file for each combination of the axes' values, the time as y
        [ax] = figures["toy_gadget.png"]
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["fast/64", "fast/1024", "slow/64", "slow/1024"])
        self.assertEqual(ax.get_ylabel(), "time (us), lower is better")
        self.assertEqual([to_hex(c.patches[0].get_facecolor()) for c in ax.containers if c.get_label()[0] != "_"],
                         [to_hex("C0"), to_hex("C1")])

    def test_plot_a_size_axis_spanning_a_factor_of_10_is_logarithmic_its_ticks_the_sizes(self):
        # gemm_decode's m = 1, 8, 64: 64x, on a log axis whose ticks say 1, 8 and 64; sizes 8x apart
        # stay on a linear axis
        for sizes, scale in (((1, 8, 64), "log"), ((10, 100), "log"), ((16, 32, 64, 128), "linear")):
            path = toy_file(self.dir.name, f"sizes-{len(sizes)}.json", sizes=sizes)
            [ax] = self.figures(path)["toy_widget.png"]
            self.assertEqual(ax.get_xscale(), scale, sizes)
            if scale == "log":
                self.assertEqual([t.get_text() for t in ax.get_xticklabels()], [str(n) for n in sizes])
                self.assertEqual([t.get_text() for t in ax.get_xticklabels(minor=True)],
                                 [""] * len(ax.get_xticklabels(minor=True)))  # no 10^0 beside the 1

    def test_plot_functions_work_without_main(self):
        from cubench_tools import family_charts
        from cubench_tools import results
        loaded = [(f"file {i}",) + results.load(p) for i, p in enumerate((self.a, self.b))]
        with tempfile.TemporaryDirectory() as out:
            first = family_charts.charts_for(loaded, out)
            second = family_charts.charts_for(loaded, out)  # nothing kept from the first call
            self.assertEqual((len(first[0]), first[1]), (len(second[0]), second[1]))
            self.assertEqual(sorted(os.path.basename(chart()) for chart in first[0]),
                             ["gemm.png", "toy_gadget.png", "toy_widget.png"])

    def test_plot_leaves_out_a_family_without_its_main_counter_with_a_line(self):
        with open(self.a) as f:
            doc = json.load(f)
        for row in doc["benchmarks"]:
            row.pop("widgets_per_s", None)
        path = os.path.join(self.dir.name, "no-widgets.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        with tempfile.TemporaryDirectory() as out:
            r = tool("plot.py", "--out-dir", out, path)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr.splitlines(), [
                "tools/plot: toy/widget: left out 6 benchmark(s) without its main counter widgets_per_s; "
                "no toy_widget.png"])
            self.assertFalse(os.path.exists(os.path.join(out, "toy_widget.png")))

    def test_merge_keeps_the_schema_and_every_counter(self):
        out = os.path.join(self.dir.name, "merged.json")
        r = tool("merge_processes.py", out, self.a, self.b)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            merged = json.load(f)
        self.assertEqual(json.loads(merged["context"]["cubench_schema"]), TOY_SCHEMA)
        row = next(row for row in merged["benchmarks"] if row["run_name"] == "toy/widget/round/10/manual_time")
        self.assertEqual((row["wobble"], row["sm_clock_MHz"]), (0.502, 1980.0))
        rows = self.csv_table(out, out, "--no-utest")
        self.assertIn("CUDA 13.0 (cuBLAS 13.1.0), 2 processes #2: widgets_per_s (widget/s)",
                      rows["toy/widget/round/10/manual_time"])

    def test_merge_refuses_files_of_different_schemas(self):
        other = json.loads(json.dumps(TOY_SCHEMA))
        other["counters"]["wobble"]["unit"] = "um"
        c = toy_file(self.dir.name, "c.json", schema=other)
        old = toy_file(self.dir.name, "old.json", schema=None)
        out = os.path.join(self.dir.name, "merged.json")
        for inputs, expect in (((self.a, c), f"{c} has another cubench_schema than {self.a}"),
                               ((self.a, old), f"{old} has no cubench_schema and {self.a} has one"),
                               ((old, self.a), f"{self.a} has a cubench_schema and {old} has none")):
            with self.subTest(inputs=inputs):
                r = tool("merge_processes.py", out, *inputs)
                assert_one_line_error(self, r, "^tools/merge-processes: " + re.escape(
                    expect + ": the processes of one merge must come from one build") + "$")
                self.assertFalse(os.path.exists(out))


class NotBuilt(unittest.TestCase):
    """A family one build left out (its source needs an optional library the build went without,
    context "not_built") stays in the table, marked, with one note saying why; a row missing for
    no reason a build gave is left out as before."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        schema = json.loads(json.dumps(TOY_SCHEMA))
        schema["families"]["toy/widget"]["library"] = "nccl"
        self.full = toy_file(self.dir.name, "full.json", schema=schema)
        self.without = self.edited("without.json", schema, "13.0", {"nccl": "no NCCL for CUDA 11.8"})
        self.silent = self.edited("silent.json", schema, "12.4", None)

    def tearDown(self):
        self.dir.cleanup()

    def edited(self, name, schema, toolkit, not_built):
        """toy_file's rows less toy/widget's; context not_built as given (None: no such field)."""
        with open(toy_file(self.dir.name, name, schema=schema)) as f:
            doc = json.load(f)
        doc["benchmarks"] = [r for r in doc["benchmarks"] if not r["name"].startswith("toy/widget/")]
        doc["context"]["cuda_toolkit"] = toolkit if not_built is None else "11.8"
        if not_built is not None:
            doc["context"]["not_built"] = json.dumps(not_built)
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def table(self, *files):
        r = tool("compare.py", "--table", *files)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def rows(self, out):
        return {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in out.splitlines()
                if line.startswith("| toy/") or line.startswith("| gemm/")}

    def test_a_left_out_family_is_marked_and_its_reason_said_once(self):
        for files in ((self.full, self.without), (self.without, self.full)):
            with self.subTest(base=os.path.basename(files[0])):
                out = self.table(*files)
                rows = self.rows(out)
                self.assertIn("toy/widget/round/10/manual_time", rows)
                self.assertIn("not built", rows["toy/widget/round/10/manual_time"])
                self.assertNotIn("missing", out)
                notes = [line for line in out.splitlines() if line.startswith("not built under")]
                self.assertEqual(notes, ["not built under CUDA 11.8 (cuBLAS 13.1.0): the nccl "
                                         "families (no NCCL for CUDA 11.8)"])
                # no verdict where either side has no row; the shared rows keep theirs
                self.assertNotRegex(" ".join(rows["toy/widget/round/10/manual_time"]), "same|faster|slower")
                self.assertRegex(" ".join(rows["toy/gadget/fast/64/manual_time"]), "same|too noisy to tell")

    def test_a_row_missing_without_a_reason_is_left_out(self):
        rows = self.rows(self.table(self.full, self.silent))
        self.assertNotIn("toy/widget/round/10/manual_time", rows)
        self.assertIn("toy/gadget/fast/64/manual_time", rows)
        # three files: a row one build lacks for no reason it gave is not listed
        rows = self.rows(self.table(self.without, self.full, self.silent))
        self.assertNotIn("toy/widget/round/10/manual_time", rows)

    def test_a_bad_not_built_field_is_one_line(self):
        for value, expect in (("{", 'context "not_built" is not JSON'),
                              ('{"nccl": 3}', 'context "not_built" is not an object of strings'),
                              (7, 'context "not_built" is 7, not a string')):
            with self.subTest(value=value):
                with open(self.without) as f:
                    doc = json.load(f)
                doc["context"]["not_built"] = value
                bad = os.path.join(self.dir.name, "bad.json")
                with open(bad, "w") as f:
                    json.dump(doc, f)
                r = tool("compare.py", "--table", self.full, bad)
                assert_one_line_error(self, r, re.escape(f"{bad}: {expect}"))


class WhatRan(unittest.TestCase):
    """A faster or slower row whose label names other kernels (or another cuBLASLt algorithm) than
    the base file's gets a note naming both: the library's reason for the verdict."""

    def test_a_verdict_with_other_kernels_names_both(self):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, scale, kernel in (("old.json", 1.0, "kernel: sm80_gemm_a"),
                                        ("new.json", 0.5, "kernel: sm90_gemm_b x2")):
                with open(toy_file(d, name)) as f:
                    doc = json.load(f)
                for r in doc["benchmarks"]:
                    if r["name"].startswith("gemm/"):
                        r["real_time"] *= scale
                        r["label"] = f"stopped: noise; {kernel}; L2 flushed"
                    elif r["name"].startswith("toy/gadget/fast/64/"):  # slower, same kernel
                        r["real_time"] *= 2 - scale
                        r["label"] = "kernel: same_one"
                doc["context"]["cuda_toolkit"] = "11.8" if scale == 1.0 else "13.0"
                with open(os.path.join(d, name), "w") as f:
                    json.dump(doc, f)
                paths.append(os.path.join(d, name))
            r = tool("compare.py", "--table", "--no-utest", *paths)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("1 faster or slower verdict(s) where another kernel or algorithm ran:\n"
                          "- gemm/bf16/256/256/256/manual_time: faster under CUDA 13.0 (cuBLAS 13.1.0), "
                          "where kernel: sm90_gemm_b x2; under CUDA 11.8 (cuBLAS 13.1.0), kernel: sm80_gemm_a",
                          r.stdout)
            self.assertNotIn("- toy/gadget", r.stdout)

    def test_only_the_algorithm_and_kernels_count_not_the_figures_beside_them(self):
        from cubench_tools import results, row_outcome, rows

        def row(label):  # a row of a file before version 3: its notes read from its label
            r = results.Result("gemm/bf16/256/256/256/manual_time")
            r.notes = row_outcome.notes_of_label(label)
            return r
        autotuned = "cuBLASLt algo 21, autotuned: candidate 3 of 8 (4.2% faster than the first)"
        self.assertEqual(rows.what_ran(row(f"stopped: noise; {autotuned}")), {"algorithm": "cuBLASLt algo 21"})
        self.assertEqual(rows.what_ran(row(autotuned.replace("4.2%", "3.9%"))), {"algorithm": "cuBLASLt algo 21"})
        self.assertEqual(rows.what_ran(row("best 8192 x 8192 x 8192, cuBLASLt algo 66, searched 40 shapes; "
                                           "kernel: sm90_a x2; L2 flushed")),
                         {"algorithm": "cuBLASLt algo 66", "kernels": "kernel: sm90_a x2"})
        self.assertEqual(rows.what_ran(row("1 CUDA graph launch; stopped: noise")), {"kernels": "1 CUDA graph launch"})
        self.assertEqual(rows.what_ran(row("stopped: noise settled")), {})
        self.assertEqual(rows.what_ran(row("kernels not named: CUPTI is busy")), {})  # CUPTI named none
        # the figures beside the algorithm differ, the algorithm does not: nothing else ran
        self.assertIsNone(rows.ran_differently(row(autotuned), row(autotuned.replace("4.2%", "3.9%"))))
        # one file names its kernels, the other only its algorithm: the algorithm alone is compared
        self.assertIsNone(rows.ran_differently(row("cuBLASLt algo 66; kernel: sm90_a"), row("cuBLASLt algo 66")))
        self.assertEqual(rows.ran_differently(row("cuBLASLt algo 66; kernel: sm90_a"),
                                              row("cuBLASLt algo 39; kernel: sm80_b")),
                         ("cuBLASLt algo 39; kernel: sm80_b", "cuBLASLt algo 66; kernel: sm90_a"))


class BadSchema(unittest.TestCase):
    """A schema that is not the documented shape is bad input: one line naming the file and what is
    wrong, exit status 2, from every tool."""

    def write(self, d, schema):
        path = os.path.join(d, "bad-schema.json")
        with open(path, "w") as f:
            json.dump({"context": {"cubench_schema": schema if isinstance(schema, str) else json.dumps(schema)},
                       "benchmarks": [toy_row("toy/widget/round/10/manual_time", 0, 1.0)]}, f)
        return path

    def test_each_fault_is_named(self):
        def broken(change):
            schema = json.loads(json.dumps(TOY_SCHEMA))
            change(schema)
            return schema
        cases = (
            ("{", 'context "cubench_schema" is not JSON (Expecting property name enclosed in double quotes'),
            ([], "cubench_schema: the schema is a list, not an object"),
            (broken(lambda s: s.update(version=4)), 'cubench_schema: "version" is 4, not 1, 2 or 3'),
            (broken(lambda s: s.pop("families")), 'cubench_schema: the schema has no "families"'),
            (broken(lambda s: s["counters"]["wobble"].update(unit=3)),
             'cubench_schema: counter "wobble": "unit" is 3, not a string'),
            (broken(lambda s: s["families"]["toy/widget"]["axes"][1].update(kind="float")),
             'cubench_schema: family "toy/widget", axis 2: "kind" is the string "float", not int, pow2, string or dtype'),
            (broken(lambda s: s["families"]["toy/widget"].update(axes="shape/n")),
             'cubench_schema: family "toy/widget": "axes" is the string "shape/n", not a list'),
            (broken(lambda s: s["families"]["toy/widget"].update(main_counter="gizmos")),
             'cubench_schema: family "toy/widget": main_counter "gizmos" is not one the schema\'s "counters" declares'),
            (broken(lambda s: s["families"]["toy/widget"].update(size_axis="shape")),
             'cubench_schema: family "toy/widget": size_axis "shape" is a string axis, not int or pow2'),
            (broken(lambda s: s["families"]["toy/widget"].update(size_axis="m")),
             'cubench_schema: family "toy/widget": size_axis "m" is not one of its axes'),
            (broken(lambda s: s["families"]["toy/widget"]["counters"].append("gizmos")),
             'cubench_schema: family "toy/widget": its counter the string "gizmos" is not one the schema\'s '
             '"counters" declares'),
            (broken(lambda s: s["families"]["toy/widget"].pop("main_counter")),
             'cubench_schema: family "toy/widget" has no "main_counter"'),
            # a declared counter that is not a number in a row is a bad counter, as without a schema
            (broken(lambda s: s["counters"].update(label_text={"unit": "", "better": "none"})), None))
        with tempfile.TemporaryDirectory() as d:
            for schema, expect in cases:
                path = self.write(d, schema)
                if expect is None:
                    with open(path) as f:
                        doc = json.load(f)
                    doc["benchmarks"][0]["label_text"] = "fast"
                    with open(path, "w") as f:
                        json.dump(doc, f)
                    expect = 'toy/widget/round/10/manual_time: counter label_text is the string "fast", not a number'
                with self.subTest(expect=expect):
                    for args in (("compare.py", "--table", path, path), ("plot.py", "--out-dir", d, path),
                                 ("merge_processes.py", os.path.join(d, "m.json"), path, path)):
                        r = tool(*args)
                        assert_one_line_error(self, r, r"^tools/[a-z-]+: " + re.escape(f"{path}: {expect}"))

    def test_an_undeclared_text_field_is_not_a_counter(self):
        from cubench_tools import results
        with tempfile.TemporaryDirectory() as d:
            path = self.write(d, TOY_SCHEMA)
            with open(path) as f:
                doc = json.load(f)
            doc["benchmarks"][0]["skip_note"] = "a newer Google Benchmark's text"
            with open(path, "w") as f:
                json.dump(doc, f)
            _, loaded = results.load(path)
        self.assertNotIn("skip_note", loaded["toy/widget/round/10/manual_time"].counters)


# tests/data/expected: the tables and charts the tools give for result files without a schema
# (written before cubench wrote one), which must keep loading as they always did. Where compare's
# output changed for every file (the cycles columns, `too noisy to tell`, the note on the `!` mark,
# times at three significant digits with their unit, and the one verdict rule: these files are one
# process each, so no p and the one-process rule's verdicts and notes) the expected tables have it
# too; every other cell is what the tools gave before they read schemas.
EXPECTED = os.path.join(DATA, "expected")
TABLES_WITHOUT_SCHEMA = {
    "cuda-13.0-vs-cuda-11.8.md": ("--table", "cuda-13.0.json", "cuda-11.8.json"),
    "torch-h200-vs-itself.md": ("--table", "torch-h200.json", "torch-h200.json"),
    "one-repetition-vs-cuda-13.0.md": ("--table", "--no-utest", "one-repetition.json", "cuda-13.0.json"),
    "truncated-vs-cuda-11.8.md": ("--table", "truncated.json", "cuda-11.8.json")}
CHARTS_WITHOUT_SCHEMA = ("cuda-13.0.json", "cuda-11.8.json", "torch-h200.json", "allreduce-2gpu.json",
                         "one-repetition.json", "truncated.json")


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


class WithoutSchema(unittest.TestCase):
    """Files written before the schema give the tables and charts they gave before it."""

    def test_tables_are_as_before(self):
        for expected, args in TABLES_WITHOUT_SCHEMA.items():
            with self.subTest(table=expected):
                r = subprocess.run([sys.executable, os.path.join(TOOLS, "compare.py"), *args],
                                   capture_output=True, text=True, cwd=DATA)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(os.path.join(EXPECTED, expected)) as f:
                    self.assertEqual(r.stdout, f.read())

    def test_charts_are_as_before(self):
        figures = PlotColoursAndAxes.figures(self, *map(data, CHARTS_WITHOUT_SCHEMA))
        with open(os.path.join(EXPECTED, "charts-without-schema.json")) as f:
            expected = json.load(f)
        self.assertEqual(sorted(figures), sorted(expected))  # the hand-made charts, no generic one
        self.assertEqual(json.loads(json.dumps(chart_summary(figures))), expected)


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

    def test_compact_table(self):
        r = tool("compare.py", data("truncated.json"), data("cuda-11.8.json"))
        self.assert_warned_once(r, "tools/compare", data("truncated.json"))
        self.assertIn("| gemm/bf16/4096/4096/4096/manual_time | 200 us | 202 us |", r.stdout)
        self.assertIn("\nnot in CUDA 13.0 (cuBLAS 13.1.0) (3 rows, no verdict): sigmoid/vectorized/fp32/10000000/"
                      "cold/manual_time, svd/gesvd/fp32/1024/manual_time, launch/empty/manual_time\n", r.stdout)

    def test_plot(self):
        with tempfile.TemporaryDirectory() as out:
            r = tool("plot.py", "--out-dir", out, data("truncated.json"))
            self.assert_warned_once(r, "tools/plot", data("truncated.json"))
            self.assertEqual(r.stdout.split(), [os.path.join(out, "gemm.png")])

    def test_merge_processes(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "merged.json")
            with open(data("truncated.json")) as f:  # its complete rows, whole: another process
                text = f.read()
            whole = os.path.join(d, "whole.json")
            with open(whole, "w") as f:
                f.write(text[:text.rindex("},") + 1].replace("2026-12-02", "2026-12-03") + "\n ]\n}\n")
            r = tool("merge_processes.py", out, data("truncated.json"), whole)
            self.assert_warned_once(r, "tools/merge-processes", data("truncated.json"))
            with open(out) as f:
                rows = json.load(f)["benchmarks"]
        self.assertEqual([(row["run_name"], row["real_time"]) for row in rows],
                         [("gemm/bf16/8192/8192/8192/manual_time", 1600)] * 2 +
                         [("gemm/bf16/4096/4096/4096/manual_time", 200)] * 2)  # the lower of 200, 201

    def test_every_cut_point_loads_its_complete_rows_or_says_why_not(self):
        from cubench_tools import input_error, results
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
                    except input_error.InputError as e:
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


class Interrupted(unittest.TestCase):
    """interrupted.json: a run stopped by SIGINT after two benchmarks; cubench closed the JSON with
    what it had finished and marked the context ("interrupted": "SIGINT"). It loads in every
    tool, with one warning that says so, not an error."""
    WARNING = "warning: {}: from a run interrupted by SIGINT; loaded 2 finished rows"

    def assert_warned_once(self, r, prog):
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([line for line in r.stderr.splitlines() if "interrupted" in line],
                         [f"{prog}: " + self.WARNING.format(data("interrupted.json"))])

    def test_compare_table(self):
        r = tool("compare.py", "--table", data("interrupted.json"), data("cuda-13.0.json"),
                 "--format", "csv", "--no-utest")
        self.assert_warned_once(r, "tools/compare")
        rows = {row["benchmark"]: row for row in csv.DictReader(io.StringIO(r.stdout))}
        self.assertEqual(sorted(rows), ["gemm/bf16/4096/4096/4096/manual_time",
                                        "gemm/bf16/8192/8192/8192/manual_time"])

    def test_plot_and_merge(self):
        with tempfile.TemporaryDirectory() as d:
            r = tool("plot.py", "--out-dir", d, data("interrupted.json"))
            self.assert_warned_once(r, "tools/plot")
            with open(data("interrupted.json")) as f:
                doc = json.load(f)
            del doc["context"]["interrupted"]  # another process, whole
            with open(os.path.join(d, "whole.json"), "w") as f:
                json.dump(doc, f)
            r = tool("merge_processes.py", os.path.join(d, "m.json"), data("interrupted.json"),
                     os.path.join(d, "whole.json"))
            self.assert_warned_once(r, "tools/merge-processes")

    def test_merge_names_the_interrupted_process(self):
        with open(data("interrupted.json")) as f:
            doc = json.load(f)
        del doc["context"]["interrupted"]
        with tempfile.TemporaryDirectory() as d:
            whole, out = os.path.join(d, "whole.json"), os.path.join(d, "m.json")
            with open(whole, "w") as f:
                json.dump(doc, f)
            r = tool("merge_processes.py", out, whole, data("interrupted.json"))
            self.assert_warned_once(r, "tools/merge-processes")
            with open(out) as f:
                self.assertEqual(json.load(f)["context"]["interrupted"], "SIGINT (process 2)")
            doc["context"]["date"] = "2026-12-11"  # a second whole process (merge refuses a file twice)
            whole2 = os.path.join(d, "whole2.json")
            with open(whole2, "w") as f:
                json.dump(doc, f)
            r = tool("merge_processes.py", out, whole, whole2)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                self.assertNotIn("interrupted", json.load(f)["context"])

    def test_the_mark_must_be_text(self):
        with open(data("interrupted.json")) as f:
            doc = json.load(f)
        doc["context"]["interrupted"] = {"signal": 2}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad-mark.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            r = tool("compare.py", "--table", path, data("cuda-13.0.json"))
        assert_one_line_error(self, r, "^tools/compare: .*bad-mark.json: context \"interrupted\" is an "
                                       "object, not a string or number$")

    def test_a_whole_run_has_no_warning(self):
        r = tool("compare.py", "--table", data("cuda-13.0.json"), data("cuda-11.8.json"))
        self.assertEqual((r.returncode, r.stderr), (0, ""))


class RunMatrix(unittest.TestCase):
    def list_presets(self, cuda118_root, cuda124_root=None):
        env = dict(os.environ)
        for var, root in (("CUBENCH_CUDA118_ROOT", cuda118_root), ("CUBENCH_CUDA124_ROOT", cuda124_root)):
            env.pop(var, None)
            if root is not None:
                env[var] = root
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

    def test_cuda124_takes_its_variable_else_the_first_default_with_an_nvcc(self):
        with open(os.path.join(HERE, "..", "CMakePresets.json")) as f:
            presets = {p["name"]: p for p in json.load(f)["configurePresets"]}
        defaults = presets["cuda-12.4"]["cacheVariables"]["CUBENCH_CUDA_ROOT_DEFAULT"].split(";")
        self.assertEqual(defaults, ["/usr/local/cuda-12.4", "/opt/cuda-12.4-debian"])
        here = [d for d in defaults if os.path.exists(os.path.join(d, "bin", "nvcc"))]
        want = os.path.join((here or defaults)[0], "bin", "nvcc")
        self.assertEqual(self.list_presets(None)["cuda-12.4"][1], want)
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(self.list_presets(None, d)["cuda-12.4"], ("missing", os.path.join(d, "bin", "nvcc")))
            os.mkdir(os.path.join(d, "bin"))
            with open(os.path.join(d, "bin", "nvcc"), "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(os.path.join(d, "bin", "nvcc"), 0o755)
            self.assertEqual(self.list_presets(None, d)["cuda-12.4"], ("available", os.path.join(d, "bin", "nvcc")))

    def test_a_default_list_takes_the_first_folder_with_an_nvcc(self):
        from cubench_tools import toolkits
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a"), os.path.join(d, "b")
            cache = {"CUBENCH_CUDA_ROOT_DEFAULT": f"{a};{b}"}
            self.assertEqual(toolkits.preset_nvcc(cache), os.path.join(a, "bin", "nvcc"))  # neither: the first
            os.makedirs(os.path.join(b, "bin"))
            open(os.path.join(b, "bin", "nvcc"), "w").close()
            self.assertEqual(toolkits.preset_nvcc(cache), os.path.join(b, "bin", "nvcc"))
            os.makedirs(os.path.join(a, "bin"))
            open(os.path.join(a, "bin", "nvcc"), "w").close()
            self.assertEqual(toolkits.preset_nvcc(cache), os.path.join(a, "bin", "nvcc"))

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


class RunMatrixCommand(unittest.TestCase):
    """What run-matrix would run and say, without building anything."""

    def command(self, *argv):
        from cubench_tools import run_matrix
        return run_matrix.suite_command("build/x/cubench", run_matrix.parse_args(list(argv)), "out.json")

    def test_defaults_are_the_rule_the_aa_passed(self):
        from cubench_tools import run_matrix
        args = run_matrix.parse_args([])
        self.assertEqual((args.processes, args.repetitions, args.min_time, args.suite), (4, 1, None, None))
        self.assertEqual(self.command(), [
            "build/x/cubench", "--benchmark_filter=.", "--benchmark_repetitions=1",
            "--benchmark_out=out.json", "--benchmark_out_format=json",
            "--benchmark_report_aggregates_only=false"])  # no min time: cubench stops on its noise

    def test_min_time_and_suite_only_when_given(self):
        cmd = self.command("--min-time", "0.5", "--suite", "full", "--repetitions", "3", "--filter", "^gemm/")
        self.assertEqual(cmd[1:3], ["--benchmark_filter=^gemm/", "--benchmark_repetitions=3"])
        self.assertEqual(cmd[-2:], ["--benchmark_min_time=0.5", "--cubench_suite=full"])
        self.assertEqual(self.command("--suite", "default")[-1], "--cubench_suite=default")
        self.assertEqual(self.command("--min-time", "2s")[-1], "--benchmark_min_time=2s")

    def test_kernels_are_named_only_when_asked(self):
        self.assertNotIn("--cubench_kernels=on", self.command())
        self.assertEqual(self.command("--kernels")[-1], "--cubench_kernels=on")

    def test_toolkits_in_upgrade_order_and_a_table_per_step(self):
        from cubench_tools import run_matrix, toolkits
        self.assertEqual(sorted(["cuda-13.0", "cuda-9.2", "mine", "cuda-11.8", "cuda-12.4"],
                                key=toolkits.toolkit_order),
                         ["cuda-9.2", "cuda-11.8", "cuda-12.4", "cuda-13.0", "mine"])
        self.assertEqual(run_matrix.tables(["r/cuda-13.0.json"]), [])
        self.assertEqual(run_matrix.tables(["r/a.json", "r/b.json"]), [("table.md", ["r/a.json", "r/b.json"])])
        three = ["r/cuda-11.8.json", "r/cuda-12.4.json", "r/cuda-13.0.json"]
        self.assertEqual(run_matrix.tables(three), [
            ("table.md", three),
            ("step-cuda-11.8-to-cuda-12.4.md", three[:2]),
            ("step-cuda-12.4-to-cuda-13.0.md", three[1:])])

    def test_help_says_the_defaults(self):
        r = tool("run_matrix.py", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for text in ("--processes 4", "--repetitions 1", "--suite default|full", "--cubench_suite"):
            self.assertIn(text, r.stdout)

    def test_bad_values_of_the_new_flags_are_one_line(self):
        for args, pattern in ((("--suite", "fast"), "argument --suite: invalid choice: 'fast'"),
                              (("--min-time", "abc"), re.escape("--min-time wants a time in seconds above 0 "
                                                                "(e.g. 0.5), got 'abc'") + "$"),
                              (("--min-time", "0"), "--min-time wants a time in seconds above 0"),
                              (("--min-time=-1s",), "--min-time wants a time in seconds above 0"),
                              (("--repetitions", "0"), "--repetitions and --processes want a count")):
            with self.subTest(args=args):
                # with a known preset: the flag is refused before anything would be built
                r = tool("run_matrix.py", "--presets", "cuda-13.0", "--out-dir", os.devnull, *args)
                assert_one_line_error(self, r, "^tools/run-matrix: " + pattern)

    def test_cubench_progress_is_relayed_once_led_by_the_process(self):
        from cubench_tools import run_matrix
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "cubench")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\n"
                        "echo 'gemm/bf16/4096/4096/4096/manual_time  200 us  200 us  5'\n"
                        "echo '[1/2] gemm/bf16/4096/4096/4096/manual_time ... 0 min 3 s elapsed, ETA 0 min 3 s' >&2\n"
                        "echo 'launch/empty/manual_time  3.4 us  3.4 us  1000'\n"
                        "echo '[2/2] launch/empty/manual_time ... 0 min 6 s elapsed, ETA 0 min 0 s' >&2\n")
            os.chmod(fake, 0o755)
            err = io.StringIO()
            stderr, sys.stderr = sys.stderr, err
            try:
                code = run_matrix.run_suite(fake, run_matrix.parse_args([]), os.path.join(d, "o.json"),
                                            "cuda-13.0 process 2/5")
            finally:
                sys.stderr = stderr
        self.assertEqual(code, 0)
        self.assertEqual(err.getvalue().splitlines(), [
            "[run-matrix] cuda-13.0 process 2/5: [1/2] gemm/bf16/4096/4096/4096/manual_time ... 0 min 3 s "
            "elapsed, ETA 0 min 3 s",
            "[run-matrix] cuda-13.0 process 2/5: [2/2] launch/empty/manual_time ... 0 min 6 s elapsed, "
            "ETA 0 min 0 s"])

    def test_wall_time_reads_as_minutes_and_seconds(self):
        from cubench_tools import matrix_progress
        self.assertEqual([matrix_progress.fmt_duration(s) for s in (0.2, 52, 60, 842.4)],
                         ["0 s", "52 s", "1 min 0 s", "14 min 2 s"])


class ExitPath(unittest.TestCase):
    """tools/cli.py's run(): the one way out of every tool."""

    def outcome(self, exception):
        from cubench_tools import cli

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
        from cubench_tools import input_error
        for exception, line in ((input_error.InputError("a.json: not JSON\nsecond line"), "tools/x: a.json: not JSON / second line"),
                                (PermissionError(13, "Permission denied", "out.json"), "tools/x: out.json: Permission denied")):
            with self.subTest(exception=exception):
                self.assertEqual(self.outcome(exception), (2, line + "\n"))


class WhereTheTimeWent(unittest.TestCase):
    """tools/where-the-time-went: per family and per row, the seconds of set-up, first call,
    check, warm-up and samples, a repeated row's set-up counted once and its samples each time.
    A file reads for what it has: the columns no row fills are blank and named in one line, and
    only a file that is not a result file is refused."""

    SINCE = "cubench writes them since c5b9141 of 2026-12-04"

    def test_families_and_rows_sum_their_parts(self):
        with tempfile.TemporaryDirectory() as d:
            spent = dict(setup_s=2.0, first_call_ms=500.0, validate_s=1.0, warmup_s=0.25,
                         sampling_s=3.0)
            rows = [toy_row("gemm/bf16/256/256/256/manual_time", i, 10.0, **spent) for i in range(3)]
            rows.append(toy_row("svd/gesvd/fp32/512/manual_time", 0, 10.0, setup_s=0.5,
                                first_call_ms=0.0, validate_s=0.0, warmup_s=0.0, sampling_s=0.5))
            path = os.path.join(d, "run.json")
            with open(path, "w") as f:
                json.dump({"context": {}, "benchmarks": rows}, f)
            r = tool("where_the_time_went.py", path, "--rows", "1")
            self.assertEqual((r.returncode, r.stderr), (0, ""))
            lines = r.stdout.splitlines()
            self.assertTrue(lines[0].startswith("| family |"), lines[0])  # no note: nothing blank
            # three repetitions: set-up once, samples three times
            self.assertIn("| gemm/bf16 | 1 | 2.0 | 0.5 | 1.0 | 0.2 | 9.0 | 12.8 |", lines)
            self.assertIn("| svd/gesvd/fp32 | 1 | 0.5 | 0.0 | 0.0 | 0.0 | 0.5 | 1.0 |", lines)
            self.assertIn("| **all** | 2 | 2.5 | 0.5 | 1.0 | 0.2 | 9.5 | 13.8 |", lines)
            self.assertEqual(lines[-1], "| gemm/bf16/256/256/256/manual_time | 2.0 | 0.5 | 1.0 | 0.2 | 9.0 | 12.8 |")

    def read(self, path, *args):
        """(the one note line above the tables, or None; the tables' lines) of a file read
        without an error or a warning."""
        r = tool("where_the_time_went.py", path, *args)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        lines = r.stdout.splitlines()
        notes = [line for line in lines if line and not line.startswith("|") and "costliest" not in line]
        self.assertLessEqual(len(notes), 1, notes)  # the blank columns are named once
        return (notes[0] if notes else None), [line for line in lines if line.startswith("|")]

    def blank(self, path, what, missing):
        return f"{path}: {what}: no {missing} in its rows: those columns are blank"

    def test_an_older_cubench_file_fills_the_columns_it_can(self):
        # rows of docs/results/h200/default-run/cuda-13.0-libtorch.json (cubench c6db17d):
        # first_call_ms only, and an error row (svd/gesvdp/fp32/2048) that has no counters at all
        path = data("older-cubench.json")
        note, lines = self.read(path)
        self.assertEqual(note, self.blank(path, f"older file (cubench c6db17d; {self.SINCE})",
                                          "setup_s, validate_s, warmup_s, sampling_s"))
        # gemm's first calls: 0.089 + 2.717 + 0.115 ms, launch/empty's 0.099 ms: 0.0 s to a decimal
        self.assertIn("| gemm | 3 |  | 0.0 |  |  |  | 0.0 |", lines)
        self.assertIn("| launch/empty | 1 |  | 0.0 |  |  |  | 0.0 |", lines)
        self.assertIn("| **all** | 4 |  | 0.0 |  |  |  | 0.0 |", lines)
        self.assertFalse([line for line in lines if "svd" in line])  # it failed: not a cost listed
        from cubench_tools import where_the_time_went as w
        with open(path) as f:
            rows = json.load(f)["benchmarks"]
        first = w.first_repetitions(rows)
        self.assertEqual(sorted(first), sorted(r["name"] for r in rows if not r.get("error_occurred")))
        gemm = first["gemm/fp32/4096/4096/4096/manual_time"]
        self.assertAlmostEqual(gemm["first_call_ms"], rows[1]["first_call_ms"] * 1e-3)
        self.assertEqual([gemm[n] for n in ("setup_s", "validate_s", "warmup_s", "sampling_s")], [None] * 4)
        self.assertAlmostEqual(w.total(gemm), gemm["first_call_ms"])

    def test_rows_lacking_counters_others_carry_get_blank_cells(self):
        with tempfile.TemporaryDirectory() as d:
            full = dict(setup_s=1.0, first_call_ms=2000.0, validate_s=0.5, warmup_s=0.5, sampling_s=3.0)
            rows = [toy_row("gemm/bf16/256/256/256/manual_time", 0, 10.0, **full),
                    toy_row("gemm/bf16/512/512/512/manual_time", 0, 10.0, first_call_ms=1000.0),
                    toy_row("svd/gesvd/fp32/512/manual_time", 0, 10.0, first_call_ms=500.0, sampling_s=4.0)]
            path = os.path.join(d, "run.json")
            with open(path, "w") as f:
                json.dump({"context": {}, "benchmarks": rows}, f)
            note, lines = self.read(path)
            self.assertEqual(note, f"{path}: some rows lack counters the others carry: setup_s (2 of 3 "
                                   "rows), validate_s (2 of 3 rows), warmup_s (2 of 3 rows), sampling_s "
                                   "(1 of 3 rows): those cells are blank, and the sums and totals count "
                                   "the cells there are")
            self.assertIn("| gemm/bf16 | 2 | 1.0 | 3.0 | 0.5 | 0.5 | 3.0 | 8.0 |", lines)
            self.assertIn("| svd/gesvd/fp32 | 1 |  | 0.5 |  |  | 4.0 | 4.5 |", lines)
            self.assertIn("| **all** | 3 | 1.0 | 3.5 | 0.5 | 0.5 | 7.0 | 12.5 |", lines)
            self.assertIn("| gemm/bf16/512/512/512/manual_time |  | 1.0 |  |  |  | 1.0 |", lines)
            self.assertEqual(lines[-3:], ["| gemm/bf16/256/256/256/manual_time | 1.0 | 2.0 | 0.5 | 0.5 | 3.0 | 7.0 |",
                                          "| svd/gesvd/fp32/512/manual_time |  | 0.5 |  |  | 4.0 | 4.5 |",
                                          "| gemm/bf16/512/512/512/manual_time |  | 1.0 |  |  |  | 1.0 |"])

    def file_with(self, directory, context, **counters):
        path = os.path.join(directory, "run.json")
        rows = [toy_row("launch/empty/manual_time", i, 3.4, **counters) for i in range(2)]
        with open(path, "w") as f:
            json.dump({"context": context, "benchmarks": rows}, f)
        return path

    def schema(self, version, counters):
        return json.dumps({"version": version, "families": {},
                           "counters": {c: {"unit": "s", "better": "none"} for c in counters}})

    def test_a_file_older_than_the_schema(self):
        path = data("cuda-13.0.json")
        note, lines = self.read(path)
        self.assertEqual(note, self.blank(path, f"older file (before cubench wrote a schema; {self.SINCE})",
                                          "setup_s, first_call_ms, validate_s, warmup_s, sampling_s"))
        self.assertIn("| gemm/bf16 | 2 |  |  |  |  |  |  |", lines)

    def test_a_version_1_file_older_than_the_counters_names_its_cubench(self):
        path = data("bad/before-the-time-counters.json")
        note, lines = self.read(path)
        self.assertEqual(note, self.blank(path, f"older file (cubench c6db17d; {self.SINCE})",
                                          "setup_s, validate_s, warmup_s, sampling_s"))
        self.assertIn("| launch/empty | 1 |  | 0.0 |  |  |  | 0.0 |", lines)
        with tempfile.TemporaryDirectory() as d:  # no git_revision in its context
            path = self.file_with(d, {"cubench_schema": self.schema(1, ["first_call_ms"])}, first_call_ms=0.1)
            self.assertEqual(self.read(path)[0], self.blank(
                path, f"older file (a cubench of schema version 1; {self.SINCE})",
                "setup_s, validate_s, warmup_s, sampling_s"))

    def test_pytorchs_timings_are_not_called_an_old_cubench(self):
        with tempfile.TemporaryDirectory() as d:
            path = self.file_with(d, {"executable": "tools/torch_reference.py"})
            self.assertEqual(self.read(path)[0], self.blank(
                path, "tools/torch_reference.py's file, which counts none of them",
                "setup_s, first_call_ms, validate_s, warmup_s, sampling_s"))

    def test_an_interrupted_run_is_read_with_its_warning(self):
        # docs/results/h200/vs-torch/bert_train/seq-128.cubench.json: interrupted and too old
        r = tool("where_the_time_went.py", data("interrupted.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, f"tools/where-the-time-went: warning: {data('interrupted.json')}: from "
                                   "a run interrupted by SIGINT; loaded 2 finished rows\n")
        self.assertIn("no setup_s, first_call_ms, validate_s, warmup_s, sampling_s in its rows", r.stdout)
        with tempfile.TemporaryDirectory() as d:
            path = self.file_with(d, {"interrupted": "SIGINT"}, setup_s=1.0, first_call_ms=5.0,
                                  validate_s=0.5, warmup_s=0.1, sampling_s=2.0)
            r = tool("where_the_time_went.py", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, f"tools/where-the-time-went: warning: {path}: from a run "
                                       "interrupted by SIGINT; loaded 2 finished rows\n")
            self.assertIn("| launch/empty | 1 | 1.0 | 0.0 | 0.5 | 0.1 | 4.0 | 5.6 |", r.stdout)

    def test_a_version_2_file_or_one_whose_schema_declares_them_is_not_called_old(self):
        with tempfile.TemporaryDirectory() as d:
            parts = ["setup_s", "first_call_ms", "validate_s", "warmup_s", "sampling_s"]
            path = self.file_with(d, {"cubench_schema": self.schema(2, parts)}, first_call_ms=0.1)
            self.assertEqual(self.read(path)[0], self.blank(
                path, "schema version 2 declares them, yet no finished row carries them",
                "setup_s, validate_s, warmup_s, sampling_s"))
            # Every cubench of version 2 writes them: a version-2 file without them is not old.
            path = self.file_with(d, {"cubench_schema": self.schema(2, ["first_call_ms"])}, first_call_ms=0.1)
            self.assertEqual(self.read(path)[0], self.blank(
                path, "schema version 2, which does not declare them", "setup_s, validate_s, warmup_s, sampling_s"))

    def test_a_file_whose_rows_all_failed_lists_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.json")
            row = dict(toy_row("svd/gesvd/fp32/512/manual_time", 0, 0.0), error_occurred=True,
                       error_message="wrong result")
            with open(path, "w") as f:
                json.dump({"context": {}, "benchmarks": [row]}, f)
            note, lines = self.read(path)
            self.assertEqual(note, f"{path}: no row finished (1 failed): nothing to list")
            self.assertIn("| **all** | 0 |  |  |  |  |  |  |", lines)

    def test_only_a_file_that_is_not_a_result_file_is_refused(self):
        for path, says in ((data("not-gbench.json"), "not Google Benchmark output"),
                           (data("bad/not-json.json"), "not JSON"),
                           (data("bad/aggregates-only.json"), "no benchmark results in it")):
            with self.subTest(path=path):
                assert_one_line_error(self, tool("where_the_time_went.py", path),
                                      "^tools/where-the-time-went: " + re.escape(f"{path}: {says}"))

    def test_every_committed_result_file_is_read(self):
        # docs/results: files of many cubench commits, PyTorch's, merged ones; articles-claims.json
        # is a list of claims, not a result file.
        import glob
        docs = os.path.join(HERE, "..", "docs", "results")
        paths = sorted(glob.glob(os.path.join(docs, "**", "*.json"), recursive=True))
        self.assertGreater(len(paths), 20)
        for path in paths:
            with self.subTest(path=os.path.relpath(path, docs)):
                r = tool("where_the_time_went.py", path)
                if path.endswith("articles-claims.json"):
                    assert_one_line_error(self, r, "not Google Benchmark output")
                    continue
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("| **all** |", r.stdout)
                self.assertNotIn("Traceback", r.stderr)


V3 = os.path.join(DATA, "v3")  # version-3 files, made by tests/data/v3/make_v3.py
SPLITK = "gemm/bf16/2048/2048/2048/splitk/manual_time"  # a gemm row, its name one segment longer
AUTOTUNED = "gemm/fp8/4096/4096/4096/manual_time"  # a gemm_autotune row, named like a gemm one
NOT_RUN = "gemm/bf16/16384/16384/16384/manual_time"  # run-b.json: not run at its turn (a skip)
NOT_SUPPORTED = "gemm/fp8/1024/1024/1024/manual_time"  # both: not supported here (a skip)


def v3(name):
    return os.path.join(V3, name)


def in_folder(folder, name, *args):
    """A tool run in folder on files named there: its output names them alike in any folder."""
    return subprocess.run([sys.executable, os.path.join(TOOLS, name), *args], capture_output=True,
                          text=True, cwd=folder)


class VersionThree(unittest.TestCase):
    """Version-3 files (tests/data/v3): every tool reads what a row is and how it ended from its
    "cubench" object, so a row whose name or label would read wrongly still reports right, a
    skip (not run, not supported) is not timed and not a failure, and a converted version-2
    file gives what its original gives."""

    def test_a_row_is_its_cubench_object_not_its_name_or_label(self):
        from cubench_tools import result_schema, results, row_outcome
        context, loaded = results.load(v3("run-b.json"))
        r = loaded[SPLITK]
        self.assertEqual((r.family, r.axis_values, r.status), ("gemm", {"dtype": "bf16", "m": 2048, "n": 2048,
                                                                        "k": 2048}, "measured"))
        self.assertEqual([n["kind"] for n in r.notes], ["case", "stop", "kernels", "throttled", "l2_flushed"])
        self.assertIn("stopped: timeout 5s", r.notes[0]["text"])  # the family's own words
        self.assertEqual(r.notes[1]["rule"], "noise_settled")
        # What the name and label would say, read as a version-2 file's: another family, no axes,
        # the family's words taken for a stop and a kernel.
        with open(v3("run-b.json")) as f:
            row = next(row for row in json.load(f)["benchmarks"] if row["name"] == SPLITK)
        legacy = row_outcome.legacy_outcome(row, result_schema.schema_of(context))
        self.assertEqual((legacy.family, legacy.axis_values), ("gemm/bf16/splitk", {}))
        self.assertEqual([n["kind"] for n in legacy.notes][:3], ["case", "stop", "kernels"])
        self.assertEqual(legacy.notes[1]["rule"], "timeout")
        self.assertEqual(loaded[AUTOTUNED].family, "gemm_autotune")
        skip = loaded[NOT_RUN]
        self.assertEqual((skip.status, skip.reason, skip.measured()),
                         ("not_run", "needs 3.0 GiB of device memory; 1.2 GiB free of 80.0 GiB", False))
        self.assertEqual(skip.message, f"{NOT_RUN[:-12]}: not run: {skip.reason}")  # Google Benchmark's
        self.assertEqual(loaded[NOT_SUPPORTED].status, "not_supported")
        self.assertEqual(loaded["svd/gesvdj/fp32/8192/manual_time"].status, "out_of_memory")
        wrong = results.load(v3("run-a.json"))[1]["svd/gesvd/fp32/1024/manual_time"]
        self.assertEqual((wrong.status, wrong.notes[0]["check"]), ("wrong_result", "singular values against fp64 gesvd"))
        self.assertIn("future_kind", [n["kind"] for n in loaded["sigmoid/vectorized/fp32/10000000/cold/manual_time"].notes])

    def test_a_converted_file_gives_what_its_original_gives(self):
        folders = (DATA, V3)
        runs = [("compare.py", "--table", "one-process-a.json", "one-process-b.json"),
                ("compare.py", "--table", "--format", "csv", "one-process-a.json", "one-process-b.json"),
                ("compare.py", "one-process-a.json", "one-process-b.json"),
                ("where_the_time_went.py", "one-process-a.json")]
        for args in runs:
            with self.subTest(args=args):
                old, new = (in_folder(folder, *args) for folder in folders)
                self.assertEqual((old.returncode, new.returncode), (0, 0), old.stderr + new.stderr)
                self.assertEqual(new.stdout, old.stdout)
                self.assertEqual(new.stderr, old.stderr)
        old, new = (PlotColoursAndAxes.figures(self, os.path.join(folder, "one-process-a.json"))
                    for folder in folders)
        self.assertEqual(sorted(new), sorted(old))
        self.assertEqual(chart_summary(new), chart_summary(old))

    def test_compare_judges_rows_by_their_status_and_names_kernels_from_notes(self):
        # run-b's measured GEMMs are 3-10% faster than run-a's: under what one process calls; made
        # 1.67x faster here (the autotuned one needs 15% more a side: its pick is its process's),
        # each is a verdict, and the note on what ran says where kernels differ
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        with open(v3("run-b.json")) as f:
            doc = json.load(f)
        for row in doc["benchmarks"]:
            if row["cubench"]["family"].startswith("gemm") and row["cubench"]["status"] == "measured":
                row["real_time"] *= 0.6
                row["cpu_time"] *= 0.6
        faster_b = os.path.join(folder.name, "run-b.json")
        with open(faster_b, "w") as f:
            json.dump(doc, f)
        unchanged = tool("compare.py", "--table", v3("run-a.json"), v3("run-b.json"), "--format", "csv")
        self.assertEqual(unchanged.returncode, 0, unchanged.stderr)
        words = {row["benchmark"]: row["CUDA 13.0 (cuBLAS 13.1.0): verdict"]
                 for row in csv.DictReader(io.StringIO(unchanged.stdout))}
        # the split-k row's samples were not queued ahead of the GPU (the L2 flushed before each)
        # and its noise never settled under its target: host-paced, as far as the row can tell
        self.assertEqual((words[SPLITK], words[AUTOTUNED]),
                         ("too noisy to tell (one process, host-paced (runs not queued ahead of the GPU, noise "
                          "never settled): run more)",
                          "too noisy to tell (one process, chosen per process (autotuned): run more)"))
        # gemm/bf16/1024 is 1.105x faster (-9.5%: ln 1.105 is past ln 1.10), and ran another kernel:
        # the one verdict the note on what ran names
        self.assertIn("1 faster or slower verdict(s) where another kernel or algorithm ran:\n- "
                      "gemm/bf16/1024/1024/1024/manual_time: faster",
                      tool("compare.py", "--table", v3("run-a.json"), v3("run-b.json")).stdout)
        r = tool("compare.py", "--table", v3("run-a.json"), faster_b, "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {row["benchmark"]: {k.split(": ", 1)[-1]: v for k, v in row.items()}
                for row in csv.DictReader(io.StringIO(r.stdout))}
        b = "CUDA 13.0 (cuBLAS 13.1.0): "
        cells = {row["benchmark"]: row for row in csv.DictReader(io.StringIO(r.stdout))}
        self.assertTrue(cells[NOT_RUN][b + "time us"].startswith(f"{NOT_RUN[:-12]}: not run: needs 3.0 GiB"))
        self.assertEqual(rows[NOT_RUN]["verdict"], "")
        self.assertEqual(rows[NOT_SUPPORTED]["verdict"], "")
        self.assertEqual((rows[SPLITK]["verdict"], rows[AUTOTUNED]["verdict"]), ("faster", "faster"))
        self.assertAlmostEqual(float(cells[AUTOTUNED][b + "TFLOPS (TFLOP/s)"]), 473.9, places=1)  # its family's
        md = tool("compare.py", "--table", v3("run-a.json"), faster_b).stdout
        self.assertIn("1 faster or slower verdict(s) where another kernel or algorithm ran:\n"
                      "- gemm/bf16/1024/1024/1024/manual_time: faster under CUDA 13.0 (cuBLAS 13.1.0), where "
                      "cuBLASLt algo 66; kernel: nvjet_hsh_128x256_kernel; under CUDA 12.4 (cuBLAS 12.4.5), "
                      "cuBLASLt algo 39; kernel: sm90_xmma_gemm_bf16_kernel", md)
        self.assertNotIn("decoy", md)  # the splitk row's label names a decoy kernel; its notes do not

    def test_the_compact_table_names_skips_as_not_timed_with_no_verdict(self):
        r = in_folder(V3, "compare.py", "run-a.json", "run-b.json")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        lines = r.stdout.splitlines()
        [line] = [line for line in lines if line.startswith("not timed, no verdict ")]
        self.assertIn(f"{NOT_RUN} in CUDA 13.0 (cuBLAS 13.1.0)", line)
        self.assertIn(f"{NOT_SUPPORTED} in CUDA 12.4 (cuBLAS 12.4.5), {NOT_SUPPORTED} in CUDA 13.0", line)
        [skip] = [line for line in lines if line.startswith(f"| {NOT_RUN} |")]
        self.assertEqual(skip, f"| {NOT_RUN} | 11 ms | not run: needs 3.0 GiB of device memory; "
                               "1.2 GiB free of 80.0 GiB |  |  |  |")  # its reason, no change, no verdict
        self.assertNotIn("fail", r.stdout)
        self.assertTrue([line for line in lines if line.startswith(f"| {SPLITK} | 95 us | 86 us |")])

    def test_plot_draws_rows_by_their_family_and_axes(self):
        figures = PlotColoursAndAxes.figures(self, v3("run-a.json"), v3("run-b.json"))
        self.assertEqual(sorted(figures), ["gemm.png", "launch_empty.png", "sigmoid.png", "svd.png"])
        panels = {ax.get_title(): ax for ax in figures["gemm.png"]}
        self.assertEqual(sorted(panels), ["gemm bf16", "gemm_autotune fp8"])
        xs = {c.get_label(): sorted(c.lines[0].get_xdata()) for c in panels["gemm bf16"].containers}
        self.assertEqual(xs, {"CUDA 12.4 (cuBLAS 12.4.5) [run-a.json]": [1024, 2048, 16384],
                              "CUDA 13.0 (cuBLAS 13.1.0) [run-b.json]": [1024, 2048]})  # not run: no point

    def test_where_the_time_went_counts_skips_as_not_timed(self):
        r = tool("where_the_time_went.py", v3("run-b.json"))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        lines = r.stdout.splitlines()
        self.assertTrue(lines[0].startswith("| family |"), lines[0])
        families = {line.split(" | ")[0][2:]: line.split(" | ")[1] for line in lines if line.startswith("| ")}
        self.assertEqual({f: families[f] for f in ("gemm", "gemm_autotune", "svd", "sigmoid", "launch/empty")},
                         {"gemm": "2", "gemm_autotune": "1", "svd": "1", "sigmoid": "1", "launch/empty": "1"})
        with open(v3("run-b.json")) as f:
            doc = json.load(f)
        doc["benchmarks"] = [row for row in doc["benchmarks"] if row["cubench"]["status"] != "measured"]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "untimed.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            r = tool("where_the_time_went.py", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{path}: no row finished (1 failed, 1 not run, 1 not supported): nothing to list", r.stdout)

    def test_merge_keeps_each_rows_cubench_object(self):
        from cubench_tools import results
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "merged.json")
            with open(v3("run-a.json")) as f:  # run-b's rows as a process of run-a's build
                context = json.load(f)["context"]
            with open(v3("run-b.json")) as f:
                doc = json.load(f)
            doc["context"] = dict(context, date=doc["context"]["date"])
            with open(os.path.join(d, "run-b.json"), "w") as f:
                json.dump(doc, f)
            r = tool("merge_processes.py", out, v3("run-a.json"), os.path.join(d, "run-b.json"))
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                merged = json.load(f)["benchmarks"]
            _, loaded = results.load(out)
        objects = []  # each process's object of the splitk row, whose notes differ between the two
        for name in ("run-a.json", "run-b.json"):
            with open(v3(name)) as f:
                objects.append(next(row["cubench"] for row in json.load(f)["benchmarks"] if row["name"] == SPLITK))
        self.assertEqual([row["cubench"] for row in merged if row["name"] == SPLITK], objects)
        self.assertEqual([row["cubench"]["status"] for row in merged if row["name"] == NOT_RUN], ["not_run"])
        self.assertEqual((loaded[NOT_RUN].status, loaded[SPLITK].family, len(loaded[SPLITK].times)),
                         ("not_run", "gemm", 2))

    def test_a_malformed_cubench_object_is_one_line_and_exit_2(self):
        row = "gemm/bf16/1024/1024/1024/manual_time"

        def remove(key):
            return lambda c: c.pop(key)
        cases = (
            (None, f'{row} has no "cubench" object (schema version 3 gives every row one)'),
            ([], f'{row}: "cubench" is a list, not an object'),
            (remove("family"), f'{row}: cubench has no "family"'),
            (lambda c: c.update(family="gemm2"), f'{row}: cubench: "family" "gemm2" is not one the schema declares'),
            (remove("status"), f'{row}: cubench has no "status"'),
            (lambda c: c.update(status="done"), f'{row}: cubench: "status" is the string "done", not measured, '
                                                 "not_run, not_supported, out_of_memory, wrong_result or error"),
            (lambda c: c.update(reason=None), f'{row}: cubench: "reason" is null, not a string'),
            (lambda c: c.update(notes={}), f'{row}: cubench: "notes" is an object, not a list'),
            (lambda c: c.update(notes=["stopped"]), f'{row}: cubench note 1 is the string "stopped", not an object'),
            (lambda c: c.update(notes=[{"kind": "stop"}]), f'{row}: cubench note 1 has no "text"'),
            (lambda c: c.update(notes=[{"kind": 3, "text": ""}]), f'{row}: cubench note 1: "kind" is 3, not a string'),
            (lambda c: c["axis_values"].pop("m"), f'{row}: cubench: "axis_values" has dtype, n, k, not the axes '
                                                   "of gemm: dtype, m, n, k"),
            (lambda c: c["axis_values"].update(m="1024"), f'{row}: cubench: axis "m" is the string "1024", not an integer'),
            (lambda c: c["axis_values"].update(dtype=16), f'{row}: cubench: axis "dtype" is 16, not a string '
                                                           "(the element type's name)"))
        with open(v3("run-a.json")) as f:
            original = json.load(f)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.json")
            for i, (change, says) in enumerate(cases):
                doc = json.loads(json.dumps(original))
                first = doc["benchmarks"][0]
                if change is None:
                    first.pop("cubench")
                elif isinstance(change, list):
                    first["cubench"] = change
                else:
                    change(first["cubench"])
                with open(path, "w") as f:
                    json.dump(doc, f)
                runs = [("compare.py", "--table", path, v3("run-b.json"))]
                if i < 3:  # every tool, on the first few
                    runs += [("compare.py", v3("run-b.json"), path), ("plot.py", "--out-dir", d, path),
                             ("merge_processes.py", os.path.join(d, "m.json"), path, path),
                             ("report.py", "--out", os.path.join(d, "r"), v3("run-b.json"), path),
                             ("where_the_time_went.py", path),
                             ("history.py", "add", "--db", os.path.join(d, "h.sqlite"), path)]
                for args in runs:
                    with self.subTest(says=says, tool=args[0]):
                        assert_one_line_error(self, tool(*args), r"^tools/[a-z-]+: " + re.escape(f"{path}: {says}") + "$")


class LegacyReading(unittest.TestCase):
    """A row of a file before version 3 has its "cubench" object read by one function
    (row_outcome.legacy_outcome): family and axes from its name, status and reason from Google
    Benchmark's error or skip and cubench's words for it, notes from its label."""

    def outcome(self, **fields):
        from cubench_tools import row_outcome
        row = dict(toy_row("svd/gesvd/fp32/1024/manual_time", 0, 0.0), **fields)
        o = row_outcome.legacy_outcome(row, None)
        return o.status, o.reason

    def test_status_and_reason_from_the_message(self):
        name = "svd/gesvd/fp32/1024"
        for fields, expect in (
                (dict(error_occurred=True, error_message=f"{name}: wrong result, not timed"), ("wrong_result", "")),
                (dict(error_occurred=True, error_message=f"{name}: inaccurate here, reported, not timed: 26.8 "
                                                         "exceeds 0.0073"), ("wrong_result", "26.8 exceeds 0.0073")),
                (dict(error_occurred=True, error_message=f"{name}: not supported here, not timed: no cuSOLVER"),
                 ("not_supported", "no cuSOLVER")),  # an error in such a file; a skip as read now
                (dict(error_occurred=True, error_message=f"{name}: not run: needs 15.2 GiB of device memory; "
                                                         "14.0 GiB free of 16.0 GiB"),
                 ("not_run", "needs 15.2 GiB of device memory; 14.0 GiB free of 16.0 GiB")),
                (dict(error_occurred=True, error_message=f"{name}: out of memory on GPU 0: asked for 2.0 GiB"),
                 ("out_of_memory", "out of memory on GPU 0: asked for 2.0 GiB")),
                (dict(error_occurred=True, error_message="cudaErrorIllegalAddress"), ("error", "cudaErrorIllegalAddress")),
                (dict(skipped=True, skip_message=f"{name}: not run: needs 1 GiB"), ("not_run", "needs 1 GiB")),
                (dict(skipped=True, skip_message="no NCCL in this build"), ("not_supported", "no NCCL in this build")),
                (dict(label="stopped: noise settled at 1% (target 0.5%) after 9 samples"), ("measured", ""))):
            with self.subTest(fields=fields):
                self.assertEqual(self.outcome(**fields), expect)

    def test_a_skipped_row_loads_as_not_timed(self):
        from cubench_tools import results
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "skipped.json")
            rows = [toy_row("launch/empty/manual_time", 0, 3.4),
                    dict(toy_row("svd/gesvd/fp32/1024/manual_time", 0, 0.0), skipped=True,
                         skip_message="svd/gesvd/fp32/1024: not run: needs 1 GiB")]  # Google Benchmark 1.8's
            with open(path, "w") as f:
                json.dump({"context": {}, "benchmarks": rows}, f)
            _, loaded = results.load(path)
            r = tool("where_the_time_went.py", path)
        skip = loaded["svd/gesvd/fp32/1024/manual_time"]
        self.assertEqual((skip.status, skip.measured(), skip.family), ("not_run", False, "svd/gesvd/fp32"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_notes_from_the_label(self):
        from cubench_tools import row_outcome
        label = ("cuBLASLt algo 21, autotuned; 1 GPU: busbw is not meaningful; stopped: noise settled at 1.15% "
                 "(target 0.5%) after 80 samples; kernel: sm90_a x2; power-capped in 100% of polls (software cap "
                 "700 W); THROTTLED: thermal or hardware slowdown in 12% of polls; sync boost in <1% of polls; "
                 "BUSY GPU: 2 other compute processes; L2 flushed; 24 runs per sample; queued behind a blocking "
                 "kernel; BLOCKING KERNEL TIMED OUT in 3 samples: those include launch time; slow clock: 3 of 20 "
                 "samples under 75% of the default SM clock")
        notes = row_outcome.notes_of_label(label)
        self.assertEqual("; ".join(n["text"] for n in notes), label)
        self.assertEqual([{k: v for k, v in n.items() if k != "text"} for n in notes], [
            {"kind": "case"},
            {"kind": "stop", "rule": "noise_settled", "noise_pct": 1.15, "target_pct": 0.5, "samples": 80},
            {"kind": "kernels", "named": True}, {"kind": "power_capped", "pct": 100, "cap_W": 700},
            {"kind": "throttled", "pct": 12}, {"kind": "sync_boost"}, {"kind": "busy_gpu", "processes": 2},
            {"kind": "l2_flushed"}, {"kind": "runs_per_sample", "runs": 24}, {"kind": "queued"},
            {"kind": "blocking_timeout", "samples": 3}, {"kind": "slow_clock", "samples": 3, "of": 20}])
        self.assertEqual(notes[0]["text"], "cuBLASLt algo 21, autotuned; 1 GPU: busbw is not meaningful")
        self.assertEqual(row_outcome.notes_of_label("stopped: timeout 5s: noise unknown after 1 sample"),
                         [{"kind": "stop", "rule": "timeout", "timeout_s": 5, "samples": 1,
                           "text": "stopped: timeout 5s: noise unknown after 1 sample"}])
        self.assertEqual(row_outcome.notes_of_label(""), [])


def listing_line(family, axes, default=True):
    """A line of cubench --cubench_list=axes (fixtures/detail/run/axes_listing.h)."""
    name = "/".join([family] + [str(v) for v in axes.values()])
    return json.dumps({"name": name, "family": family, "default_suite": default, "axes": axes})


def fake_cubench(directory, stdout, code=0, stderr=""):
    """An executable that answers as a cubench binary would, whatever its flags (a new one each
    call)."""
    path = os.path.join(directory, f"cubench{len(os.listdir(directory))}")
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\ncat <<'EOF'\n{stdout}\nEOF\necho '{stderr}' >&2\nexit {code}\n")
    os.chmod(path, 0o755)
    return path


# One configuration or two of each family tools/torch_reference.py covers, as a cubench build
# lists them, and one of a family it does not (launch/empty).
LISTING = [
    listing_line("gemm", {"dtype": "fp8", "m": 8192, "n": 11008, "k": 4096}),
    listing_line("sigmoid", {"variant": "naive", "dtype": "bf16", "n": 10000000, "cache": "cold"}),
    listing_line("sigmoid", {"variant": "copy", "dtype": "bf16", "n": 10000000, "cache": "cold"}),
    listing_line("svd", {"algo": "gesvdj", "dtype": "fp64", "n": 512}),
    listing_line("gemm_decode", {"dtype": "bf16", "weights": "11008x4096", "m": 8}),
    listing_line("gemm_decode", {"dtype": "fp8", "weights": "11008x4096", "m": 8}),
    listing_line("conv", {"pass": "fwd", "dtype": "bf16", "r": 3, "stride": 1, "c": 64, "k": 64, "hw": 56}),
    listing_line("conv", {"pass": "dgrad", "dtype": "bf16", "r": 3, "stride": 1, "c": 64, "k": 64, "hw": 56},
                 default=False),
    listing_line("conv", {"pass": "fwd", "dtype": "bf16", "r": 1, "stride": 1, "c": 64, "k": 256, "hw": 56},
                 default=False),
    listing_line("conv_autotune", {"pass": "fwd", "dtype": "fp16", "r": 3, "stride": 1, "c": 64, "k": 64,
                                   "hw": 56}, default=False),
    listing_line("resnet50_infer", {"precision": "fp16", "format": "channels_last", "mode": "eager",
                                    "batch": 64}),
    listing_line("resnet50_infer", {"precision": "fp16", "format": "channels_last", "mode": "graph",
                                    "batch": 64}),
    listing_line("sd15", {"what": "text_encode", "dtype": "bf16", "mode": "eager", "images": 1,
                          "resolution": 512}),
    listing_line("transformer_fwd", {"mode": "train", "attention": "sdpa", "batch": 32}),
    listing_line("transformer_fwd", {"mode": "train", "attention": "module", "batch": 32}),
    listing_line("torch/attention", {"backend": "cudnn", "pass": "fwd_bwd", "dtype": "bf16", "mask": "causal",
                                     "head_dim": 128, "seq": 1024}),
    listing_line("launch/empty", {}),
]


class TorchReference(unittest.TestCase):
    """tools/torch_reference.py takes its cases from a cubench build's listing (--cubench_list=axes):
    each covered configuration's axes become its case's parameters. That the cases agree with the
    real binary's listing is ctest tools.torch_reference_cases_are_the_binarys."""

    def plan(self, lines=LISTING):
        from cubench_tools import axes_listing, torch_cases
        return torch_cases.plan(axes_listing.parse("\n".join(lines)))

    def test_each_configuration_becomes_its_case_from_its_axes(self):
        cases = {c.name: c for c in self.plan().cases}
        self.assertEqual(list(cases), [
            "gemm/fp8/8192/11008/4096", "sigmoid/torch/bf16/10000000/cold", "svd/torch/fp64/512",
            "gemm_decode/bf16/11008x4096/8", "conv/fwd/bf16/3/1/64/64/56", "conv/fwd/fp16/3/1/64/64/56",
            "resnet50_infer/fp16/channels_last/eager/64", "sd15/text_encode/bf16/eager/1/512",
            "transformer_fwd/train/sdpa/32", "torch/attention/cudnn/fwd_bwd/bf16/causal/128/1024"])
        self.assertEqual(cases["gemm/fp8/8192/11008/4096"].params, dict(dtype="fp8", m=8192, n=11008, k=4096))
        # sigmoid's variants (naive, copy) share one PyTorch op, named with "torch" in their place.
        self.assertEqual(cases["sigmoid/torch/bf16/10000000/cold"].peers,
                         ["sigmoid/naive/bf16/10000000/cold", "sigmoid/copy/bf16/10000000/cold"])
        self.assertEqual(cases["sigmoid/torch/bf16/10000000/cold"].params, dict(dtype="bf16", n=10000000, cold=True))
        self.assertEqual(cases["gemm_decode/bf16/11008x4096/8"].params,
                         dict(dtype="bf16", n=11008, k=4096, m=8, cold=True))
        # conv_autotune's row stands beside the conv row of its name; the layer is the default
        # run's (conv's bf16 row of it is in its default set), so every dtype of it has a case.
        self.assertEqual(cases["conv/fwd/fp16/3/1/64/64/56"].peers, ["conv_autotune/fwd/fp16/3/1/64/64/56"])
        self.assertEqual(cases["conv/fwd/fp16/3/1/64/64/56"].params,
                         dict(dtype="fp16", r=3, stride=1, c=64, k=64, hw=56))
        self.assertEqual(cases["resnet50_infer/fp16/channels_last/eager/64"].params,
                         dict(precision="fp16", channels_last=True, batch=64))
        self.assertEqual(cases["sd15/text_encode/bf16/eager/1/512"].params,
                         dict(what="text_encode", dtype="bf16", images=1, res=512))
        self.assertEqual(cases["transformer_fwd/train/sdpa/32"].params, dict(train=True, batch=32))
        self.assertEqual(cases["torch/attention/cudnn/fwd_bwd/bf16/causal/128/1024"].params,
                         dict(backend="cudnn", train=True, dtype="bf16", causal=True, d=128, seq=1024))

    def test_a_configuration_without_a_case_says_why(self):
        plan = self.plan()
        why = dict(plan.left_out)
        self.assertEqual(sorted(why), [
            "conv/dgrad/bf16/3/1/64/64/56", "conv/fwd/bf16/1/1/64/256/56", "gemm_decode/fp8/11008x4096/8",
            "resnet50_infer/fp16/channels_last/graph/64", "transformer_fwd/train/module/32"])
        self.assertIn("forward only", why["conv/dgrad/bf16/3/1/64/64/56"])
        self.assertIn("a layer the default run leaves out", why["conv/fwd/bf16/1/1/64/256/56"])
        self.assertIn("bf16 only", why["gemm_decode/fp8/11008x4096/8"])
        self.assertIn("python runs eager", why["resnet50_infer/fp16/channels_last/graph/64"])
        self.assertIn("module's own attention", why["transformer_fwd/train/module/32"])
        # The covered families this listing has none of: a build without them has no case of them.
        self.assertEqual(plan.absent, ["resnet50_train", "llama_decode", "bert_train"])

    def test_a_family_whose_axes_changed_is_one_clear_error(self):
        from cubench_tools.input_error import InputError
        with self.assertRaisesRegex(InputError, "gemm/bf16/1024 has no axis 'm' .*update its reader"):
            self.plan([listing_line("gemm", {"dtype": "bf16", "size": 1024})])

    def test_list_and_left_out_read_the_binary(self):  # neither needs PyTorch
        with tempfile.TemporaryDirectory() as d:
            binary = fake_cubench(d, "\n".join(LISTING))
            r = tool("torch_reference.py", "--out", os.devnull, "--list", "--cubench-binary", binary,
                     "--filter", "^conv/")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), ["conv/fwd/bf16/3/1/64/64/56/manual_time",
                                                "conv/fwd/fp16/3/1/64/64/56/manual_time"])
            r = tool("torch_reference.py", "--out", os.devnull, "--left-out", "--cubench_binary", binary,
                     "--filter", "^gemm_decode/")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stdout, "^gemm_decode/fp8/11008x4096/8/manual_time\tbf16 only: .*\n$")
            # A filter of a family the build lists none of says so.
            assert_one_line_error(self, tool("torch_reference.py", "--out", os.devnull, "--list",
                                             "--cubench-binary", binary, "--filter", "^bert_train/"),
                                  "matches no case .*lists none of resnet50_train, llama_decode, bert_train")

    def test_a_binary_that_does_not_list_is_one_clear_error(self):
        with tempfile.TemporaryDirectory() as d:
            for binary, pattern in (
                    (os.path.join(d, "none"), "--cubench-binary .*/none: no such file \\(build cubench first"),
                    (fake_cubench(d, "", 2, "cubench: --cubench_list takes needs, got 'axes'"),
                     "--cubench_list=axes --cubench_suite=full exited 2: cubench: --cubench_list takes needs"),
                    (fake_cubench(d, "gemm/bf16/1024/1024/1024"), "output, line 1: not JSON"),
                    (fake_cubench(d, listing_line("gemm", {"dtype": "bf16"}).replace('"gemm/bf16"', '"gemm/fp8"')),
                     "line 1: gemm/fp8 is not its family gemm and its axes' values")):
                with self.subTest(pattern=pattern):
                    assert_one_line_error(self, tool("torch_reference.py", "--out", os.devnull, "--list",
                                                     "--cubench-binary", binary),
                                          "^tools/torch_reference.py: .*" + pattern)

    def test_sd15_without_diffusers_is_one_clear_error(self):
        # The case's error, which main() writes as the row's error message: what is missing and how
        # to get it (raised before PyTorch is touched).
        import importlib.util
        if importlib.util.find_spec("diffusers") and importlib.util.find_spec("transformers"):
            self.skipTest("diffusers and transformers are installed here")
        from cubench_tools import torch_sd15
        with self.assertRaisesRegex(RuntimeError, "the sd15 reference needs diffusers and transformers "
                                    "for this python .*: pip install diffusers transformers"):
            torch_sd15.sd15_models(None, None)

    def test_sd15_table_sets_each_row_beside_its_eager_peer(self):
        # docs/results/h100/sd15-table.py: a graph row against PyTorch's eager one; per image (the
        # time over the images), per step (step_ms or the unet_step row's time), peak, energy per
        # image; a figure a side lacks is "-".
        def row(name, us, **counters):
            r = {"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": "iteration",
                 "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 1,
                 "real_time": us, "cpu_time": us, "time_unit": "us"}
            r.update(counters)
            return r
        ours = [row("sd15/image/fp16/graph/4/512", 4e6, step_ms=150.0, peak_reserved_bytes=2**32,
                    energy_per_run_J=2000.0),
                row("sd15/unet_step/fp16/eager/1/512", 5e4, peak_reserved_bytes=2**31)]
        theirs = [row("sd15/image/fp16/eager/4/512", 5e6, step_ms=180.0, peak_reserved_bytes=5 * 2**30),
                  row("sd15/unet_step/fp16/eager/1/512", 6e4, peak_reserved_bytes=2**31, energy_per_run_J=20.0)]
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for rows in (ours, theirs):
                paths.append(os.path.join(d, f"{len(paths)}.json"))
                with open(paths[-1], "w") as f:
                    json.dump({"context": {}, "benchmarks": rows}, f)
            script = os.path.join(HERE, "..", "docs", "results", "h100", "sd15-table.py")
            r = subprocess.run([sys.executable, script, *paths], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| `sd15/image/fp16/graph/4/512` | 1000.0 / 1250.0 | 150.00 / 180.00 | 4.00 / 5.00 | "
                      "500.0 / - | 1.25 |", r.stdout)
        self.assertIn("| `sd15/unet_step/fp16/eager/1/512` | - / - | 50.00 / 60.00 | 2.00 / 2.00 | - / 20.0 | "
                      "1.20 |", r.stdout)

    def test_flags_and_out_are_checked_before_anything_runs(self):
        for args, pattern in ((("--out", HERE), "--out .*: is a directory; name a file"),
                              (("--out", "/no/such/dir/t.json"), "--out .*: its directory /no/such/dir does not exist"),
                              (("--out", "t.json", "--repetitions", "0"), "--repetitions wants a count of at least 1"),
                              (("--out", "t.json", "--min-samples", "0"), "--min-samples wants a count of at least 1"),
                              (("--out", "t.json", "--warmup", "-1"), "--warmup wants a count of at least 0"),
                              (("--out", "t.json", "--filter", "(("), "--filter is not a valid regex"),
                              (("--filter", "x"), "the following arguments are required: --out")):
            with self.subTest(args=args):
                assert_one_line_error(self, tool("torch_reference.py", *args), "^tools/torch_reference.py: " + pattern)


if __name__ == "__main__":
    unittest.main(verbosity=2)
