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
from cubench_tools import input_error, results, rows, verdicts  # noqa: E402

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
            with self.assertRaises(input_error.InputError):
                verdicts.check_options(alpha, effect)
        verdicts.check_options(0.05, 0)

    def test_speedup_is_spelled_as_a_reader_says_it(self):
        self.assertEqual(verdicts.speedup_text(verdicts.Verdict(1 / 1.41 - 1, verdicts.FASTER)), "1.41x faster")
        self.assertEqual(verdicts.speedup_text(verdicts.Verdict(0.08, verdicts.SLOWER)), "1.08x slower")


def bars_module():
    """docs/results/verdict-bars.py as a module: its splitting of merged files and its table."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("verdict_bars", os.path.join(ROOT, "docs", "results",
                                                                               "verdict-bars.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class AAOnCommittedProcesses(unittest.TestCase):
    """The bars the rule is held to on every committed A/A, the H100's and the H200's, one process
    a side and four (docs/results/verdict-bars.py): at most 1 row in 80 called in each A/A, 9 in
    10 of CUDA 11.8 against 13.0's rows 20%+ apart still called."""

    @classmethod
    def setUpClass(cls):
        cls.lines, cls.called = bars_module().table()

    def line(self, gpu, starts):
        return next(l for l in self.lines if l.gpu == gpu and l.what.startswith(starts))

    def test_every_line_meets_its_bar(self):
        for line in self.lines:
            self.assertTrue(line.met, line.cells())

    def test_the_figures_of_both_gpus(self):
        # (GPU, comparison, rows judged, rows called): the table docs/results/README.md shows
        expected = [("H100", "A/A, one process a side: 8", 2212, 0),
                    ("H100", "11.8 against 13.0, one process", 352, 325),
                    ("H100", "A/A, four", 79, 1),
                    ("H100", "11.8 against 13.0, four", 22, 22),
                    ("H200", "A/A, one process a side: 8", 1932, 0),
                    ("H200", "11.8 against 13.0, one process", 288, 288),
                    ("H200", "A/A, four", 69, 0),
                    ("H200", "11.8 against 13.0, four", 18, 18),
                    ("H100", "A/A, one process a side: tests/data", 6, 0)]
        for gpu, what, judged, called in expected:
            line = self.line(gpu, what)
            self.assertEqual((line.judged, line.called), (judged, called), line.cells())

    def test_the_rows_that_moved_most_are_read_from_their_own_notes(self):
        """The rows the rule called in the H200's A/A before it read what a process draws: each
        says so itself (its notes), and none is called from one process now."""
        b = bars_module()
        with tempfile.TemporaryDirectory() as d:
            procs = b.loaded(b.split(os.path.join(ROOT, "docs", "results", "h200", "aa", "cuda-13.0-a.json"), d))
        rows = procs[0][0]
        self.assertIn("host-paced", verdicts.drawn_per_process(rows["svd/gesvd/fp64/512/manual_time"]))
        self.assertIn("host-paced", verdicts.drawn_per_process(rows["launch/empty/manual_time"]))
        self.assertIn("host-paced", verdicts.drawn_per_process(rows["allreduce/bf16/8/outofplace/manual_time"]))
        self.assertIn("per process", verdicts.drawn_per_process(rows["gemm_autotune/bf16/1024/1024/1024/manual_time"]))
        # a GEMM queued ahead of the GPU, and gesvdj (host-driven but settled), are not
        self.assertEqual(verdicts.drawn_per_process(rows["gemm/bf16/1024/1024/1024/manual_time"]), "")
        self.assertEqual(verdicts.drawn_per_process(rows["svd/gesvdj/fp64/512/manual_time"]), "")

    def test_the_command_checks_its_bars(self):
        r = subprocess.run([sys.executable, os.path.join(ROOT, "docs", "results", "verdict-bars.py"), "--check"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("Every A/A together: 1 of 4298 rows called", r.stdout)

    def test_the_tour_files_are_the_same(self):
        r = tool("compare.py", os.path.join(TOUR, "a.json"), os.path.join(TOUR, "b.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("faster in 0 of 24 rows, slower in none", r.stdout)
        for line in r.stdout.splitlines():
            if line.startswith("| gemm/"):
                self.assertNotRegex(line, r"\| (faster|slower)( !)? \|$")


FLIPPED = {verdicts.FASTER: verdicts.SLOWER, verdicts.SLOWER: verdicts.FASTER,
           verdicts.SAME: verdicts.SAME, verdicts.TOO_NOISY: verdicts.TOO_NOISY}


class SwappingTheFilesFlipsTheWordOnly(unittest.TestCase):
    """A verdict is a property of the pair: on every committed pair of files (each GPU's processes
    one by one, their merged files, the H100's two one-process files, the tour's), swapping base
    and other turns faster into slower and back, and leaves every other word and reason."""

    def check(self, a, b, pa=1, pb=1):
        n = 0
        for name in a:
            if name in b and a[name].measured() and b[name].measured():
                there, back = verdicts.judge(a[name], b[name], pa, pb), verdicts.judge(b[name], a[name], pb, pa)
                self.assertEqual((FLIPPED[there.word], there.why), (back.word, back.why), name)
                n += 1
        return n

    def test_every_committed_pair(self):
        import itertools
        b = bars_module()
        pairs = 0
        with tempfile.TemporaryDirectory() as d:
            for aa_files, real_files in b.GPUS.values():
                paths = [os.path.join(ROOT, "docs", "results", f) for f in aa_files + real_files]
                for x, y in itertools.combinations(paths, 2):
                    pairs += self.check(results.load(x)[1], results.load(y)[1], 4, 4)
                procs = [r for p in paths for r, _ in b.loaded(b.split(p, d))]
                for x, y in itertools.combinations(procs, 2):
                    pairs += self.check(x, y)
        for x, y in (b.ONE_PROCESS_AA, ("tests/data/tour/a.json", "tests/data/tour/b.json")):
            pairs += self.check(results.load(os.path.join(ROOT, x))[1], results.load(os.path.join(ROOT, y))[1])
        self.assertGreater(pairs, 10000)

    def test_two_percent_either_way(self):
        # 100 -> 102 and 102 -> 100: one threshold, ln 1.02, both sides of it alike
        a = Fake([100, 100.2, 99.8, 100.1, 99.9], sample_cv=0.001)
        b = Fake([102.1, 102.3, 101.9, 102.2, 102.0], sample_cv=0.001)
        self.assertEqual((verdicts.judge(a, b, 5, 5).word, verdicts.judge(b, a, 5, 5).word),
                         (verdicts.SLOWER, verdicts.FASTER))
        one, other = Fake([100.0], sample_cv=0.001, samples=500), Fake([110.5], sample_cv=0.001, samples=500)
        self.assertEqual((verdicts.judge(one, other).word, verdicts.judge(other, one).word),
                         (verdicts.SLOWER, verdicts.FASTER))


class ComparePrintsItsOwnTable(unittest.TestCase):
    def test_merged_files_get_a_verdict_per_row(self):
        r = tool("compare.py", os.path.join(TOOLKITS, "verdict-cuda-11.8.json"),
                 os.path.join(TOOLKITS, "verdict-cuda-13.0.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("WARNING", r.stdout)
        self.assertIn("| startup/cuda/cublas_first_gemm/default/manual_time |", r.stdout)
        first_gemm = next(l for l in r.stdout.splitlines() if "cublas_first_gemm" in l and l.startswith("|"))
        self.assertTrue(first_gemm.rstrip(" |").endswith("slower"), first_gemm)
        self.assertIn("faster in 43 of 78 rows", r.stdout)

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
        self.assertTrue(lines[3].startswith("**13.0** against 11.8: faster in 43 of 78 rows"), lines[3])
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


class RecommendationNeedsMoreThanNoise(unittest.TestCase):
    """The page picks a build only on calls beyond what the rule calls between two runs of one
    build, and not on rows that changed with the clock alone; with three builds each is judged
    against the one before it too."""

    def page(self, *specs):
        with tempfile.TemporaryDirectory() as d:
            r = tool("report.py", "--out", os.path.join(d, "r"), *specs)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "r.md")) as f:
                return [l for l in f.read().split("\n\n") if l.strip()]

    def test_the_h100_aa_page_picks_nothing(self):
        blocks = self.page("a=" + os.path.join(TOOLKITS, "verdict-cuda-13.0.json"),
                           "b=" + os.path.join(TOOLKITS, "verdict-cuda-13.0-aa.json"))
        self.assertIn("slower in 1 (gemm_autotune/fp8/4096/4096/4096: 1.02x)", blocks[1])
        # its one call's cycles did not change: the clock, not the build
        self.assertEqual(blocks[2], "No pick between b and a: every row called changed with the SM clock only "
                                    "(1), not the work.")

    def test_calls_within_the_false_positive_rate_pick_nothing(self):
        self.assertEqual([verdicts.noise_calls(n) for n in (4, 24, 78, 200)], [0, 1, 3, 5])
        j = lambda word, cycles: type("J", (), {"verdict": verdicts.Verdict(0.3 if word == verdicts.SLOWER else -0.3, word),
                                                "cycles_change": cycles})()
        rows = {f"r{k}": j(verdicts.SAME, 0.0) for k in range(76)}
        rows.update(x=j(verdicts.FASTER, -0.3), y=j(verdicts.SLOWER, 0.3))
        line = report_words().recommendation("b", "a", rows, 0.02)
        self.assertTrue(line.startswith("No pick between b and a: 2 of 78 rows called, no more than the rule "
                                        "calls between two runs of one build (3 of 78 at 1 in 80)"), line)
        rows.update({f"f{k}": j(verdicts.FASTER, -0.3) for k in range(3)})
        self.assertTrue(report_words().recommendation("b", "a", rows, 0.02).startswith("Pick b over a unless"))

    def test_three_builds_each_against_the_one_before(self):
        blocks = self.page(*(f"{v}=" + os.path.join(TOOLKITS, f"verdict-cuda-{v}.json") for v in ("11.8", "12.4", "13.0")))
        self.assertTrue(blocks[5].startswith("**13.0** against 12.4: faster in 32 of 78 rows"), blocks[5])
        self.assertTrue(blocks[6].startswith("Pick 13.0 over 12.4 unless your workload is among its slower rows"),
                        blocks[6])


def report_words():
    from cubench_tools import report_words
    return report_words


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

    def test_the_committed_one_process_aas_pass_the_gate(self):
        """docs/history.md: two one-process runs of one build pass the gate; on the H100's two
        default runs (an 8 B all-reduce 1.52x apart) and the H200's two aa-second processes
        (gesvd fp32 1024 1.2x apart), each in date order."""
        import tarfile
        with tempfile.TemporaryDirectory() as d:
            with tarfile.open(os.path.join(ROOT, "docs", "results", "h200", "aa",
                                           "across-the-restructuring.tgz")) as t:
                t.extractall(d, members=[m for m in t.getmembers() if m.name.startswith("aa-second")])
            pairs = [(os.path.join(HERE, "data", "one-process-a.json"), os.path.join(HERE, "data", "one-process-b.json")),
                     (os.path.join(d, "aa-second.process-1.json"), os.path.join(d, "aa-second.process-2.json"))]
            for k, (first, second) in enumerate(pairs):
                db = os.path.join(d, f"h{k}.sqlite")
                self.assertEqual(tool("history.py", "add", "--db", db, first, second).returncode, 0)
                newest = sqlite3.connect(db).execute("SELECT max(date) FROM runs").fetchone()[0]
                r = tool("history.py", "regressions", "--db", db, "--since", newest)
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
