"""ctest tools.row_outcome.*: version-3 files (tests/data/v3, a "cubench" object in every row): every
tool reads a row's family, axis values, status and notes from it, so a row whose name or label
would read wrongly reports right, a skip is not timed and not a failure, a malformed object is one
line and exit 2, and a version-2 file converted gives what its original gives; the one reading of
older rows (row_outcome.legacy_outcome) on its own."""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from tools_test_support import (DATA, TOOLS, V3, assert_one_line_error, chart_summary, plot_figures, tool,
                                toy_row, v3)


SPLITK = "gemm/bf16/2048/2048/2048/splitk/manual_time"  # a gemm row, its name one segment longer


AUTOTUNED = "gemm/fp8/4096/4096/4096/manual_time"  # a gemm_autotune row, named like a gemm one


NOT_RUN = "gemm/bf16/16384/16384/16384/manual_time"  # run-b.json: not run at its turn (a skip)


NOT_SUPPORTED = "gemm/fp8/1024/1024/1024/manual_time"  # both: not supported here (a skip)


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
        old, new = (plot_figures(self, os.path.join(folder, "one-process-a.json"))
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
        figures = plot_figures(self, v3("run-a.json"), v3("run-b.json"))
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
