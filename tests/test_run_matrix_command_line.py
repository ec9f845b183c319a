"""ctest tools.run_matrix_command_line.*: tools/run-matrix's command line, its presets and the commands
it runs (nothing is built)."""
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from tools_test_support import HERE, TOOLS, assert_one_line_error, tool


class RunMatrix(unittest.TestCase):
    def list_presets(self, cuda118_root, cuda124_root=None):
        env = dict(os.environ)
        for var, root in (("CUBENCH_CUDA118_ROOT", cuda118_root), ("CUBENCH_CUDA124_ROOT", cuda124_root)):
            env.pop(var, None)
            if root is not None:
                env[var] = root
        r = subprocess.run([sys.executable, os.path.join(TOOLS, "run_matrix.py"), "--list-presets"],
                           capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        names = [line.split("\t")[0] for line in r.stdout.splitlines()]
        self.assertEqual(names, ["cuda-13.0", "cuda-12.4", "cuda-11.8"])
        listed = {}
        for line in r.stdout.splitlines():
            name, state, nvcc = line.split("\t")
            self.assertTrue(nvcc, line)  # every preset names the nvcc its configure would take
            self.assertEqual(state, "available" if os.path.exists(nvcc) else "missing", line)
            listed[name] = (state, nvcc)
        return listed

    @staticmethod
    def cuda118_default():
        with open(os.path.join(HERE, "..", "CMakePresets.json")) as f:
            presets = {p["name"]: p for p in json.load(f)["configurePresets"]}
        return presets["cuda-11.8"]["cacheVariables"]["CUBENCH_CUDA_ROOT_DEFAULT"]

    def test_lists_presets_and_whether_their_toolkit_is_here(self):
        # CUBENCH_CUDA118_ROOT unset or empty: the preset's default prefix (CUBENCH_CUDA_ROOT_DEFAULT)
        for root in (None, ""):
            with self.subTest(CUBENCH_CUDA118_ROOT=root):
                state, nvcc = self.list_presets(root)["cuda-11.8"]
                self.assertEqual(nvcc, os.path.join(self.cuda118_default(), "bin", "nvcc"))
        # set: the nvcc under it, here once it exists
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(self.list_presets(d)["cuda-11.8"], ("missing", os.path.join(d, "bin", "nvcc")))
            os.mkdir(os.path.join(d, "bin"))
            with open(os.path.join(d, "bin", "nvcc"), "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(os.path.join(d, "bin", "nvcc"), 0o755)
            self.assertEqual(self.list_presets(d)["cuda-11.8"], ("available", os.path.join(d, "bin", "nvcc")))

    def test_cuda124_takes_its_variable_else_the_first_default_with_an_nvcc(self):
        with open(os.path.join(HERE, "..", "CMakePresets.json")) as f:
            presets = {p["name"]: p for p in json.load(f)["configurePresets"]}
        defaults = presets["cuda-12.4"]["cacheVariables"]["CUBENCH_CUDA_ROOT_DEFAULT"].split(";")
        self.assertEqual(defaults, ["/usr/local/cuda-12.4", "/opt/cuda-12.4-debian"])
        here = [d for d in defaults if os.path.exists(os.path.join(d, "bin", "nvcc"))]
        want = os.path.join((here or defaults)[0], "bin", "nvcc")
        self.assertEqual(self.list_presets(None)["cuda-12.4"][1], want)
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(self.list_presets(None, d)["cuda-12.4"], ("missing", os.path.join(d, "bin", "nvcc")))
            os.mkdir(os.path.join(d, "bin"))
            with open(os.path.join(d, "bin", "nvcc"), "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(os.path.join(d, "bin", "nvcc"), 0o755)
            self.assertEqual(self.list_presets(None, d)["cuda-12.4"], ("available", os.path.join(d, "bin", "nvcc")))

    def test_a_default_list_takes_the_first_folder_with_an_nvcc(self):
        from cubench_tools import toolkits
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a"), os.path.join(d, "b")
            cache = {"CUBENCH_CUDA_ROOT_DEFAULT": f"{a};{b}"}
            self.assertEqual(toolkits.preset_nvcc(cache), os.path.join(a, "bin", "nvcc"))  # neither: the first
            os.makedirs(os.path.join(b, "bin"))
            open(os.path.join(b, "bin", "nvcc"), "w").close()
            self.assertEqual(toolkits.preset_nvcc(cache), os.path.join(b, "bin", "nvcc"))
            os.makedirs(os.path.join(a, "bin"))
            open(os.path.join(a, "bin", "nvcc"), "w").close()
            self.assertEqual(toolkits.preset_nvcc(cache), os.path.join(a, "bin", "nvcc"))

    def test_unknown_preset_is_one_line(self):
        r = tool("run_matrix.py", "--presets", "cuda-9.0")
        assert_one_line_error(self, r, r"^tools/run-matrix: unknown preset\(s\) cuda-9.0; known: ")

    def test_processes_must_be_a_count(self):
        r = tool("run_matrix.py", "--processes", "0")
        assert_one_line_error(self, r, "^tools/run-matrix: --repetitions and --processes want a count of at least 1$")

    def test_bad_flags_are_one_line(self):
        for args, pattern in ((("--repetitions", "five"), "argument --repetitions: invalid int value"),
                              (("--presets", ","), "--presets names no preset"),
                              (("--no-such-flag",), "unrecognized arguments: --no-such-flag")):
            with self.subTest(args=args):
                assert_one_line_error(self, tool("run_matrix.py", *args), "^tools/run-matrix: " + pattern)


class RunMatrixCommand(unittest.TestCase):
    """What run-matrix would run and say, without building anything."""

    def command(self, *argv):
        from cubench_tools import run_matrix
        return run_matrix.suite_command("build/x/cubench", run_matrix.parse_args(list(argv)), "out.json")

    def test_defaults_are_the_rule_the_aa_passed(self):
        from cubench_tools import run_matrix
        args = run_matrix.parse_args([])
        self.assertEqual((args.processes, args.repetitions, args.min_time, args.suite), (4, 1, None, None))
        self.assertEqual(self.command(), [
            "build/x/cubench", "--benchmark_filter=.", "--benchmark_repetitions=1",
            "--benchmark_out=out.json", "--benchmark_out_format=json",
            "--benchmark_report_aggregates_only=false"])  # no min time: cubench stops on its noise

    def test_min_time_and_suite_only_when_given(self):
        cmd = self.command("--min-time", "0.5", "--suite", "full", "--repetitions", "3", "--filter", "^gemm/")
        self.assertEqual(cmd[1:3], ["--benchmark_filter=^gemm/", "--benchmark_repetitions=3"])
        self.assertEqual(cmd[-2:], ["--benchmark_min_time=0.5", "--cubench_suite=full"])
        self.assertEqual(self.command("--suite", "default")[-1], "--cubench_suite=default")
        self.assertEqual(self.command("--min-time", "2s")[-1], "--benchmark_min_time=2s")

    def test_kernels_are_named_only_when_asked(self):
        self.assertNotIn("--cubench_kernels=on", self.command())
        self.assertEqual(self.command("--kernels")[-1], "--cubench_kernels=on")

    def test_toolkits_in_upgrade_order_and_a_table_per_step(self):
        from cubench_tools import run_matrix, toolkits
        self.assertEqual(sorted(["cuda-13.0", "cuda-9.2", "mine", "cuda-11.8", "cuda-12.4"],
                                key=toolkits.toolkit_order),
                         ["cuda-9.2", "cuda-11.8", "cuda-12.4", "cuda-13.0", "mine"])
        self.assertEqual(run_matrix.tables(["r/cuda-13.0.json"]), [])
        self.assertEqual(run_matrix.tables(["r/a.json", "r/b.json"]), [("table.md", ["r/a.json", "r/b.json"])])
        three = ["r/cuda-11.8.json", "r/cuda-12.4.json", "r/cuda-13.0.json"]
        self.assertEqual(run_matrix.tables(three), [
            ("table.md", three),
            ("step-cuda-11.8-to-cuda-12.4.md", three[:2]),
            ("step-cuda-12.4-to-cuda-13.0.md", three[1:])])

    def test_help_says_the_defaults(self):
        r = tool("run_matrix.py", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for text in ("--processes 4", "--repetitions 1", "--suite default|full", "--cubench_suite"):
            self.assertIn(text, r.stdout)

    def test_bad_values_of_the_new_flags_are_one_line(self):
        for args, pattern in ((("--suite", "fast"), "argument --suite: invalid choice: 'fast'"),
                              (("--min-time", "abc"), re.escape("--min-time wants a time in seconds above 0 "
                                                                "(e.g. 0.5), got 'abc'") + "$"),
                              (("--min-time", "0"), "--min-time wants a time in seconds above 0"),
                              (("--min-time=-1s",), "--min-time wants a time in seconds above 0"),
                              (("--repetitions", "0"), "--repetitions and --processes want a count")):
            with self.subTest(args=args):
                # with a known preset: the flag is refused before anything would be built
                r = tool("run_matrix.py", "--presets", "cuda-13.0", "--out-dir", os.devnull, *args)
                assert_one_line_error(self, r, "^tools/run-matrix: " + pattern)

    def test_cubench_progress_is_relayed_once_led_by_the_process(self):
        from cubench_tools import run_matrix
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "cubench")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\n"
                        "echo 'gemm/bf16/4096/4096/4096/manual_time  200 us  200 us  5'\n"
                        "echo '[1/2] gemm/bf16/4096/4096/4096/manual_time ... 0 min 3 s elapsed, ETA 0 min 3 s' >&2\n"
                        "echo 'launch/empty/manual_time  3.4 us  3.4 us  1000'\n"
                        "echo '[2/2] launch/empty/manual_time ... 0 min 6 s elapsed, ETA 0 min 0 s' >&2\n")
            os.chmod(fake, 0o755)
            err = io.StringIO()
            stderr, sys.stderr = sys.stderr, err
            try:
                code = run_matrix.run_suite(fake, run_matrix.parse_args([]), os.path.join(d, "o.json"),
                                            "cuda-13.0 process 2/5")
            finally:
                sys.stderr = stderr
        self.assertEqual(code, 0)
        self.assertEqual(err.getvalue().splitlines(), [
            "[run-matrix] cuda-13.0 process 2/5: [1/2] gemm/bf16/4096/4096/4096/manual_time ... 0 min 3 s "
            "elapsed, ETA 0 min 3 s",
            "[run-matrix] cuda-13.0 process 2/5: [2/2] launch/empty/manual_time ... 0 min 6 s elapsed, "
            "ETA 0 min 0 s"])

    def test_wall_time_reads_as_minutes_and_seconds(self):
        from cubench_tools import matrix_progress
        self.assertEqual([matrix_progress.fmt_duration(s) for s in (0.2, 52, 60, 842.4)],
                         ["0 s", "52 s", "1 min 0 s", "14 min 2 s"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
