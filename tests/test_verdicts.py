"""The one verdict rule (tools/cubench_tools/verdicts.py) and the tools that speak it: compare, report
and history agree on the same files, an A/A of one build says "same" (or "too noisy"), a real
difference is still called, and the page's first lines count rows."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
TOOLS = os.path.join(ROOT, "tools")
sys.path.insert(0, TOOLS)
from cubench_tools import results, rows, verdicts  # noqa: E402

TOOLKITS = os.path.join(ROOT, "docs", "results", "h100", "toolkits")
TOUR = os.path.join(HERE, "data", "tour")


def tool(name, *args, cwd=None):
    return subprocess.run([sys.executable, os.path.join(TOOLS, name), *args], capture_output=True,
                          text=True, cwd=cwd)


class Fake:
    """A Result as the rule reads it: times and counter medians."""

    def __init__(self, times, **counters):
        self.times, self.counters = list(times), counters

    def median_time(self):
        import statistics
        return statistics.median(self.times)

    def median(self, counter):
        return self.counters.get(counter, float("nan"))


class Rule(unittest.TestCase):
    def test_one_process_small_change_is_too_noisy_not_a_verdict(self):
        a = Fake([100.0], sample_cv=0.004, time_ci_pct=0.05, samples=500)
        b = Fake([106.0], sample_cv=0.004, time_ci_pct=0.05, samples=500)
        v = verdicts.judge(a, b)
        self.assertEqual((v.word, v.why), (verdicts.TOO_NOISY, "one process: run more"))

    def test_one_process_large_clean_change_is_called(self):
        a = Fake([100.0], sample_cv=0.004, time_ci_pct=0.05, samples=500)
        self.assertEqual(verdicts.judge(a, Fake([130.0], sample_cv=0.004, time_ci_pct=0.05, samples=500)).word,
                         verdicts.SLOWER)
        self.assertEqual(verdicts.judge(a, Fake([70.0], sample_cv=0.004, time_ci_pct=0.05, samples=500)).word,
                         verdicts.FASTER)

    def test_one_process_change_inside_twice_the_spread_is_not_called(self):
        a = Fake([100.0], sample_cv=0.1, time_ci_pct=0.5, samples=500)
        b = Fake([115.0], sample_cv=0.02, time_ci_pct=0.1, samples=500)
        self.assertEqual(verdicts.judge(a, b).word, verdicts.TOO_NOISY)

    def test_under_min_effect_is_same_and_one_sample_is_too_noisy(self):
        self.assertEqual(verdicts.judge(Fake([100.0], samples=1), Fake([101.0], samples=1)).word, verdicts.SAME)
        v = verdicts.judge(Fake([100.0], samples=1), Fake([200.0], samples=1))
        self.assertEqual((v.word, v.why), (verdicts.TOO_NOISY, "one sample: run more"))

    def test_processes_use_the_u_test(self):
        a = Fake([100, 101, 99, 100.5], sample_cv=0.001)
        b = Fake([104, 105, 103.5, 104.5], sample_cv=0.001)
        v = verdicts.judge(a, b, 4, 4)
        self.assertEqual((v.word, v.rule), (verdicts.SLOWER, verdicts.UTEST))
        self.assertLess(v.p, 0.05)
        # the same files read as one process each: a 4% change is not called
        self.assertEqual(verdicts.judge(a, b, 1, 1).rule, verdicts.ONE_PROCESS)

    def test_options_are_checked_alike(self):
        for alpha, effect in ((0, 0.02), (1, 0.02), (0.05, -0.1), (0.05, 1), (0.05, 2)):
            with self.assertRaises(results.InputError):
                verdicts.check_options(alpha, effect)
        verdicts.check_options(0.05, 0)

    def test_speedup_is_spelled_as_a_reader_says_it(self):
        self.assertEqual(verdicts.speedup_text(verdicts.Verdict(1 / 1.41 - 1, verdicts.FASTER)), "1.41x faster")
        self.assertEqual(verdicts.speedup_text(verdicts.Verdict(0.08, verdicts.SLOWER)), "1.08x slower")


class AAOnCommittedProcesses(unittest.TestCase):
    """The bar the rule is held to, on the H100's committed processes split back into one-process
    files (docs/results/h100/one-process-verdicts.py): at most 1 row in 80 called in the A/A, 9 in
    10 of the rows 20%+ apart called between 11.8 and 13.0."""

    def test_the_table_meets_its_bars(self):
        r = subprocess.run([sys.executable, os.path.join(ROOT, "docs", "results", "h100",
                                                         "one-process-verdicts.py"), "--check"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("| A/A, one process a side: 8 processes of CUDA 13.0 | 28 | 2212 |", r.stdout)

    def test_the_tour_files_are_the_same(self):
        r = tool("compare.py", os.path.join(TOUR, "a.json"), os.path.join(TOUR, "b.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("faster in 0 of 24 rows, slower in none", r.stdout)
        for line in r.stdout.splitlines():
            if line.startswith("| gemm/"):
                self.assertNotRegex(line, r"\| (faster|slower)( !)? \|$")


class ComparePrintsItsOwnTable(unittest.TestCase):
    def test_merged_files_get_a_verdict_per_row(self):
        r = tool("compare.py", os.path.join(TOOLKITS, "verdict-cuda-11.8.json"),
                 os.path.join(TOOLKITS, "verdict-cuda-13.0.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("WARNING", r.stdout)
        self.assertIn("| startup/cuda/cublas_first_gemm/default/manual_time |", r.stdout)
        first_gemm = next(l for l in r.stdout.splitlines() if "cublas_first_gemm" in l and l.startswith("|"))
        self.assertTrue(first_gemm.rstrip(" |").endswith("slower"), first_gemm)
        self.assertIn("faster in 42 of 78 rows", r.stdout)

    def test_times_keep_three_significant_digits(self):
        self.assertEqual(rows.time_text(6.5712), "6.57 us")
        self.assertEqual(rows.time_text(1011.8), "1.01 ms")
        self.assertEqual(rows.time_text(0.5), "500 ns")
        self.assertEqual(rows.time_text(12232932.0), "12.2 s")

    def test_labels_are_unique(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "x"))
            twin = os.path.join(d, "x", "a.json")
            shutil.copy(os.path.join(TOUR, "a.json"), twin)
            r = tool("compare.py", os.path.join(TOUR, "a.json"), twin)
        self.assertEqual(r.returncode, 0, r.stderr)
        header = r.stdout.splitlines()[0].split(" | ")
        self.assertEqual(len(header[1:3]), len(set(header[1:3])), header)

    def test_rows_missing_from_one_file_are_named(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(TOUR, "b.json")) as f:
                data = json.load(f)
            data["benchmarks"] = [b for b in data["benchmarks"] if not b["name"].startswith("gemm/fp8/")]
            cut = os.path.join(d, "cut.json")
            with open(cut, "w") as f:
                json.dump(data, f)
            r = tool("compare.py", os.path.join(TOUR, "a.json"), cut)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"not in .* \(5 rows, no verdict\): gemm/fp8/1024/1024/1024/manual_time")

    def test_another_kernel_only_where_both_name_their_kernels(self):
        def result(notes):
            res = results.Result("x")
            res.notes = notes
            return res
        algo = {"kind": "case", "text": "cuBLASLt algo 66, heuristic's first of 8"}
        kernels = {"kind": "kernels", "named": True, "text": "kernel: nvjet_a"}
        self.assertIsNone(rows.ran_differently(result([algo]), result([algo, kernels])))
        self.assertIsNone(rows.ran_differently(result([kernels]), result([algo])))
        other = {"kind": "kernels", "named": True, "text": "kernel: sm90_b"}
        self.assertEqual(rows.ran_differently(result([kernels]), result([other])),
                         ("kernel: sm90_b", "kernel: nvjet_a"))


class ReportFirstLines(unittest.TestCase):
    def test_rows_counted_and_one_recommendation_per_build(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r")
            r = tool("report.py", "--out", out, "11.8=" + os.path.join(TOOLKITS, "verdict-cuda-11.8.json"),
                     "12.4=" + os.path.join(TOOLKITS, "verdict-cuda-12.4.json"),
                     "13.0=" + os.path.join(TOOLKITS, "verdict-cuda-13.0.json"))
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out + ".md") as f:
                page = f.read()
        lines = [l for l in page.splitlines() if l.strip()]
        self.assertTrue(lines[1].startswith("**12.4** against 11.8: faster in 34 of 78 rows"), lines[1])
        self.assertIn("slower in 3 (startup/cuda/cublas_first_gemm/default: 2.52x", lines[1])
        self.assertTrue(lines[2].startswith("Pick 12.4 over 11.8 unless"), lines[2])
        self.assertTrue(lines[3].startswith("**13.0** against 11.8: faster in 42 of 78 rows"), lines[3])
        # 12.4's gemm: 18 faster, 1 slower by 3.6%: faster, not mixed
        self.assertNotIn("mixed", page.split("## Verdicts")[0])

    def test_compare_and_report_count_alike(self):
        files = [os.path.join(TOOLKITS, f) for f in ("verdict-cuda-11.8.json", "verdict-cuda-13.0.json")]
        r = tool("compare.py", *files)
        counted = next(l for l in r.stdout.splitlines() if " against " in l and "faster in" in l)
        with tempfile.TemporaryDirectory() as d:
            tool("report.py", "--out", os.path.join(d, "r"), *files)
            with open(os.path.join(d, "r.md")) as f:
                page = f.read()
        self.assertIn(counted.split(": ", 1)[1].split(" (")[0], page)


class HistoryGate(unittest.TestCase):
    def history(self, d, *files):
        db = os.path.join(d, "h.sqlite")
        r = tool("history.py", "add", "--db", db, *files)
        self.assertEqual(r.returncode, 0, r.stderr)
        return db

    def test_an_aa_passes_the_gate(self):
        with tempfile.TemporaryDirectory() as d:
            db = self.history(d, os.path.join(TOUR, "a.json"), os.path.join(TOUR, "b.json"))
            r = tool("history.py", "regressions", "--db", db, "--since", "2026-12-01")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("0 row(s) slower", r.stdout)

    def test_the_first_gemm_slowdown_is_flagged(self):
        with tempfile.TemporaryDirectory() as d:
            db = self.history(d, os.path.join(TOOLKITS, "verdict-cuda-11.8.json"),
                              os.path.join(TOOLKITS, "verdict-cuda-13.0.json"))
            date = sqlite3.connect(db).execute("SELECT max(date) FROM runs").fetchone()[0]
            r = tool("history.py", "regressions", "--db", db, "--since", date)
            show = tool("history.py", "show", "--db", db, "--filter", "first_gemm")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("startup/cuda/cublas_first_gemm/default/manual_time: 2.91x slower", r.stdout)
        self.assertIn("2.91x slower", show.stdout)
        self.assertNotIn(" x0.", show.stdout)
        self.assertIn("edfad3b (from CUBENCH_GIT_REVISION)", show.stdout)  # no column cut


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:], verbosity=2)
