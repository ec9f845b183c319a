"""ctest tools.compare.*: tools/compare on committed sample results (tests/data): the N-way table's numbers
and marks, CSV, exit codes on bad input, the compact two-file table, times at three significant
digits, a context's numbers read as text, a LibTorch build's label, and colour only on a terminal.
(Each class of bad input file is also a ctest case of its own: tools.bad_input.* in
tests/CMakeLists.txt.)"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from tools_test_support import TOOLS, assert_one_line_error, data, tool, toy_row


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


if __name__ == "__main__":
    unittest.main(verbosity=2)
