"""ctest run.*: a real run of the host-clock throwaway family (tests/throwaway_family.cpp), so it
runs on CI's GPU-less machine: the stopping rule's noise and reason in every row, the suites, and
SIGINT / SIGTERM mid-run giving valid JSON with the finished rows, the "interrupted" mark, one
line and status 128 + signal, and the tools loading that file.

  check_run_control.py BINARY TOOLS_DIR OUT_DIR"""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

BINARY, TOOLS, OUT = sys.argv[1:4]
del sys.argv[1:4]


def run(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=300)


class RunControl(unittest.TestCase):
    def test_rows_say_their_noise_and_why_sampling_stopped(self):
        out = os.path.join(OUT, "adaptive.json")
        r = run("--benchmark_filter=flat/100000", "--cubench_max_noise=50", "--cubench_min_samples=5",
                "--cubench_min_time=0.01", f"--benchmark_out={out}")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            data = json.load(f)
        self.assertEqual(data["context"]["suite"], "default")
        self.assertIn("max_noise=50%", data["context"]["stopping"])
        (row,) = data["benchmarks"]
        self.assertEqual(row["name"], "throwaway/widgets/flat/100000/manual_time")  # no suffix
        self.assertEqual(row["iterations"], 1)
        self.assertGreaterEqual(row["samples"], 5)
        # A loaded CI machine can make even this host loop noisier than 50%: then it settles.
        self.assertRegex(row["label"], r"stopped: (noise [0-9.]+% < 50%|noise settled at [0-9.]+% "
                         r"\(target 50%\)) after \d+ samples")
        if "<" in row["label"]:
            self.assertLess(row["sample_cv"], 0.5)
        self.assertRegex(r.stderr, r"\[1/1\] throwaway/widgets/flat/100000  elapsed 0s, ETA \?")
        # Nothing went wrong, so nothing reads as an error: progress lines and cubench's warnings.
        for line in r.stderr.splitlines():
            self.assertRegex(line, r"^(\[\d+/\d+\] \S+  elapsed \S+, ETA \S+|cubench: warning: .*)$")
        for counter in ("setup_s", "validate_s", "warmup_s", "sampling_s"):
            self.assertGreaterEqual(row[counter], 0, counter)
        self.assertGreater(row["sampling_s"], 0)
        # The row's time is known to within its confidence interval: t * noise / sqrt(samples).
        self.assertGreater(row["time_ci_pct"], 0)
        # The mean's 95% interval from the same samples: t(n-1) cv / sqrt(n), whatever the
        # host's load made of the noise and the count.
        from scipy.stats import t
        n = row["samples"]
        want = 100 * t.ppf(0.975, n - 1) * row["sample_cv"] / n ** 0.5
        self.assertAlmostEqual(row["time_ci_pct"] / want, 1, delta=0.01)

    def test_benchmark_min_time_gives_google_benchmarks_loop(self):
        out = os.path.join(OUT, "min_time.json")
        r = run("--benchmark_filter=flat/100000", "--benchmark_min_time=0.01", f"--benchmark_out={out}")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            (row,) = json.load(f)["benchmarks"]
        self.assertNotIn("stopped:", row.get("label", ""))
        self.assertGreater(row["iterations"], 1)

    def test_console_is_a_table_per_family_and_google_benchmarks_on_request(self):
        r = run("--benchmark_filter=widgets/.*/100000/", "--cubench_max_noise=50",
                "--cubench_min_samples=3", "--cubench_min_time=0.01")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        at = lines.index("## throwaway/widgets: a test-only family: sums of n numbers on the host")
        self.assertEqual(lines[at + 2], "| shape | n | time | widgets_per_s (widget/s) | noise | samples | notes |")
        rows = [l for l in lines[at + 4:] if l.startswith("| ")]
        self.assertEqual([l.split(" | ")[:2] for l in rows], [["| flat", "100000"], ["| square", "100000"]])
        for line in rows:  # time with its unit, the main counter, noise in %, a whole count
            cells = [c.strip() for c in line.strip("|").split("|")]
            self.assertRegex(cells[2], r"^[0-9.]+ (ns|us|ms|s)$")
            self.assertRegex(cells[3], r"^[0-9.e+]+$")
            self.assertRegex(cells[4], r"^[0-9.]+%$")
            self.assertRegex(cells[5], r"^[0-9]+$")
        self.assertNotIn("Iterations", r.stdout)
        self.assertNotIn("\x1b[", r.stdout)
        r = run("--benchmark_filter=flat/100000", "--cubench_max_noise=50", "--cubench_min_samples=3",
                "--cubench_min_time=0.01", "--benchmark_format=console")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Iterations", r.stdout)
        self.assertNotIn("## throwaway", r.stdout)

    def test_default_suite_is_what_the_family_keeps(self):
        default = run("--benchmark_list_tests").stdout.split()
        full = run("--benchmark_list_tests", "--cubench_suite=full").stdout.split()
        self.assertEqual(len(full), 6)
        self.assertEqual([n for n in full if "/400000/" not in n], default)
        r = run("--benchmark_filter=/400000/")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.strip(), "cubench: --benchmark_filter=/400000/ matches 2 "
                         "benchmark(s) of the full suite and none of the default one; add "
                         "--cubench_suite=full")

    def interrupt(self, sig, name):
        out = os.path.join(OUT, f"{name}.json")
        if os.path.exists(out):
            os.remove(out)
        # Each benchmark samples for its whole 1 s timeout (min_samples out of reach); the signal
        # comes once the second has started, so it lands mid-sampling.
        p = subprocess.Popen([BINARY, "--cubench_min_samples=1000000", "--cubench_timeout=1",
                              f"--benchmark_out={out}"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seen = []
        for line in p.stderr:
            seen.append(line)
            if line.startswith("[2/4] "):
                break
        time.sleep(0.2)
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=60)
        stderr = "".join(seen) + stderr
        self.assertEqual(p.returncode, 128 + sig, stderr)
        last = stderr.splitlines()[-1]  # after the context and the progress lines
        self.assertEqual(last, f"cubench: interrupted by {name}: 1 of 4 benchmarks finished; "
                         f"{out} holds them, marked \"interrupted\"")
        with open(out) as f:
            data = json.load(f)  # valid JSON
        self.assertEqual(data["context"]["interrupted"], name)
        rows = data["benchmarks"]
        self.assertEqual([r["name"] for r in rows], ["throwaway/widgets/flat/100000/manual_time"])
        for row in rows:  # finished rows only: no error rows for what was abandoned
            self.assertNotIn("error_occurred", row)
            self.assertIn("samples", row)
        return out

    def test_sigint_keeps_finished_rows_and_the_tools_read_them(self):
        out = self.interrupt(signal.SIGINT, "SIGINT")
        r = subprocess.run([os.path.join(TOOLS, "compare"), "--table", out, out, "--no-utest"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("throwaway/widgets/", r.stdout)
        self.assertIn("interrupted", r.stderr)

    def test_sigterm_too(self):
        self.interrupt(signal.SIGTERM, "SIGTERM")


if __name__ == "__main__":
    unittest.main()
