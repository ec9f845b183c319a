"""ctest tools.plot.*: tools/plot on committed sample results: every chart is written with one colour
per file, the same in every panel, its axes and text as the page shows them."""
import json
import os
import tempfile
import unittest

from tools_test_support import (HERE, assert_one_line_error, assert_plot_leaves_out, data, plot_figures, tool,
                                toy_file, v3)


class Plot(unittest.TestCase):
    def test_every_chart_is_written(self):
        with tempfile.TemporaryDirectory() as out:
            r = tool("plot.py", "--out-dir", out, data("cuda-13.0.json"), data("cuda-11.8.json"),
                     data("torch-h200.json"), data("allreduce-2gpu.json"))
            self.assertEqual(r.returncode, 0, r.stderr)
            for chart in ("gemm.png", "sigmoid.png", "allreduce.png", "svd.png", "resnet.png",
                          "resnet-memory.png", "transformer.png"):
                path = os.path.join(out, chart)
                self.assertTrue(os.path.getsize(path) > 10000, chart)
                with open(path, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_nothing_to_plot(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "plots")
            r = tool("plot.py", "--out-dir", out, data("nothing-in-common.json"))
            assert_one_line_error(self, r, "^tools/plot: nothing to plot: no gemm, .* results in the files$")
            self.assertFalse(os.path.exists(out))  # no empty folder left behind

    def test_only_one_gpu_allreduce_is_nothing_to_plot_in_one_line(self):
        with open(data("cuda-13.0.json")) as f:
            doc = json.load(f)
        doc["benchmarks"] = [row for row in doc["benchmarks"] if row["name"].startswith("allreduce/")]
        self.assertTrue(doc["benchmarks"])
        with tempfile.TemporaryDirectory() as d:
            path, out = os.path.join(d, "allreduce-1gpu.json"), os.path.join(d, "plots")
            with open(path, "w") as f:
                json.dump(doc, f)
            r = tool("plot.py", "--out-dir", out, path)
            assert_one_line_error(self, r, r"^tools/plot: nothing to plot: no gemm, .* results in the "
                                           r"files \(allreduce: left out 1 one-GPU benchmark\(s\): .*\)$")
            self.assertFalse(os.path.exists(out))

    def test_one_gpu_allreduce_is_left_out_with_a_line(self):
        assert_plot_leaves_out(
            self, data("cuda-13.0.json"),
            "tools/plot: allreduce: left out 1 one-GPU benchmark(s): without two or more ranks "
            "nothing is communicated, so there is no bus bandwidth to draw; no allreduce.png",
            "allreduce.png")

    def test_out_dir_that_is_a_file(self):
        r = tool("plot.py", "--out-dir", data("cuda-13.0.json"), data("cuda-13.0.json"))
        assert_one_line_error(self, r, "^tools/plot: --out-dir .*cuda-13.0.json: exists and is not a directory$")


class PlotColoursAndAxes(unittest.TestCase):
    """The figures themselves, caught before they are saved."""

    def figures(self, *paths, whole=False):
        return plot_figures(self, *paths, whole=whole)

    def test_a_file_keeps_its_colour_in_every_panel_and_chart(self):
        from matplotlib.colors import to_hex
        figures = self.figures(data("torch-h200.json"), data("cuda-11.8.json"), data("cuda-13.0.json"))
        colour_of, seen = {}, 0
        for chart, axes in figures.items():
            for ax in axes:
                for series in ax.containers:  # a file's line (errorbar) or its bars in a panel
                    if series.get_label().startswith("_"):
                        continue  # the error bars of bars: no colour of their own
                    first = series.lines[0] if hasattr(series, "lines") else series.patches[0]
                    colour = to_hex(first.get_color() if hasattr(series, "lines") else first.get_facecolor())
                    file = series.get_label().rsplit("[", 1)[-1].rstrip("]")
                    self.assertEqual(colour_of.setdefault(file, colour), colour,
                                     f"{file} in {chart}, panel {ax.get_title()}")
                    seen += 1
        self.assertGreater(seen, 10)  # lines and bars of 7 charts
        self.assertEqual(colour_of, {"torch-h200.json": to_hex("C0"), "cuda-11.8.json": to_hex("C1"),
                                     "cuda-13.0.json": to_hex("C2")})  # from the order given

    def test_a_wide_range_gets_a_log_axis(self):
        figures = self.figures(data("allreduce-2gpu.json"))
        self.assertTrue(all(ax.get_yscale() == "log" for ax in figures["allreduce.png"]))
        self.assertTrue(all(ax.get_xscale() == "log" for ax in figures["allreduce.png"]))
        for ax in figures["allreduce.png"]:  # the bytes as ticks: 8 at most, the smallest first
            labels = [t.get_text() for t in ax.get_xticklabels()]
            self.assertTrue(2 <= len(labels) <= 8, labels)
            self.assertEqual(labels[0], "8", labels)

    def test_every_charts_text_is_10_px_or_more_on_the_report_page(self):
        """A chart wider than the page shows it is shrunk, its text with it (the sigmoid chart's 18
        inches at 110 dpi, 1980 px, were shown at 1072: its 8-point labels at 6.6 px). Each text's
        points, at the dpi it is saved with and the page's shrinking, give its pixels there."""
        import matplotlib.text
        from cubench_tools import chart_drawing
        with tempfile.TemporaryDirectory() as d:
            toy = (toy_file(d, "a.json"), toy_file(d, "b.json", sizes=(1, 8, 64)))
            runs = (
                (data("torch-h200.json"), data("cuda-11.8.json"), data("cuda-13.0.json")),
                (data("allreduce-2gpu.json"),), toy, (v3("run-a.json"), v3("run-b.json")),
                tuple(os.path.join(HERE, "..", "docs", "results", "h100", "toolkits", f"verdict-cuda-{v}.json")
                      for v in ("11.8", "12.4", "13.0")))
            charts = {}
            for paths in runs:
                charts.update({f"{name} of {', '.join(map(os.path.basename, paths))}": fig
                               for name, fig in self.figures(*paths, whole=True).items()})
        for must in ("gemm.png", "sigmoid.png", "svd.png", "allreduce.png", "resnet.png", "transformer.png",
                     "toy_widget.png", "toy_gadget.png", "gemm_decode.png", "launch_empty.png"):
            self.assertTrue([c for c in charts if c.startswith(must + " ")], must)
        too_small, self.maxDiff = [], None
        for chart, fig in sorted(charts.items()):
            width_px = fig.get_figwidth() * chart_drawing.DPI
            shown = min(1, chart_drawing.PAGE_CHART_PX / width_px)  # the page's shrinking of a wider chart
            texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
            self.assertGreater(len(texts), 5, chart)
            smallest = min(texts, key=lambda t: t.get_fontsize())
            px = smallest.get_fontsize() / 72 * chart_drawing.DPI * shown
            if px < chart_drawing.MIN_TEXT_PX:
                too_small.append(f"{chart}: {smallest.get_text()!r} at {px:.1f} px")
        self.assertEqual(too_small, [])

    def test_a_size_axis_is_logarithmic_from_a_factor_of_10_its_ticks_the_sizes(self):
        from cubench_tools import chart_drawing
        self.assertTrue(chart_drawing.wide_sizes([1, 8, 64]))  # gemm_decode's m
        self.assertTrue(chart_drawing.wide_sizes([10, 100]))
        self.assertFalse(chart_drawing.wide_sizes([1024, 4096]))
        self.assertFalse(chart_drawing.wide_sizes([7, 0, 69.9]))  # 0 is no size on a log axis
        self.assertEqual([chart_drawing.size_label(v) for v in (1, 64, 16384, 2 ** 28, 10 ** 7, 3 * 10 ** 5 + 1, 2.5)],
                         ["1", "64", "16384", "256Mi", "10M", "300001", "2.5"])
        figures = self.figures(data("cuda-13.0.json"))
        for ax in figures["gemm.png"]:  # every panel's squares' n as its ticks, not 2^10
            ns = sorted({int(x) for c in ax.containers if c.get_label()[0] != "_"  # a file's line
                         for x in c.lines[0].get_xdata()})
            self.assertTrue(ns, ax.get_title())
            self.assertEqual((ax.get_xscale(), [t.get_text() for t in ax.get_xticklabels()]),
                             ("log", [str(n) for n in ns]), ax.get_title())


if __name__ == "__main__":
    unittest.main(verbosity=2)
