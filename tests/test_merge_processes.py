"""ctest tools.merge_processes.*: tools/merge-processes on constructed processes' files: one sample per
process, and what it refuses."""
import csv
import io
import json
import os
import re
import tempfile
import unittest

from tools_test_support import assert_one_line_error, data, tool


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


if __name__ == "__main__":
    unittest.main(verbosity=2)
