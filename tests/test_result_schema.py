"""ctest tools.result_schema.*: files with a schema (cubench_schema): a family and a counter no tool has
seen are read, compared, judged, merged and drawn (a generic chart); what a build left out
(not_built), what ran (algorithms, kernels), and a bad schema as one line and exit 2."""
import csv
import io
import json
import os
import re
import tempfile
import unittest

from tools_test_support import (TOY_SCHEMA, TOY_SIZES, assert_one_line_error, assert_plot_leaves_out,
                                data, plot_figures, tool, toy_file, toy_row)


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
        return plot_figures(self, *paths)

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
        assert_plot_leaves_out(
            self, path, "tools/plot: toy/widget: left out 6 benchmark(s) without its main counter "
            "widgets_per_s; no toy_widget.png", "toy_widget.png")

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


if __name__ == "__main__":
    unittest.main(verbosity=2)
