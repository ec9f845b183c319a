"""ctest: tools/report on its fixtures (tests/data/report: three builds of one source, four
processes each; 11.8 built without NCCL and with rows not run): the page's first lines (per build
its rows counted, then one recommendation), then each family's sentence, then how to read the
page, before the rows; each
family's verdict sentence and the rows behind it, a long message folded into a short cell and a
note under its table, the GPU's conditions, the kernels that changed, what was not built or not
run, the cost side, the commands and the versions with what the puzzling ones mean; the HTML
well-formed and self-contained, the Markdown's charts beside it; the charts (tools/plot's, as
the report draws them): every timed row a point, every GEMM shape too, one legend that covers no
panel, reference labels and the title inside the chart; a build of one process judged by the
one-process rule (a row of one sample too noisy to tell, nothing called significant); version-3 files (tests/data/v3): the fixtures converted
give the same page, rows skipped are listed with their reasons and rows report by their "cubench"
objects; bad input one line on stderr, exit status 2 and nothing written; and run-matrix ending with the report (nothing is built: its build and runs are stood
in for).

Run one class as ctest does: tools/pyrun ../tests/test_report.py <class>."""
import argparse
import base64
import contextlib
import html.parser
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "tools")
DATA = os.path.join(HERE, "data")
FIXTURES = os.path.join(DATA, "report")
sys.path.insert(0, TOOLS)

TOOLKITS = ("11.8", "12.4", "13.0")


def fixture(toolkit):
    return os.path.join(FIXTURES, f"cuda-{toolkit}.json")


def labelled(*toolkits):
    return [f"{t}={fixture(t)}" for t in toolkits or TOOLKITS]


def run_report(*args):
    return subprocess.run([sys.executable, os.path.join(TOOLS, "report.py"), *args],
                          capture_output=True, text=True)


def assert_one_line_error(test, r, pattern):
    test.assertEqual(r.returncode, 2, r.stdout + r.stderr)
    lines = r.stderr.splitlines()
    test.assertEqual(len(lines), 1, r.stderr)
    test.assertRegex(lines[0], "^tools/report: " + pattern)
    test.assertNotIn("Traceback", r.stderr)


class Rendered(unittest.TestCase):
    """The fixtures' report, rendered once per class into a folder of its own."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.stem = os.path.join(cls.dir.name, "report")
        r = run_report("--out", cls.stem, *labelled())
        assert r.returncode == 0, r.stderr
        cls.stdout = r.stdout
        with open(cls.stem + ".md", encoding="utf-8") as f:
            cls.md = f.read()
        with open(cls.stem + ".html", encoding="utf-8") as f:
            cls.html = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def md_table_row(self, first_cell):
        rows = [line for line in self.md.splitlines() if line.startswith(f"| {first_cell} |")]
        self.assertEqual(len(rows), 1, first_cell)
        return [cell.strip() for cell in rows[0].strip("|").split(" | ")]


class VerdictSentences(Rendered):
    SENTENCES = {
        "gemm": "13.0 is 10-11% faster than 11.8 at gemm (2 of 2 rows significant); 12.4 is 4.6% slower "
                "than 11.8 there (1 of 2 rows significant).",
        "svd": "13.0 is 2.1-3.3x faster than 11.8 at svd (3 of 4 rows significant); 12.4 gained nothing "
               "there (every row the same).",
        "sigmoid": "12.4 gained nothing at sigmoid that the samples can show (1 of 1 row too noisy to "
                   "tell); 13.0 gained nothing there (every row the same).",
        "startup/cuda": "12.4 is 2.2-2.4x faster than 11.8 at startup/cuda (2 of 2 rows significant); 13.0 "
                        "is 2.5x faster than 11.8 there (2 of 2 rows significant).",
        "allreduce": "Not compared: 11.8, the base, was built without it (no NCCL for CUDA 11.8); 12.4 "
                     "and 13.0 ran it.",
    }

    def test_each_family_has_its_sentence_in_the_verdicts_and_its_section(self):
        for family, sentence in self.SENTENCES.items():
            with self.subTest(family=family):
                self.assertIn(f"- **{family}**: {sentence}", self.md)
                self.assertIn(f"\n\n{sentence}\n\n| row |", self.md)  # its section, above its rows
                self.assertIn(sentence, self.html)

    def test_the_rows_behind_a_sentence(self):
        self.assertIn("| row | 11.8 time | 12.4 time | 13.0 time | 12.4 speed-up | 12.4 verdict | "
                      "12.4 significance | 13.0 speed-up | 13.0 verdict | 13.0 significance |", self.md)
        self.assertEqual(self.md_table_row("`gesvd/fp32/2048`"),
                         ["`gesvd/fp32/2048`", "1.011 s", "1.012 s", "305.8 ms", "1.00x", "same", "p = 0.89",
                          "3.31x", "faster", "p = 0.029"])
        self.assertEqual(self.md_table_row("`vectorized/fp32/10000000/cold`")[5], "too noisy to tell")
        # the base built without NCCL: its cell says so and no verdict is given against it
        self.assertEqual(self.md_table_row("`fp32/1048576/outofplace`")[1:5],
                         ["not built", "25.15 us", "24.95 us", ""])

    def test_a_row_whose_clocks_differ_is_marked_and_the_mark_said(self):
        self.assertEqual(self.md_table_row("`bf16/4096/4096/4096`")[5], "slower !")
        self.assertIn("! after a verdict: the SM clocks of the two builds differ by more than 5% in that row",
                      self.md)


def result(times, clock=1975.0, **counters):
    """A row of these times (one per process, or one process's one repetition); counters: a
    value each (samples, sample_cv, time_ci_pct as cubench writes them)."""
    from cubench_tools import results
    r = results.Result("x/manual_time")
    r.times = list(times)
    r.clocks = [clock] * len(r.times)
    r.counters = {c: [v] * len(r.times) for c, v in counters.items()}
    return r


# A row of one process as cubench writes it: 500 samples, 0.5% apart, a 95% interval of +-0.2%.
ONE_PROCESS = dict(samples=500.0, sample_cv=0.005, time_ci_pct=0.2)


class SentenceWords(unittest.TestCase):
    """A family's sentence from judgements made here: each kind of clause."""

    ARGS = argparse.Namespace(no_utest=False, alpha=0.05, min_effect=0.02)

    def judgement(self, base, other, processes=4):
        from cubench_tools import report_builds
        return report_builds.Judgement(base, other, self.ARGS, processes, processes)

    def outcome(self, pairs, label="13.0", processes=4, **counters):
        from cubench_tools import report_words
        judged = [self.judgement(result(a, **counters), result(b, **counters), processes) for a, b in pairs]
        return report_words.Outcome(label, judged, None)

    def clause(self, pairs, first=True, processes=4, **counters):
        from cubench_tools import report_words
        return report_words.clause(self.outcome(pairs, processes=processes, **counters), "11.8", "svd", first, False)

    BASE = (100, 101, 99, 100.5)

    def test_faster_and_slower_rows_are_both_counted(self):
        faster = (50, 50.5, 49.5, 50.2)
        slower = (120, 121, 119, 120.5)
        self.assertEqual(self.clause([(self.BASE, faster), (self.BASE, slower), (self.BASE, self.BASE)]),
                         "13.0 is faster than 11.8 at svd in 1 of 3 rows (2.0x) and slower in 1 (20%)")

    def test_small_changes_read_as_percentages_large_ones_as_multiples(self):
        from cubench_tools import report_words
        self.assertEqual(report_words.fmt_range([1.052, 1.08]), "5.2-8.0%")
        self.assertEqual(report_words.fmt_range([2.1, 3.31]), "2.1-3.3x")
        self.assertEqual(report_words.fmt_range([1.08, 3.3]), "1.08-3.3x")
        self.assertEqual(report_words.fmt_range([2.46, 2.52]), "2.5x")

    def test_a_later_clause_says_there(self):
        slower = (110, 111, 109, 110.5)
        self.assertEqual(self.clause([(self.BASE, slower)], first=False),
                         "13.0 is 10% slower than 11.8 there (1 of 1 row significant)")

    def test_one_process_is_called_not_significant(self):
        # one process a side: the one-process rule calls a large clean change, and the clause
        # says "called", never "significant"
        text = self.clause([((100,), (50,)), ((100,), (40,))], processes=1, **ONE_PROCESS)
        self.assertEqual(text, "13.0 is 2.0-2.5x faster than 11.8 at svd (2 of 2 rows called)")
        self.assertEqual(self.clause([((100,), (100.5,))], processes=1, **ONE_PROCESS),
                         "13.0 gained nothing at svd (every row the same)")
        # 5% in one process: not called, however tight its samples
        self.assertEqual(self.clause([((100,), (95,))], processes=1, **ONE_PROCESS),
                         "13.0 gained nothing at svd that the samples can show (1 of 1 row too noisy to tell)")

    def test_one_sample_is_too_noisy_to_tell_and_its_cell_says_so(self):
        j = self.judgement(result((100,)), result((50,)), processes=1)  # no samples counter: one sample
        self.assertEqual((j.word, j.significance), ("too noisy to tell", "one process a side: one sample: run more"))
        j = self.judgement(result((100,), **ONE_PROCESS), result((95,), **ONE_PROCESS), processes=1)
        self.assertEqual(j.significance, "one process a side: one process: run more")
        j = self.judgement(result((100,), **ONE_PROCESS), result((50,), **ONE_PROCESS), processes=1)
        self.assertEqual((j.word, j.significance), ("faster", "one process a side"))
        self.assertEqual(self.clause([((100,), (50,)), ((100,), (40,))], processes=1),
                         "13.0 gained nothing at svd that the samples can show (2 of 2 rows too noisy to tell)")

    def test_two_against_two_is_too_noisy_to_tell_and_says_why(self):
        j = self.judgement(result((100, 101)), result((50, 50.5)), processes=2)
        self.assertEqual(j.word, "too noisy to tell")
        self.assertEqual(j.significance, "p = 0.33 (2 vs 2 cannot reach p < 0.05)")
        self.assertEqual(self.clause([((100, 101), (50, 50.5))], processes=2),
                         "13.0 gained nothing at svd that the samples can show (1 of 1 row too noisy to tell)")

    def test_no_utest_says_beyond_their_spread(self):
        from cubench_tools import report_builds, report_words
        args = argparse.Namespace(no_utest=True, alpha=0.05, min_effect=0.02)
        j = report_builds.Judgement(result(self.BASE), result((120, 121, 119, 120.5)), args, 4, 4)
        self.assertEqual((j.word, j.significance), ("slower", "no U test (--no-utest)"))
        self.assertEqual(report_words.clause(report_words.Outcome("13.0", [j], None), "11.8", "svd", True, True),
                         "13.0 is 20% slower than 11.8 at svd (1 of 1 row beyond their spread)")


class PageSections(Rendered):
    def test_conditions_of_each_run(self):
        self.assertEqual(self.md_table_row("rows power-capped"),
                         ["rows power-capped", "none of 7 rows", "1 of 8 rows (up to 72% of polls)", "none of 8 rows"])
        self.assertEqual(self.md_table_row("SM clock of the samples")[2],
                         "median 1975 MHz (1430-1975 over 8 rows)")
        self.assertEqual(self.md_table_row("other processes on the GPU")[1:],
                         ["0 at start; none during the samples",
                          "1 (of: pid 4242 512 MiB) at start; up to 1 during the samples of 3 rows",
                          "0 at start; none during the samples"])
        self.assertEqual(self.md_table_row("power limit")[1:], ["700 W"] * 3)
        self.assertEqual(self.md_table_row("samples")[1:], ["4 processes, one sample each"] * 3)
        self.assertIn("- 12.4 ran power-capped in 1 row: its clock, and so its time, followed the power cap", self.md)
        self.assertIn("- 12.4 shared the GPU with other processes", self.md)

    def test_kernels_that_changed_name_both_sides(self):
        self.assertEqual(self.md_table_row("`gemm/bf16/1024/1024/1024`"),
                         ["`gemm/bf16/1024/1024/1024`", "13.0", "faster (1.10x)",
                          "`cuBLASLt algo 66; kernel: nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNN`",
                          "`cuBLASLt algo 39; kernel: sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel`"])
        self.assertNotIn("| `svd/", self.md.split("## Kernels that changed")[1].split("##")[0])

    def test_not_built_and_not_run(self):
        self.assertIn("- **11.8**: not built: nccl (the family allreduce): no NCCL for CUDA 11.8", self.md)
        self.assertIn("- **11.8**: not run: gemm: fp8 needs CUDA 12.1 or later (2 configurations: "
                      "`gemm/fp8/1024/1024/1024`, `gemm/fp8/4096/4096/4096`)", self.md)

    def test_the_cost_side(self):
        cost = self.md.split("## Cost: start-up and memory")[1].split("\n## ")[0]
        self.assertIn("| `first_kernel/default` | 309 ms | 129.5 ms | 125.5 ms | 2.39x | faster | p = 0.029 |", cost)
        self.assertIn("| `svd` | 288 MiB / 276 MiB | 288 MiB / 276 MiB | 256 MiB / 276 MiB |", cost)
        self.assertIn("| `allreduce` | not built | 32 MiB / 2 MiB | 32 MiB / 2 MiB |", cost)
        self.assertIn("- **13.0**: `svd/gesvd/fp32/2048/manual_time` peaks at 256 MiB against 288 MiB under "
                      "11.8 (-11%)", cost)
        self.assertIn("summed over the 7 rows every build ran: 11.8 1.444 s; 12.4 1.443 s; 13.0 515.5 ms.", cost)
        # the start-up rows are the cost side's, not listed again under Rows
        self.assertNotIn("first_kernel", self.md.split("## Rows")[1].split("## Cost")[0])

    def test_the_exact_commands(self):
        for t in TOOLKITS:
            with self.subTest(toolkit=t):
                self.assertIn(f"```text\nbuild/cuda-{t}/cubench --benchmark_filter=. --benchmark_repetitions=1 "
                              f"--benchmark_out=results/cuda-{t}.process-1.json --benchmark_out_format=json "
                              "--benchmark_report_aggregates_only=false --cubench_kernels=on\n```", self.md)
                self.assertIn(f"**{t}**: `{fixture(t)}`, 4 processes of:", self.md)
        self.assertIn(f"```text\ntools/report --out {self.stem} 11.8={fixture('11.8')}", self.md)

    def test_every_version(self):
        self.assertIn("| field | 11.8 | 12.4 | 13.0 | differs | what it is |", self.md)
        self.assertEqual(self.md_table_row("`cublas`"), ["`cublas`", "11.11.3", "12.4.5", "13.1.0", "yes", ""])
        self.assertEqual(self.md_table_row("`cusolver`"), ["`cusolver`", "11.4.1", "11.6.1", "12.0.4", "yes", ""])
        self.assertEqual(self.md_table_row("`nccl`"), ["`nccl`", "-", "2.21.5", "2.28.3", "yes", ""])
        gb = self.md_table_row("`google_benchmark`")
        self.assertEqual(gb[:5], ["`google_benchmark`", "1.8.3", "1.8.3", "1.8.3", ""])
        self.assertTrue(gb[5].startswith("the Google Benchmark library the build linked"), gb[5])
        self.assertNotIn("versions differ", gb[5])  # they do not here
        self.assertNotIn("`cubench_schema`", self.md)

    def test_the_header_names_each_build_and_the_files_note(self):
        self.assertTrue(self.md.startswith("# cubench report: 11.8, 12.4, 13.0 on NVIDIA H200\n"))
        self.assertIn(f"- **11.8** (the base): `{fixture('11.8')}`: CUDA 11.8 (cuBLAS 11.11.3); 4 processes, "
                      "one sample each", self.md)
        self.assertIn("The files say: hand-made test data for the tools, not a measurement", self.md)
        self.assertEqual(self.stdout.splitlines(), [self.stem + ".md", self.stem + ".html"])


class PageOrder(Rendered):
    """The verdict first: the page's first lines per build (its rows counted, then one
    recommendation), the families' sentences, how to read the page, and only then the rows."""

    FIRST = ("**12.4** against 11.8: faster in 2 of 9 rows (2.24-2.39x), slower in 1 (gemm/bf16/4096/4096/4096: "
             "1.05x), the same in 5, too noisy to tell in 1; not compared: allreduce.",
             "Pick 12.4 over 11.8 unless your workload is among its slower rows (gemm/bf16/4096/4096/4096): "
             "across the 3 rows that changed it is 1.72x faster (geometric mean).",
             "**13.0** against 11.8: faster in 7 of 9 rows (1.1-3.31x), slower in none, the same in 2, too noisy "
             "to tell in 0; not compared: allreduce.",
             "Pick 13.0 over 11.8: faster in 7 rows and slower in none.")

    def test_the_first_lines_come_right_under_the_title(self):
        title = "# cubench report: 11.8, 12.4, 13.0 on NVIDIA H200\n\n"
        self.assertTrue(self.md.startswith(title + "\n\n".join(self.FIRST) + "\n\n"), self.md[:900])
        self.assertIn("<p><strong>13.0</strong> against 11.8: faster in 7 of 9 rows", self.html)
        self.assertIn("<p>Pick 13.0 over 11.8: faster in 7 rows and slower in none.</p>", self.html)

    def test_compare_counts_the_rows_as_the_page_does(self):
        r = subprocess.run([sys.executable, os.path.join(TOOLS, "compare.py"), fixture("11.8"), fixture("13.0")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        counted = next(line for line in r.stdout.splitlines() if " against " in line)
        self.assertIn(counted.split(": ", 1)[1], self.FIRST[2])

    def test_then_the_families_then_how_to_read_then_the_rows(self):
        at = [self.md.index(text) for text in (self.FIRST[3], "## Verdicts", "- **gemm**: ",
                                               "## How to read this page", "## Rows", "| row |")]
        self.assertEqual(at, sorted(at))
        reading = self.md.split("## How to read this page\n\n")[1].split("\n\n</details>")[0]
        self.assertLess(len(reading.splitlines()), 5, reading)  # short
        self.assertIn("- faster / slower: processes as samples: U test p < 0.05 and a median change of at least "
                      "2%; too noisy to tell: ", reading)
        self.assertIn("speed-up: 11.8's time over the build's (above 1 is faster)", reading)
        self.assertNotIn("[1]", reading)  # no table here folds a message
        self.assertNotIn("one process", reading)  # every build is 4 processes: no one-process caveat


def verdict(word, speedup=1.0):
    """A Verdict of that word, its change the speed-up's."""
    from cubench_tools import verdicts
    return verdicts.Verdict(1 / speedup - 1, word)


class FirstLines(unittest.TestCase):
    """The page's first lines from verdicts made here: each recommendation, and where a build
    stands at a family (mixed only where the smaller side of its called rows is over a quarter)."""

    def recommend(self, *words):
        """The recommendation of rows judged so, each with its cycles changed as much as its time
        (the work changed, not the clock alone)."""
        from cubench_tools import report_words
        judgements = {f"svd/r{i}": type("Judgement", (), {"verdict": v, "cycles_change": v.change})()
                      for i, v in enumerate(words)}
        return report_words.recommendation("13.0", "11.8", judgements, 0.02)

    def test_each_recommendation(self):
        same, noisy = verdict("same"), verdict("too noisy to tell")
        self.assertEqual(self.recommend(verdict("faster", 2.0), verdict("faster", 1.2), same),
                         "Pick 13.0 over 11.8: faster in 2 rows and slower in none.")
        self.assertEqual(self.recommend(verdict("slower", 1 / 1.2), verdict("slower", 1 / 1.1), noisy),
                         "Keep 11.8: 13.0 is slower in 2 rows and faster in none.")
        self.assertEqual(self.recommend(verdict("faster", 2.0), verdict("faster", 2.0), verdict("slower", 1 / 1.1)),
                         "Pick 13.0 over 11.8 unless your workload is among its slower rows (svd/r2): across "
                         "the 3 rows that changed it is 1.54x faster (geometric mean).")
        self.assertEqual(self.recommend(*[verdict("faster", 3.0)] * 4, *[verdict("slower", 1 / 1.1)] * 4),
                         "Pick 13.0 over 11.8 unless your workload is among its slower rows (svd/r4, svd/r5, "
                         "svd/r6 and 1 more): across the 8 rows that changed it is 1.65x faster (geometric mean).")
        self.assertEqual(self.recommend(verdict("faster", 1.1), *[verdict("slower", 0.5)] * 4),
                         "Keep 11.8 unless your workload is among 13.0's faster rows: across the 5 rows that "
                         "changed 13.0 is 1.71x slower (geometric mean).")
        self.assertEqual(self.recommend(noisy, noisy, same),
                         "No reason to switch to 13.0 that these files can show: 2 of 3 rows are too noisy to "
                         "tell; run more processes per build (tools/run-matrix) to decide.")
        self.assertEqual(self.recommend(same, same), "Either 13.0 or 11.8: every row is the same.")
        self.assertEqual(self.recommend(), "No recommendation for 13.0: no row both builds timed.")

    def test_a_family_is_mixed_only_past_a_quarter(self):
        from types import SimpleNamespace
        from cubench_tools import report_words

        def standing(faster, slower, n=None, not_built_why=None):
            return report_words.standing(SimpleNamespace(faster=[1.5] * faster, slower=[1.1] * slower,
                                                   n=faster + slower if n is None else n,
                                                   not_built_why=not_built_why))
        self.assertEqual(standing(21, 3), "faster")  # 3 of 24: 12.5%
        self.assertEqual(standing(3, 1), "faster")  # a quarter exactly: not past it
        self.assertEqual(standing(1, 3), "slower")
        self.assertEqual(standing(3, 2), "mixed")
        self.assertEqual(standing(0, 0, n=4), "same")
        self.assertIsNone(standing(0, 0, n=0))  # no row of the family to compare
        self.assertIsNone(standing(0, 0, n=0, not_built_why="no NCCL"))

    def test_a_build_that_timed_no_row_in_common_says_so(self):
        with tempfile.TemporaryDirectory() as d:
            with open(fixture("13.0")) as f:
                doc = json.load(f)
            for row in doc["benchmarks"]:
                row.update(error_occurred=True, error_message=f"{row['name'][:-12]}: wrong result, not timed")
            path = os.path.join(d, "failed.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            r = run_report("--out", os.path.join(d, "r"), f"11.8={fixture('11.8')}", f"13.0={path}")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "r.md")) as f:
                first = f.read().split("\n\n")[1:3]
        self.assertTrue(first[0].startswith("**13.0** against 11.8: no row both timed"), first[0])
        self.assertEqual(first[1], "No recommendation for 13.0: no row both builds timed.")


# A message as cubench writes it for a row it did not time (docs/results/h100's svd, shortened).
LONG_MESSAGE = ("svd/gesvd/fp32/1024: inaccurate here, reported, not timed: svd gesvd fp32 n=1024 "
                "(reconstruction 53.948301, orthogonality 0.000002, singular values 26.817003 against fp64 "
                "gesvd): singular values' error max|s - s_ref| / s_ref_max 26.817 exceeds tolerance 0.00732422")


def with_error(toolkit, name, message, folder):
    """The fixture of toolkit with every sample of row name an error row of message; its path."""
    with open(fixture(toolkit)) as f:
        doc = json.load(f)
    rows = [r for r in doc["benchmarks"] if r["name"] == name]
    assert rows, name
    for r in rows:
        for key in ("real_time", "sm_clock_MHz", "peak_mem_bytes", "used_mem_bytes", "first_call_ms"):
            r.pop(key, None)
        r.update(error_occurred=True, error_message=message, real_time=0.0)
    path = os.path.join(folder, f"cuda-{toolkit}.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


class FoldedMessages(unittest.TestCase):
    """A long message in a rows table: a short cell with a number, the whole text under the
    table (in the HTML also the cell's tooltip); a short message stays whole in its cell."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        long_one = with_error("13.0", "svd/gesvd/fp32/1024/manual_time", LONG_MESSAGE, cls.dir.name)
        short_one = with_error("12.4", "svd/gesvd/fp32/2048/manual_time",
                               "svd/gesvd/fp32/2048: wrong result, not timed", cls.dir.name)
        stem = os.path.join(cls.dir.name, "r")
        r = run_report("--out", stem, f"11.8={fixture('11.8')}", f"12.4={short_one}", f"13.0={long_one}")
        assert r.returncode == 0, r.stderr
        with open(stem + ".md", encoding="utf-8") as f:
            cls.md = f.read()
        with open(stem + ".html", encoding="utf-8") as f:
            cls.html = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def svd_section(self):
        return self.md.split("### svd:")[1].split("\n### ")[0]

    def test_the_cell_is_short_and_the_note_under_the_table_whole(self):
        svd = self.svd_section()
        row = next(line for line in svd.splitlines() if line.startswith("| `gesvd/fp32/1024` |"))
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        self.assertEqual(cells[3], "inaccurate here, reported, not timed [1]")
        self.assertLess(max(len(c) for c in cells), 45)
        table_end = svd.rindex("\n| ")
        self.assertIn("\n\n[1] 13.0: " + LONG_MESSAGE.replace("*", "\\*") + "\n", svd[table_end:])
        self.assertEqual(svd.count("[1]"), 2)  # the cell and its note

    def test_a_short_message_stays_whole_without_a_note(self):
        svd = self.svd_section()
        row = next(line for line in svd.splitlines() if line.startswith("| `gesvd/fp32/2048` |"))
        self.assertEqual([c.strip() for c in row.strip("|").split(" | ")][2], "wrong result, not timed")
        self.assertNotIn("[2]", svd)

    def test_html_tooltip_and_note(self):
        import html as html_module
        whole = html_module.escape("13.0: " + LONG_MESSAGE)
        self.assertIn(f'<span class="folded" title="{whole}">inaccurate here, reported, not timed [1]</span>',
                      self.html)
        self.assertIn(f'</table>\n<p class="note">[1] {whole}</p>', self.html)
        ElementTree.fromstring(self.html[len("<!DOCTYPE html>\n"):])  # still well-formed

    def test_how_to_read_says_what_the_number_is(self):
        self.assertIn("[1] after a cell's words: the row's message, whole under the table.", self.md)

    def test_short_forms(self):
        from cubench_tools import report_rows
        self.assertEqual(report_rows.short_message("not run: needs 15.2 GiB of device memory; 14.0 GiB free of "
                                              "16.0 GiB (--cubench_memory_limit)"),
                         "not run: needs 15.2 GiB of device memory")
        self.assertEqual(report_rows.short_message("PyTorch's allocator: CUDA out of memory. Tried to allocate "
                                              "2.00 GiB. GPU 0 has a total capacity of 139.80 GiB"),
                         "PyTorch's allocator: CUDA out of memory")
        self.assertEqual(report_rows.short_message("a first clause far longer than any cell should be made to hold"),
                         "a first clause far longer than any...")
        self.assertLessEqual(len(report_rows.short_message("x" * 100)), report_rows.SHORT_MESSAGE)


class BuildFieldsExplained(unittest.TestCase):
    """The versions table says what cuda_architectures and google_benchmark mean, and that two
    spellings of one architecture are the same GPU code."""

    def test_the_fields_that_puzzle_say_what_they_are(self):
        values = {"11.8": ("90", "1.7.1"), "12.4": ("90", "1.7.1"), "13.0": ("native (90)", "1.8.3")}
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for t, (archs, gb) in values.items():
                with open(fixture(t)) as f:
                    doc = json.load(f)
                doc["context"].update(cuda_architectures=archs, google_benchmark=gb)
                paths.append(f"{t}={os.path.join(d, t + '.json')}")
                with open(os.path.join(d, t + ".json"), "w") as f:
                    json.dump(doc, f)
            r = run_report("--out", os.path.join(d, "r"), *paths)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "r.md")) as f:
                md = f.read()
        [archs] = [line for line in md.splitlines() if line.startswith("| `cuda_architectures` |")]
        self.assertIn("| 90 | 90 | native (90) | yes | the GPU code the build holds (CMAKE_CUDA_ARCHITECTURES); "
                      "90: named at configure (-DCMAKE_CUDA_ARCHITECTURES or CUDAARCHS): sm_90 code; native "
                      "(90): configure saw the machine's GPU and built for it alone (sm_90); every build holds "
                      "sm_90 code: the same, written differently |", archs)
        [gb] = [line for line in md.splitlines() if line.startswith("| `google_benchmark` |")]
        self.assertIn("the times are cubench's own (manual time, which cubench measures itself), so its version "
                      "does not enter them; the versions differ because each build took the one of the system "
                      "it was configured on |", gb)

    def test_off_and_lists(self):
        from cubench_tools import report_context
        self.assertIn("OFF: CMake passed no architecture flags, so the file does not say which GPU code the "
                      "build holds", report_context.field_meaning("cuda_architectures", ["OFF", "90"]))
        self.assertNotIn("the same", report_context.field_meaning("cuda_architectures", ["OFF", "90"]))
        self.assertIn("(sm_75, sm_80, sm_90)", report_context.field_meaning("cuda_architectures", ["75-real;80-real;90"]))
        self.assertNotIn("the same", report_context.field_meaning("cuda_architectures", ["75-real;80-real;90", "native (90)"]))


@contextlib.contextmanager
def captured_figures():
    """{chart file: (figure, its panels)} of every chart tools/plot saves while inside, laid out
    as saved."""
    from cubench_tools import chart_drawing
    figures, saved = {}, chart_drawing.save

    def keep(plt, fig, axes, n, title, path):
        out = saved(plt, fig, axes, n, title, path)
        figures[os.path.basename(path)] = (fig, list(axes.flat)[:n])
        return out
    chart_drawing.save = keep
    try:
        yield figures
    finally:
        chart_drawing.save = saved


def gemm_result(shape, tflops, pct_peak=None):
    """A bf16 gemm row of shape "m/n/k", as results.load gives it: its family and axis values."""
    m, n, k = map(int, shape.split("/"))
    r = result((100, 101, 99, 100.5))
    r.name = r.run_name = f"gemm/bf16/{shape}/manual_time"
    r.family, r.axis_values = "gemm", {"dtype": "bf16", "m": m, "n": n, "k": k}
    r.counters = {"TFLOPS": [tflops] * 4}
    if pct_peak:
        r.counters["pct_peak"] = [pct_peak] * 4
    return r


class GemmEveryShape(unittest.TestCase):
    """gemm.png draws every shape: m = n = k as lines, the others (8192x11008x4096) as hollow
    markers at (m*n*k)^(1/3), each named; the datasheet peak's label and the one legend apart."""

    SHAPES = ("1024/1024/1024", "4096/4096/4096", "8192/11008/4096")

    def loaded(self):
        files = []
        for label, scale in (("11.8", 1.0), ("13.0", 1.1)):
            rows = {}
            for shape in self.SHAPES:
                r = gemm_result(shape, 700 * scale, pct_peak=70 * scale)  # a 1000 TFLOP/s peak
                rows[r.name] = r
            files.append((label, {}, rows))
        return files

    def test_every_shape_is_in_the_charts_data(self):
        from cubench_tools import family_charts
        squares, others = family_charts.gemm_points(self.loaded())
        self.assertEqual({label: sorted(x for x, _, _ in pts) for label, pts in squares["gemm bf16"].items()},
                         {"11.8": [1024, 4096], "13.0": [1024, 4096]})
        [(x, y, _, name)] = others["gemm bf16"]["13.0"]
        self.assertEqual(name, "8192x11008x4096")
        self.assertAlmostEqual(x, (8192 * 11008 * 4096) ** (1 / 3))
        self.assertAlmostEqual(y, 770)

    def test_drawn_named_and_nothing_covers_a_label(self):
        from cubench_tools import family_charts
        with tempfile.TemporaryDirectory() as out, captured_figures() as figures:
            [chart] = family_charts.gemm(self.loaded(), out)[0]
            chart()
        fig, [ax] = figures["gemm.png"]
        xs = sorted(float(x) for c in ax.containers for x in c.lines[0].get_xdata())
        self.assertEqual(len(xs), 6)  # 3 shapes x 2 files
        self.assertEqual(sorted(t.get_text() for t in ax.texts), ["8192x11008x4096", "datasheet peak 1000 TFLOP/s"])
        self.assertIn("hollow: (m*n*k)^(1/3)", ax.get_xlabel())
        assert_laid_out(self, fig, [ax])
        [legend] = fig.legends
        self.assertEqual([t.get_text() for t in legend.get_texts()],
                         ["11.8", "13.0", "hollow: m, n, k not all equal (named), at (m*n*k)^(1/3)"])

    def test_square_shapes_alone_keep_the_square_chart(self):
        from cubench_tools import family_charts
        loaded = [(label, ctx, {n: r for n, r in rows.items() if "11008" not in n}) for label, ctx, rows in self.loaded()]
        self.assertEqual(family_charts.gemm_points(loaded)[1], {})
        with tempfile.TemporaryDirectory() as out, captured_figures() as figures:
            family_charts.gemm(loaded, out)[0][0]()
        fig, [ax] = figures["gemm.png"]
        self.assertEqual(ax.get_xlabel(), "n (m = n = k)")
        self.assertEqual([t.get_text() for t in fig.texts], ["GEMM (cuBLASLt), square sizes"])


# Pixels a panel's label keeps from the panel's frame: one touching it reads as clipped.
LABEL_CLEARANCE = 4


def assert_laid_out(test, fig, axes):
    """Nothing of the chart clipped or covered: the title inside the figure, the legend under it
    and over no panel, each panel's labels (a reference line's, a point's name) inside it."""
    # A figure made without pyplot has a bare canvas under newer matplotlib (the GPU machine's):
    # Agg's lays it out as the saved chart is.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    renderer = (fig.canvas if hasattr(fig.canvas, "get_renderer") else FigureCanvasAgg(fig)).get_renderer()
    figure_box = fig.bbox
    [title] = fig.texts
    title_box = title.get_window_extent(renderer)
    test.assertTrue(figure_box.x0 <= title_box.x0 and title_box.x1 <= figure_box.x1
                    and title_box.y1 <= figure_box.y1, "the title is wider or higher than the chart")
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        test.assertFalse(box.overlaps(title_box), "the legend covers the title")
        for ax in axes:
            test.assertFalse(box.overlaps(ax.get_window_extent(renderer)), f"the legend covers {ax.get_title()}")
    test.assertEqual(len(fig.legends), 1, "one legend for the chart's panels")
    for ax in axes:
        panel = ax.get_window_extent(renderer)
        own_legend = ax.get_legend()
        for text in ax.texts:
            box = text.get_window_extent(renderer)
            inside = panel.padded(-LABEL_CLEARANCE)
            test.assertTrue(inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1,
                            f"{text.get_text()!r} sticks out of {ax.get_title()} or touches its frame")
            test.assertFalse(own_legend and own_legend.get_window_extent(renderer).overlaps(box),
                             f"{ax.get_title()}'s legend covers {text.get_text()!r}")


class ReportCharts(unittest.TestCase):
    """The report's charts of its fixtures: every timed row is a point of one (allreduce's rows of
    one GPU left out, with a note), and none has its title, legend or labels clipped or covered."""

    def test_every_timed_row_is_drawn_and_laid_out(self):
        from cubench_tools import family_charts
        from cubench_tools import results
        loaded = [(t,) + results.load(fixture(t)) for t in TOOLKITS]
        with tempfile.TemporaryDirectory() as out, captured_figures() as figures:
            charts, notes = family_charts.charts_for(loaded, out)
            for chart in charts:
                chart()
        self.assertEqual(sorted(figures), ["gemm.png", "sigmoid.png", "startup_cuda.png", "svd.png"])
        drawn = 0
        for fig, axes in figures.values():
            assert_laid_out(self, fig, axes)
            for ax in axes:
                for c in ax.containers:
                    if not c.get_label().startswith("_") or ": " in c.get_label():  # not a bar's error bars
                        drawn += len(c.patches) if hasattr(c, "patches") else len(c.lines[0].get_xdata())
        timed = sum(1 for _, _, rows in loaded for n, r in rows.items()
                    if r.measured() and not n.startswith("allreduce/"))
        self.assertEqual(drawn, timed)
        self.assertEqual(len(notes), 1)
        self.assertTrue(notes[0].startswith("allreduce: left out 2 one-GPU benchmark(s)"), notes)


class TagBalance(html.parser.HTMLParser):
    """Every element closed in the order opened (void elements written <x/>)."""

    def __init__(self):
        super().__init__()
        self.open, self.faults, self.images = [], [], []

    def handle_starttag(self, tag, attrs):
        self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))

    def handle_endtag(self, tag):
        if not self.open or self.open.pop() != tag:
            self.faults.append(tag)


class HtmlPage(Rendered):
    def test_well_formed(self):
        self.assertTrue(self.html.startswith("<!DOCTYPE html>\n<html lang=\"en\">"))
        ElementTree.fromstring(self.html[len("<!DOCTYPE html>\n"):])  # raises unless well-formed XML
        parser = TagBalance()
        parser.feed(self.html)
        self.assertEqual((parser.open, parser.faults), ([], []))

    def test_self_contained(self):
        parser = TagBalance()
        parser.feed(self.html)
        self.assertEqual(len(parser.images), 5)  # every row's speed-up; gemm, svd, sigmoid, startup/cuda
        for image in parser.images:
            self.assertTrue(image["src"].startswith("data:image/png;base64,"), image["src"][:40])
            png = base64.b64decode(image["src"].split(",", 1)[1])
            self.assertTrue(png.startswith(b"\x89PNG\r\n\x1a\n"))
        for outside in ("<link", "<script", "href=", "url(", "@import", "http://", "https://"):
            self.assertNotIn(outside, self.html)
        self.assertIn("<style>", self.html)

    def test_the_answer_first_the_rest_folded(self):
        """The first screen: each build counted, its pick, one chart of every row; then the
        families' sentences; every other section folded under a summary."""
        body = self.html.split("<body>")[1]
        first_fold = body.index("<details>")
        for text in ("against 11.8: faster in", "every row&#x27;s speed-up against the base", "<h2>Verdicts</h2>"):
            self.assertLess(body.index(text), first_fold, text)
        after = body[body.index("</ul>", body.index("<h2>Verdicts</h2>")):]
        self.assertEqual(re.sub(r"<details>.*?</details>", "", after, flags=re.S).split(),
                         ["</ul>", "</body>", "</html>"])  # nothing unfolded after the sentences
        for summary in ("How to read this page", "Rows: each family", "The GPU&#x27;s conditions",
                        "Kernels that changed", "Commands"):
            self.assertIn(f"<details><summary>{summary}", body)

    def test_holds_what_the_markdown_holds(self):
        for text in ("Not built, not run", "The GPU&#x27;s conditions", "Kernels that changed",
                     "Cost: start-up and memory", "Commands", "Libraries and build",
                     '<span class="faster">faster</span>', '<span class="slower">slower !</span>',
                     '<td class="num">not built</td>'):
            self.assertIn(text, self.html)

    def test_markdown_charts_lie_beside_it(self):
        links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", self.md)
        self.assertEqual(sorted(links), ["report-charts/every-row.png", "report-charts/gemm.png",
                                         "report-charts/sigmoid.png", "report-charts/startup_cuda.png",
                                         "report-charts/svd.png"])
        for link in links:
            self.assertTrue(os.path.isfile(os.path.join(self.dir.name, link)), link)
        self.assertIn("Not drawn: allreduce: left out 2 one-GPU benchmark(s)", self.md)


class OneProcess(unittest.TestCase):
    """A build whose file is one process, one repetition per row (cubench's default run): its rows
    are judged by the one-process rule against the base's processes; a row of one sample is too
    noisy to tell and says why, a row with its samples' spread is called where the rule allows,
    and nothing is claimed significant."""

    def render(self, **counters):
        """The page of 11.8 against 13.0's fixture cut to its first process, each row given
        counters."""
        with tempfile.TemporaryDirectory() as d:
            with open(fixture("13.0")) as f:
                doc = json.load(f)
            doc["benchmarks"] = [dict(row, repetitions=1, **counters) for row in doc["benchmarks"]
                                 if row["repetition_index"] == 0]
            del doc["context"]["processes"], doc["context"]["process_dates"]
            single = os.path.join(d, "single.json")
            with open(single, "w") as f:
                json.dump(doc, f)
            r = run_report("--out", os.path.join(d, "r"), f"11.8={fixture('11.8')}", f"13.0={single}")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "r.md")) as f:
                return f.read()

    def test_rows_of_one_sample_are_too_noisy_to_tell_not_claimed(self):
        md = self.render()  # the fixture's rows carry no samples counter: one sample each
        self.assertEqual(md.split("\n\n")[1:3], [
            "**13.0** against 11.8: faster in 0 of 9 rows, slower in none, the same in 2, too noisy to tell in 7; "
            "not compared: allreduce.",
            "No reason to switch to 13.0 that these files can show: 7 of 9 rows are too noisy to tell; run more "
            "processes per build (tools/run-matrix) to decide."])
        self.assertIn("- **svd**: 13.0 gained nothing at svd that the samples can show (3 of 4 rows too noisy "
                      "to tell).", md)
        self.assertIn("| `gesvd/fp32/512` | 94.03 ms | 44.5 ms | 2.11x | too noisy to tell | one process a side: "
                      "one sample: run more |", md)
        self.assertIn("| `gesvdj/fp32/1024` | 53.83 ms | 53.75 ms | 1.00x | same | one process a side |", md)
        self.assertNotRegex(md, r"rows? significant")
        reading = md.split("## How to read this page\n\n")[1].split("\n\n## ")[0]
        self.assertIn("- faster / slower: one process a side: a change of at least 10% either way and 2x either "
                      "row's sample spread, the 95% intervals apart; 15% more per side whose row is host-paced "
                      "or chosen per process;", reading)
        self.assertIn("- one process: run more: a side is one process", reading)
        self.assertIn("- **13.0**: `", md)
        self.assertIn("CUDA 13.0 (cuBLAS 13.1.0); one process, one repetition: no significance test", md)

    def test_rows_with_their_samples_spread_are_called_not_significant(self):
        md = self.render(samples=500.0, sample_cv=0.005, time_ci_pct=0.2)
        self.assertEqual(md.split("\n\n")[1:3], [
            "**13.0** against 11.8: faster in 7 of 9 rows (1.11-3.31x), slower in none, the same in 2, too noisy "
            "to tell in 0; not compared: allreduce.",
            "Pick 13.0 over 11.8: faster in 7 rows and slower in none."])
        self.assertIn("- **svd**: 13.0 is 2.1-3.3x faster than 11.8 at svd (3 of 4 rows called).", md)
        self.assertIn("| `gesvd/fp32/512` | 94.03 ms | 44.5 ms | 2.11x | faster | one process a side |", md)
        # 1.11x: -9.6% of the base's time, but 10.6% of the other's; the threshold is on the log
        # ratio (ln 1.10 either way), so it is called as 11.42 -> 12.63 (+10.6%) would be
        self.assertIn("| `bf16/1024/1024/1024` | 12.63 us | 11.42 us | 1.11x | faster | one process a side |", md)
        self.assertNotRegex(md, r"rows? significant")


class TorchBuilds(unittest.TestCase):
    """Files of LibTorch builds, as tools/run-matrix --torch writes them (13.0's fixture given
    their contexts): each build named by its PyTorch, a run without a GPU titled by the CPU,
    and two builds of one install said to be an A/A, first."""

    DEBIAN = {"libtorch": "1.13.1", "libtorch_cuda": "no (CPU-only LibTorch)", "torch_version": "1.13.1",
              "torch_dir": "/usr/lib/x86_64-linux-gnu/cmake/Torch",
              "gpu": "none (no NVIDIA driver on this machine (no /dev/nvidiactl, no libcuda.so.1))"}

    def render(self, *contexts):
        """The page of the builds a, b, ... (13.0's fixture, each with its context's fields added)."""
        with tempfile.TemporaryDirectory() as d:
            specs = []
            for label, context in zip("abc", contexts):
                with open(fixture("13.0")) as f:
                    doc = json.load(f)
                doc["context"].update(context, date=f"2026-12-0{len(specs) + 1}")
                path = os.path.join(d, f"{label}.json")
                with open(path, "w") as f:
                    json.dump(doc, f)
                specs.append(f"{label}={path}")
            r = run_report("--out", os.path.join(d, "r"), *specs)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "r.md")) as f:
                return f.read()

    def test_each_build_is_named_by_its_pytorch(self):
        md = self.render({"libtorch": "2.5.1", "libtorch_cuda": "yes", "libtorch_cudnn": "90100",
                          "cublas": "12.4.5", "torch_version": "2.5.1+cu124", "torch_cuda": "12.4"},
                         {"libtorch": "2.6.0", "libtorch_cuda": "yes", "libtorch_cudnn": "90501",
                          "cublas": "12.6.4", "torch_version": "2.6.0+cu126", "torch_cuda": "12.6"})
        self.assertIn(": LibTorch 2.5.1+cu124 (CUDA 12.4, cuDNN 9.1.0, cuBLAS 12.4.5); 4 processes", md)
        self.assertIn(": LibTorch 2.6.0+cu126 (CUDA 12.6, cuDNN 9.5.1, cuBLAS 12.6.4); 4 processes", md)
        self.assertNotIn("CUDA 13.0 (cuBLAS", md)  # the toolkit cubench's own file names
        self.assertNotIn("Warning:", md)  # two installs

    def test_a_run_without_a_gpu_is_titled_by_the_cpu(self):
        md = self.render(self.DEBIAN, self.DEBIAN)
        self.assertEqual(md.splitlines()[0], "# cubench report: a, b on the CPU (no GPU)")
        self.assertIn("| GPU | the CPU (no GPU: no NVIDIA driver on this machine (no /dev/nvidiactl, no "
                      "libcuda.so.1)) |", md)
        self.assertIn(": LibTorch 1.13.1 (CPU only); 4 processes", md)
        cpu = dict(self.DEBIAN, cpu_model="AMD EPYC 9654 96-Core Processor")
        named = self.render(cpu, cpu)
        self.assertEqual(named.splitlines()[0],
                         "# cubench report: a, b on the CPU, AMD EPYC 9654 96-Core Processor (no GPU)")

    def test_two_builds_of_one_install_are_said_to_be_an_aa_first(self):
        md = self.render(self.DEBIAN, self.DEBIAN, dict(self.DEBIAN, torch_dir="/opt/libtorch"))
        self.assertEqual(md.split("\n\n")[1], (
            "**Warning:** a and b are one PyTorch install (torch 1.13.1, Torch_DIR "
            "/usr/lib/x86_64-linux-gnu/cmake/Torch): this comparison is an A/A, the install against itself, "
            "not two PyTorch builds; a difference between them is noise."))
        self.assertEqual(md.count("Warning:"), 1)  # c is another install


class ModeLines(unittest.TestCase):
    """A LibTorch family's rows in eager, graph and compiled mode: under each build's count, the
    count again per mode ("compiled, b against a: ..."), so an upgrade that speeds up compiled
    models alone is seen as that."""

    def write(self, folder, label, compiled_time):
        """13.0's fixture with llama_decode's rows (eager, graph, compiled at batch 1 and 8; four
        processes), the compiled ones taking compiled_time us and the others 100 us."""
        with open(fixture("13.0")) as f:
            doc = json.load(f)
        schema = json.loads(doc["context"]["cubench_schema"])
        schema["families"]["llama_decode"] = {
            "description": "greedy generation", "main_counter": "", "size_axis": "batch",
            "timer": "cuda_events", "counters": [], "library": "torch",
            "axes": [{"name": "dtype", "kind": "dtype"}, {"name": "mode", "kind": "string"},
                     {"name": "batch", "kind": "int"}]}
        doc["context"]["cubench_schema"] = json.dumps(schema)
        for mode in ("eager", "graph", "compiled"):
            for batch in (1, 8):
                name = f"llama_decode/bf16/{mode}/{batch}/manual_time"
                for i in range(4):
                    t = (compiled_time if mode == "compiled" else 100.0) * (1 + 0.001 * i)
                    doc["benchmarks"].append({"name": name, "repetitions": 4, "repetition_index": i,
                                              "real_time": t, "time_unit": "us", "sm_clock_MHz": 1500})
        path = os.path.join(folder, f"{label}.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return f"{label}={path}"

    def test_each_mode_counted_under_the_builds_count(self):
        with tempfile.TemporaryDirectory() as d:
            r = run_report("--out", os.path.join(d, "r"), self.write(d, "a", 100.0),
                           self.write(d, "b", 80.0))
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "r.md")) as f:
                md = f.read()
        first = md.split("\n\n")[1:4]
        self.assertTrue(first[0].startswith("**b** against a: faster in 2 of 16 rows (1.25x)"), first[0])
        self.assertEqual(first[1].splitlines(), [
            "- eager, b against a: faster in 0 of 2 rows, slower in none, the same in 2, too noisy to tell in 0",
            "- graph, b against a: faster in 0 of 2 rows, slower in none, the same in 2, too noisy to tell in 0",
            "- compiled, b against a: faster in 2 of 2 rows (1.25x), slower in none, the same in 0, too noisy "
            "to tell in 0"])

    def test_each_step_of_three_builds_too(self):
        with tempfile.TemporaryDirectory() as d:
            r = run_report("--out", os.path.join(d, "r"), self.write(d, "a", 100.0),
                           self.write(d, "b", 100.0), self.write(d, "c", 80.0))
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "r.md")) as f:
                md = f.read()
        # c against a (its first line), then c against b (the step a user of b weighs)
        self.assertEqual(md.count("- compiled, c against a: faster in 2 of 2 rows (1.25x)"), 1)
        self.assertEqual(md.count("- compiled, c against b: faster in 2 of 2 rows (1.25x)"), 1)
        self.assertEqual(md.count("- compiled, b against a: faster in 0 of 2 rows"), 1)

    def test_rows_of_one_mode_get_no_lines(self):
        with tempfile.TemporaryDirectory() as d:
            r = run_report("--out", os.path.join(d, "r"), f"a={fixture('11.8')}", f"b={fixture('13.0')}")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "r.md")) as f:
                md = f.read()
        self.assertNotIn("- eager, ", md)
        self.assertNotIn("- compiled, ", md)


class Trend(unittest.TestCase):
    """--history: the compared rows across a tools/history database's runs, a chart per family;
    a database that is not one is one line before any work."""

    def test_a_trend_chart_per_family_from_the_history(self):
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "history.sqlite")
            for t in TOOLKITS:
                r = subprocess.run([sys.executable, os.path.join(TOOLS, "history.py"), "add",
                                    "--db", db, fixture(t)], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
            stem = os.path.join(d, "report")
            r = run_report("--out", stem, "--history", db, *labelled("11.8", "13.0"))
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(stem + ".md", encoding="utf-8") as f:
                md = f.read()
            self.assertIn("## Trend: the history's runs", md)
            self.assertRegex(md, r"over 3 runs on ")
            trends = [n for n in os.listdir(stem + "-charts") if n.startswith("trend-")]
            self.assertTrue(trends, os.listdir(stem + "-charts"))
            self.assertIn(f"report-charts/{trends[0]}", md)

    def test_a_bad_history_is_one_line_and_nothing_written(self):
        with tempfile.TemporaryDirectory() as d:
            r = run_report("--out", os.path.join(d, "r"), "--history", os.path.join(d, "none.sqlite"),
                           *labelled("11.8", "13.0"))
            assert_one_line_error(self, r, ".*none.sqlite: no such history")
            self.assertEqual(os.listdir(d), [])


V3 = os.path.join(DATA, "v3")  # version-3 files, made by tests/data/v3/make_v3.py


class VersionThree(unittest.TestCase):
    """Version-3 files: the report reads each row's family, status and notes from its "cubench"
    object. The fixtures converted give the page their originals give; rows skipped (not run,
    not supported) are listed with their reasons, not counted failed; a row named like another
    family, or whose label names a decoy kernel, reports by its object."""

    def render(self, folder, *specs):
        stem = os.path.join(folder, "report")
        r = run_report("--out", stem, *specs)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(stem + ".md", encoding="utf-8") as f:
            return f.read()

    def test_the_converted_fixtures_give_the_same_page(self):
        with tempfile.TemporaryDirectory() as old, tempfile.TemporaryDirectory() as new:
            before = self.render(old, *labelled())
            after = self.render(new, *[f"{t}={os.path.join(V3, 'report', f'cuda-{t}.json')}" for t in TOOLKITS])
            self.assertEqual(after.replace(new, old).replace(os.path.join(V3, "report"), FIXTURES), before)
            self.assertEqual(sorted(os.listdir(os.path.join(new, "report-charts"))),
                             sorted(os.listdir(os.path.join(old, "report-charts"))))

    def test_skips_rows_and_kernels_by_the_cubench_object(self):
        with tempfile.TemporaryDirectory() as d:
            md = self.render(d, f"12.4={os.path.join(V3, 'run-a.json')}", f"13.0={os.path.join(V3, 'run-b.json')}")
        self.assertIn("- **13.0**: not run: `gemm/bf16/16384/16384/16384`: needs 3.0 GiB of device memory; "
                      "1.2 GiB free of 80.0 GiB", md)
        for build in ("12.4", "13.0"):
            self.assertIn(f"- **{build}**: not supported: `gemm/fp8/1024/1024/1024`: fp8 needs compute "
                          "capability 8.9; this GPU is 8.0", md)
        self.assertNotIn("fail", md.lower())
        gemm = md.split("### gemm:")[1].split("\n### ")[0]
        # 1.10x in one process a side, in a row that says it is host-paced: not called (the
        # one-process rule); in gemm's table by its object
        self.assertIn("| `bf16/2048/2048/2048/splitk` | 95 us | 86 us | 1.10x | too noisy to tell | one process a "
                      "side: one process, host-paced (runs not queued ahead of the GPU, noise never settled): run "
                      "more |", gemm)
        self.assertIn("| `bf16/16384/16384/16384` | 11 ms | not run: needs 3.0 GiB of device memory [1] |", gemm)
        autotune = md.split("### gemm_autotune:")[1].split("\n### ")[0]
        self.assertIn("| `gemm/fp8/4096/4096/4096` | 300 us | 290 us |", autotune)
        kernels = md.split("## Kernels that changed")[1].split("\n## ")[0]
        self.assertIn("| `gemm/bf16/1024/1024/1024` | 13.0 | faster (1.11x) |", kernels)
        self.assertNotIn("splitk", kernels)  # its label's decoy kernels differ; its kernels note does not


class PowerOverTheLimit(unittest.TestCase):
    """A board power reading over the card's limit is said to be an old reader's figure, not shown
    as if measured (files from before the energy counter was read at its update boundaries)."""

    def build(self, watts, limit="700"):
        from cubench_tools import results as res
        rows = {}
        for k, w in enumerate(watts):
            r = res.Result(f"gemm/r{k}/manual_time")
            r.times, r.counters = [1.0], {"power_W": [w]}
            rows[r.name] = r
        return type("Build", (), {"results": rows, "context": {"gpu_power_limit_W": limit}})()

    def test_969_w_on_a_700_w_card(self):
        from cubench_tools import report_conditions
        text = report_conditions.power_text(self.build([650.0, 969.0]))
        self.assertEqual(text, "median 810 W, highest 969 W; 1 row(s) over the card's 700 W limit: not readings, "
                               "figures of an old reader of the energy counter (before it was read at its "
                               "update boundaries)")
        self.assertEqual(report_conditions.power_text(self.build([650.0, 710.0])), "median 680 W, highest 710 W")
        self.assertEqual(report_conditions.power_text(self.build([969.0], limit="")), "median 969 W, highest 969 W")


class EveryRowChart(unittest.TestCase):
    def test_log_axis_factor_ticks_and_legible_text(self):
        from cubench_tools import ratio_chart, verdicts
        from cubench_tools import results as res
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        drawn = {}
        real_savefig = matplotlib.figure.Figure.savefig
        def keep(fig, path, *a, **k):
            drawn["fig"] = fig
            return real_savefig(fig, path, *a, **k)
        rows = []
        for k, (t, word) in enumerate(((50.0, verdicts.FASTER), (100.0, verdicts.SAME), (400.0, verdicts.SLOWER))):
            b, o = res.Result(f"svd/{k}"), res.Result(f"svd/{k}")
            b.times, o.times = [100.0, 101.0, 99.0, 100.5], [t, t * 1.01, t * 0.99, t]
            rows.append((b.name, 1, b, o, verdicts.Verdict(t / 100 - 1, word)))
        with tempfile.TemporaryDirectory() as d:
            matplotlib.figure.Figure.savefig = keep
            try:
                ratio_chart.draw(os.path.join(d, "every-row.png"), rows, {1: "13.0"}, {n: "svd" for n, *_ in rows})
            finally:
                matplotlib.figure.Figure.savefig = real_savefig
        ax = drawn["fig"].axes[0]
        self.assertEqual(ax.get_yscale(), "log")
        self.assertIn("0.25x", [t.get_text() for t in ax.get_yticklabels()])
        texts = [t for t in drawn["fig"].findobj(matplotlib.text.Text) if t.get_text()]
        self.assertGreaterEqual(min(t.get_fontsize() for t in texts), 10)  # 10 pt at 100 dpi: 13 px
        plt.close("all")


class BadInput(unittest.TestCase):
    """One line on stderr, exit status 2, and nothing written."""

    def check(self, args, pattern, out_name="r"):
        with tempfile.TemporaryDirectory() as d:
            r = run_report("--out", os.path.join(d, out_name), *args)
            assert_one_line_error(self, r, pattern)
            self.assertEqual(os.listdir(d), [])

    def test_each_fault_is_named(self):
        bad = os.path.join(DATA, "bad")
        cases = (
            ([fixture("11.8")], r"needs two result files or more, one per build \(the base first\), got 1$"),
            ([fixture("11.8"), "no-such.json"], "no-such.json: cannot read: No such file or directory$"),
            ([fixture("11.8"), os.path.join(bad, "not-json.json")], ".*not-json.json: not JSON"),
            ([fixture("11.8"), os.path.join(DATA, "not-gbench.json")], ".*not-gbench.json: not Google Benchmark output"),
            ([fixture("11.8"), os.path.join(bad, "aggregates-only.json")], ".*aggregates-only.json: no benchmark results"),
            ([f"={fixture('11.8')}", fixture("13.0")], "'=.*cuda-11.8.json': want LABEL=RESULT.json"),
            ([f"a={fixture('11.8')}", f"a={fixture('13.0')}"], "two files are labelled 'a': a label names one build$"),
            ([fixture("11.8"), os.path.join(DATA, "nothing-in-common.json")],
             "no benchmark of .*cuda-11.8.json is in the other files"),
            ([fixture("11.8"), fixture("13.0"), "--alpha", "5"], "--alpha wants a significance level between 0 and 1"),
            ([fixture("11.8"), fixture("13.0"), "--filter", "^nothing/"], "--filter '\\^nothing/' matches no benchmark"),
        )
        for args, pattern in cases:
            with self.subTest(args=args):
                self.check(args, pattern)

    def test_out_is_checked_before_the_work(self):
        r = run_report("--out", "/no/such/dir/report", *labelled("11.8", "13.0"))
        assert_one_line_error(self, r, "--out /no/such/dir/report.md: its directory /no/such/dir does not exist$")
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "r.md"))
            r = run_report("--out", os.path.join(d, "r"), *labelled("11.8", "13.0"))
            assert_one_line_error(self, r, "--out .*r.md: is a directory; name a file$")
            self.assertEqual(os.listdir(d), ["r.md"])

    def test_a_bad_not_run_field(self):
        for value, expect in (("[", 'context "not_run" is not JSON'),
                              ('[{"family": 3}]', 'context "not_run" is not a list of'),
                              ({"family": "gemm"}, 'context "not_run" is not a list of')):
            with self.subTest(value=value), tempfile.TemporaryDirectory() as d:
                with open(fixture("13.0")) as f:
                    doc = json.load(f)
                doc["context"]["not_run"] = value
                path = os.path.join(d, "bad.json")
                with open(path, "w") as f:
                    json.dump(doc, f)
                r = run_report("--out", os.path.join(d, "r"), fixture("11.8"), path)
                assert_one_line_error(self, r, re.escape(f"{path}: {expect}"))
                self.assertEqual(os.listdir(d), ["bad.json"])


class RunMatrixEndsWithTheReport(unittest.TestCase):
    """run-matrix's end, with its builds and runs stood in for: the merged files record the
    command, the report is written from them, its path and the wall time are the last lines."""

    def test_report_after_the_merges(self):
        from cubench_tools import run_matrix

        def fake_run(binary, args, out_path, what):  # a "process": the fixture of its toolkit
            toolkit = os.path.basename(os.path.dirname(binary))[len("cuda-"):]
            with open(fixture(toolkit)) as f:
                doc = json.load(f)
            del doc["context"]["command_line"]
            doc["context"]["date"] += f" ({os.path.basename(out_path)})"  # processes differ: no copy merged
            with open(out_path, "w") as f:
                json.dump(doc, f)
            return 0

        with tempfile.TemporaryDirectory() as d:
            err = io.StringIO()
            saved = run_matrix.build_all, run_matrix.run_suite, run_matrix.toolkit_presets, run_matrix.find_gpus
            run_matrix.build_all = lambda names, clock, build_root: (list(names), [])
            run_matrix.run_suite = fake_run
            run_matrix.toolkit_presets = lambda: [(n, "nvcc", True) for n in ("cuda-13.0", "cuda-11.8")]
            run_matrix.find_gpus = lambda: (["GPU 0: stood in"], "")
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    code = run_matrix.main(["--presets", "cuda-11.8,cuda-13.0", "--processes", "2",
                                            "--out-dir", d, "--kernels", "--build-dir", os.path.join(d, "b")])
            finally:
                (run_matrix.build_all, run_matrix.run_suite, run_matrix.toolkit_presets,
                 run_matrix.find_gpus) = saved
            lines = err.getvalue().splitlines()
            self.assertEqual(code, 0, err.getvalue())
            stem = os.path.join(d, "report")
            self.assertEqual(lines[-2], f"[run-matrix] report: {stem}.html (and {stem}.md)")
            self.assertRegex(lines[-1], r"^\[run-matrix\] \d+ s in all \(build 0 s, runs \d+ s\)$")
            with open(os.path.join(d, "cuda-13.0.json")) as f:
                command = json.load(f)["context"]["command_line"]
            binary = os.path.join(d, "b", "cuda-13.0", "cubench")  # run-matrix's own build folder
            self.assertTrue(command.startswith(f"{binary} --benchmark_filter=. --benchmark_repetitions=1 "
                                               f"--benchmark_out={os.path.join(d, 'cuda-13.0.process-1.json')} "),
                            command)
            self.assertTrue(command.endswith(" --cubench_kernels=on"), command)
            with open(stem + ".md") as f:
                md = f.read()
            self.assertIn(f"```text\n{command}\n```", md)
            self.assertIn("- **svd**: cuda-13.0 ", md)  # labelled by preset
            self.assertTrue(os.path.isfile(stem + ".html"))

    def test_one_process_files_get_the_command_too(self):
        from cubench_tools import run_matrix
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cuda-13.0.json")
            shutil.copy(fixture("13.0"), path)
            run_matrix.record_command(path, "build/cuda-13.0/cubench --benchmark_filter=gemm")
            with open(path) as f:
                doc = json.load(f)
            self.assertEqual(doc["context"]["command_line"], "build/cuda-13.0/cubench --benchmark_filter=gemm")
            self.assertEqual(len(doc["benchmarks"]), 40)

    def test_a_failed_report_is_said_and_fails_the_matrix(self):
        from cubench_tools import run_matrix
        err = io.StringIO()
        with tempfile.TemporaryDirectory() as d, contextlib.redirect_stderr(err):
            self.assertIsNone(run_matrix.write_report([fixture("11.8"), os.path.join(d, "gone.json")], d))
        self.assertRegex(err.getvalue(), r"^\[run-matrix\] report failed: tools/report: .*gone.json: cannot read")


if __name__ == "__main__":
    unittest.main(verbosity=2)
