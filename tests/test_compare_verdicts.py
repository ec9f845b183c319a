"""ctest tools.compare_verdicts.*: each of tools/compare's verdicts (faster, slower, same, too noisy to
tell) from constructed pairs of files, merged from processes (the U test) or of one process (the
one-process rule), and its cycles view."""
import csv
import io
import json
import os
import tempfile
import unittest

from tools_test_support import compare_table, data, tool, toy_row


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
    """A base file and another, each written by `write` (here samples_file()), compared with
    --table."""
    write = staticmethod(samples_file)

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def table(self, base_rows, other_rows, *extra):
        """{row: {column: cell}} of the CSV table, and the Markdown table's text."""
        return compare_table(self, self.write(self.dir.name, "a.json", base_rows),
                             self.write(self.dir.name, "b.json", other_rows), *extra)

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


class OneRepetition(PairOfFiles):
    """--table on two files of one process and one repetition per row (cubench's default run):
    no U test; a row is called faster or slower only where its change is at least 10%, at least
    twice either row's own sample spread (sample_cv) and at least --min-effect, with the rows' 95%
    intervals (time_ci_pct) apart; a change under --min-effect is the same; anything else is too
    noisy to tell, with why. One line under the table says what one process cannot see."""
    write = staticmethod(one_process_file)

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


if __name__ == "__main__":
    unittest.main(verbosity=2)
