"""ctest docs.results_tables.*: the table scripts of docs/results read result files through
tools/cubench_tools/results.py, so a row a run skipped (schema version 3: "skipped", real_time 0,
its "cubench" object's status not_run or not_supported) is never shown as measured, whatever
figures it carries; each script is fed a file holding one beside a measured row."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "..", "docs", "results")
MIB = 1 << 20

# Each family's axes as cubench's schema declares them: (name, kind).
AXES = {
    "gemm": (("dtype", "dtype"), ("m", "int"), ("n", "int"), ("k", "int")),
    "transformer_fwd": (("mode", "string"), ("attention", "string"), ("batch", "int")),
    "svd": (("algo", "string"), ("dtype", "dtype"), ("n", "int")),
    "sd15": (("what", "string"), ("dtype", "dtype"), ("mode", "string"), ("images", "int"),
             ("resolution", "int")),
}


def schema():
    families = {name: {"description": name, "axes": [{"name": a, "kind": k} for a, k in axes],
                       "main_counter": "", "size_axis": "", "timer": "cuda_events", "counters": [],
                       "library": ""} for name, axes in AXES.items()}
    return json.dumps({"version": 3, "counters": {}, "families": families})


def row(family, values, us=1000.0, status="measured", **counters):
    """One repetition's row as cubench writes it: a skip (not_run, not_supported) with real_time 0
    and skip_message, an error with error_message, the figures given either way."""
    name = "/".join([family] + [str(v) for v in values])
    axis_values = {a: v for (a, _), v in zip(AXES[family], values)}
    measured = status == "measured"
    r = {"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": "iteration",
         "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 1 if measured else 0,
         "real_time": us if measured else 0, "cpu_time": us if measured else 0, "time_unit": "us",
         "cubench": {"family": family, "status": status, "reason": "" if measured else "why",
                     "axis_values": axis_values, "notes": []}}
    if status in ("not_run", "not_supported"):
        r.update(skipped=True, skip_message=f"{name}: not run: needs 150 GiB; 79 GiB free")
    elif not measured:
        r.update(error_occurred=True, error_message=f"{name}: {status}")
    r.update(counters)
    return r


def script(*path):
    return os.path.join(RESULTS, *path)


class Tables(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def file(self, name, rows, **context):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            json.dump({"context": dict(context, cubench_schema=schema()), "benchmarks": rows}, f)
        return path

    def run_script(self, path, *args, code=0):
        r = subprocess.run([sys.executable, path, *args], capture_output=True, text=True)
        self.assertEqual(r.returncode, code, r.stdout + r.stderr)
        return r.stdout

    def test_declared_needs_counts_no_skip_as_a_peak(self):
        # The skipped row carries a peak over its declaration: read as measured, it would be
        # BELOW (exit status 1) and counted.
        needs = os.path.join(self.dir.name, "needs.txt")
        with open(needs, "w") as f:
            f.write("name\tdevice_bytes\tcompute_capability\tcapability_for\n"
                    f"gemm/bf16/1024/1024/1024\t{96 * MIB}\t8.0\t\n"
                    f"gemm/bf16/8192/8192/8192\t{512 * MIB}\t8.0\t\n")
        result = self.file("run.json", [
            row("gemm", ("bf16", 1024, 1024, 1024), peak_mem_bytes=64 * MIB),
            row("gemm", ("bf16", 8192, 8192, 8192), status="not_run", peak_mem_bytes=1024 * MIB)])
        out = self.run_script(script("h100", "declared-needs-table.py"), needs, result, "--all")
        self.assertNotIn("8192", out)
        self.assertIn("1 rows measured; 0 declared below their measured peak", out)

    def test_transformer_memory_says_not_run_for_a_skip(self):
        ours = self.file("cubench.json", [
            row("transformer_fwd", ("train", "module", 256), status="not_run",
                peak_allocated_bytes=150 * 1024 * MIB),
            row("transformer_fwd", ("train", "sdpa", 256), peak_allocated_bytes=70 * 1024 * MIB),
            row("transformer_fwd", ("train", "module", 128), status="out_of_memory",
                peak_allocated_bytes=80 * 1024 * MIB)])
        theirs = self.file("pytorch.json", [
            row("transformer_fwd", ("train", "sdpa", 256), peak_allocated_bytes=69 * 1024 * MIB)])
        out = self.run_script(script("h100", "transformer-memory-table.py"), ours, theirs)
        self.assertIn("| train | 256 | not run | 71,680 | 70,656 |", out)
        self.assertIn("| train | 128 | error | not run | not run |", out)

    def test_peak_memory_leaves_a_skip_out(self):
        ours = self.file("cubench.json", [
            row("gemm", ("bf16", 4096, 4096, 4096), peak_mem_bytes=160 * MIB, used_mem_bytes=128 * MIB),
            row("gemm", ("bf16", 8192, 8192, 8192), status="not_supported", peak_mem_bytes=448 * MIB)])
        out = self.run_script(script("h200", "peak-memory-table.py"), ours)
        self.assertIn("| gemm/bf16/4096/4096/4096 | 160.0 | 128.0 | 96.0 (A, B, C) | 64.0 |  |", out)
        self.assertNotIn("8192", out)

    def test_svd_accuracy_counts_no_skip_as_a_seed(self):
        seed = dict(input_seed=7)
        path = self.file("svd-seed-7.json", [
            row("svd", ("gesvd", "fp32", 512), recon_error=1e-6, ortho_error=2e-6, sigma_error=3e-6),
            row("svd", ("gesvd", "fp32", 1024), status="not_run"),
            row("svd", ("gesvdp", "fp32", 2048), status="wrong_result")], **seed)
        out = self.run_script(script("h200", "svd-accuracy-table.py"), path)
        self.assertIn("| svd/gesvd/fp32/512 | 1 | 1 | 1e-06 | 2e-06 | 3e-06 |  |", out)
        self.assertIn("| svd/gesvdp/fp32/2048 | 1 | 0 | nan | nan | nan | 7: nan |", out)
        self.assertNotIn("svd/gesvd/fp32/1024", out)

    def test_power_shows_no_reading_of_a_skip(self):
        path = self.file("run.json", [
            row("gemm", ("bf16", 4096, 4096, 4096), power_W=600.0, nvml_power_W=610.0, sampling_s=1.0),
            row("gemm", ("bf16", 8192, 8192, 8192), status="not_run", power_W=900.0,
                nvml_power_W=100.0, sampling_s=1.0)], gpu_power_limit_W=700)
        out = self.run_script(script("h100", "power-table.py"), path, "--rows")
        self.assertIn("`gemm/bf16/4096/4096/4096/manual_time`", out)
        self.assertNotIn("8192", out)
        self.assertIn("1 power readings in 1 file(s): 0 over the card's limit", out)

    def test_same_library_sets_no_skip_beside_pytorch(self):
        ours = self.file("cubench.json", [
            row("gemm", ("bf16", 4096, 4096, 4096), us=1000.0, sm_clock_MHz=1980.0),
            row("gemm", ("bf16", 8192, 8192, 8192), status="not_run", sm_clock_MHz=1980.0)])
        theirs = self.file("pytorch.json", [
            row("gemm", ("bf16", 4096, 4096, 4096), us=1100.0, sm_clock_MHz=1980.0),
            row("gemm", ("bf16", 8192, 8192, 8192), us=8000.0, sm_clock_MHz=1980.0)])
        out = self.run_script(script("h100", "same-library-table.py"), ours, theirs)
        self.assertIn("| `gemm/bf16/4096/4096/4096` |", out)
        self.assertNotIn("8192", out)
        self.assertIn("1 rows set against PyTorch's", out)

    def test_sd15_sets_no_skip_beside_pytorch(self):
        ours = self.file("cubench.json", [
            row("sd15", ("unet_step", "fp16", "graph", 1, 512), us=5e4),
            row("sd15", ("unet_step", "fp16", "graph", 4, 768), status="not_run")])
        theirs = self.file("pytorch.json", [
            row("sd15", ("unet_step", "fp16", "eager", 1, 512), us=6e4),
            row("sd15", ("unet_step", "fp16", "eager", 4, 768), us=2e5)])
        out = self.run_script(script("h100", "sd15-table.py"), ours, theirs)
        self.assertIn("| `sd15/unet_step/fp16/graph/1/512` |", out)
        self.assertNotIn("768", out)
        self.assertIn("1 sd15 rows set against PyTorch's", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
