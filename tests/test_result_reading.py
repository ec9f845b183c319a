"""ctest tools.result_reading.*: files without a schema give the tables and charts they gave before the
schema (tests/data/expected); files cut mid-write or from an interrupted run give their complete
rows, with a warning."""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from tools_test_support import DATA, TOOLS, assert_one_line_error, chart_summary, data, plot_figures, tool


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
        figures = plot_figures(self, *map(data, CHARTS_WITHOUT_SCHEMA))
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
