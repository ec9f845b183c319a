"""ctest tools.where_the_time_went.*: tools/where-the-time-went on sample and constructed result files."""
import json
import os
import re
import tempfile
import unittest

from tools_test_support import HERE, assert_one_line_error, data, tool, toy_row


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
        # is a list of claims and compiled/packages/ tools/aoti-export's records, not result files.
        import glob
        docs = os.path.join(HERE, "..", "docs", "results")
        paths = sorted(glob.glob(os.path.join(docs, "**", "*.json"), recursive=True))
        self.assertGreater(len(paths), 20)
        for path in paths:
            with self.subTest(path=os.path.relpath(path, docs)):
                r = tool("where_the_time_went.py", path)
                if path.endswith("articles-claims.json") or "/compiled/packages/" in path:
                    assert_one_line_error(self, r, "not Google Benchmark output")
                    continue
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("| **all** |", r.stdout)
                self.assertNotIn("Traceback", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
