"""ctest tools.torch_reference.*: tools/torch_reference.py's cases from a cubench build's listing, what
it leaves out and why, and its flags checked before PyTorch is loaded (none of it needs PyTorch)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from tools_test_support import HERE, assert_one_line_error, listing_line, tool


def fake_cubench(directory, stdout, code=0, stderr=""):
    """An executable that answers as a cubench binary would, whatever its flags (a new one each
    call)."""
    path = os.path.join(directory, f"cubench{len(os.listdir(directory))}")
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\ncat <<'EOF'\n{stdout}\nEOF\necho '{stderr}' >&2\nexit {code}\n")
    os.chmod(path, 0o755)
    return path


# One configuration or two of each family tools/torch_reference.py covers, as a cubench build
# lists them, and one of a family it does not (launch/empty).
LISTING = [
    listing_line("gemm", {"dtype": "fp8", "m": 8192, "n": 11008, "k": 4096}),
    listing_line("sigmoid", {"variant": "naive", "dtype": "bf16", "n": 10000000, "cache": "cold"}),
    listing_line("sigmoid", {"variant": "copy", "dtype": "bf16", "n": 10000000, "cache": "cold"}),
    listing_line("svd", {"algo": "gesvdj", "dtype": "fp64", "n": 512}),
    listing_line("gemm_decode", {"dtype": "bf16", "weights": "11008x4096", "m": 8}),
    listing_line("gemm_decode", {"dtype": "fp8", "weights": "11008x4096", "m": 8}),
    listing_line("conv", {"pass": "fwd", "dtype": "bf16", "r": 3, "stride": 1, "c": 64, "k": 64, "hw": 56}),
    listing_line("conv", {"pass": "dgrad", "dtype": "bf16", "r": 3, "stride": 1, "c": 64, "k": 64, "hw": 56},
                 default=False),
    listing_line("conv", {"pass": "fwd", "dtype": "bf16", "r": 1, "stride": 1, "c": 64, "k": 256, "hw": 56},
                 default=False),
    listing_line("conv_autotune", {"pass": "fwd", "dtype": "fp16", "r": 3, "stride": 1, "c": 64, "k": 64,
                                   "hw": 56}, default=False),
    listing_line("resnet50_infer", {"precision": "fp16", "format": "channels_last", "mode": "eager",
                                    "batch": 64}),
    listing_line("resnet50_infer", {"precision": "fp16", "format": "channels_last", "mode": "graph",
                                    "batch": 64}),
    listing_line("sd15", {"what": "text_encode", "dtype": "bf16", "mode": "eager", "images": 1,
                          "resolution": 512}),
    listing_line("transformer_fwd", {"mode": "train", "attention": "sdpa", "batch": 32}),
    listing_line("transformer_fwd", {"mode": "train", "attention": "module", "batch": 32}),
    listing_line("torch/attention", {"backend": "cudnn", "pass": "fwd_bwd", "dtype": "bf16", "mask": "causal",
                                     "head_dim": 128, "seq": 1024}),
    listing_line("launch/empty", {}),
]


class TorchReference(unittest.TestCase):
    """tools/torch_reference.py takes its cases from a cubench build's listing (--cubench_list=axes):
    each covered configuration's axes become its case's parameters. That the cases agree with the
    real binary's listing is ctest tools.torch_reference_cases_are_the_binarys."""

    def plan(self, lines=LISTING):
        from cubench_tools import axes_listing, torch_cases
        return torch_cases.plan(axes_listing.parse("\n".join(lines)))

    def test_each_configuration_becomes_its_case_from_its_axes(self):
        cases = {c.name: c for c in self.plan().cases}
        self.assertEqual(list(cases), [
            "gemm/fp8/8192/11008/4096", "sigmoid/torch/bf16/10000000/cold", "svd/torch/fp64/512",
            "gemm_decode/bf16/11008x4096/8", "conv/fwd/bf16/3/1/64/64/56", "conv/fwd/fp16/3/1/64/64/56",
            "resnet50_infer/fp16/channels_last/eager/64", "sd15/text_encode/bf16/eager/1/512",
            "transformer_fwd/train/sdpa/32", "torch/attention/cudnn/fwd_bwd/bf16/causal/128/1024"])
        self.assertEqual(cases["gemm/fp8/8192/11008/4096"].params, dict(dtype="fp8", m=8192, n=11008, k=4096))
        # sigmoid's variants (naive, copy) share one PyTorch op, named with "torch" in their place.
        self.assertEqual(cases["sigmoid/torch/bf16/10000000/cold"].peers,
                         ["sigmoid/naive/bf16/10000000/cold", "sigmoid/copy/bf16/10000000/cold"])
        self.assertEqual(cases["sigmoid/torch/bf16/10000000/cold"].params, dict(dtype="bf16", n=10000000, cold=True))
        self.assertEqual(cases["gemm_decode/bf16/11008x4096/8"].params,
                         dict(dtype="bf16", n=11008, k=4096, m=8, cold=True))
        # conv_autotune's row stands beside the conv row of its name; the layer is the default
        # run's (conv's bf16 row of it is in its default set), so every dtype of it has a case.
        self.assertEqual(cases["conv/fwd/fp16/3/1/64/64/56"].peers, ["conv_autotune/fwd/fp16/3/1/64/64/56"])
        self.assertEqual(cases["conv/fwd/fp16/3/1/64/64/56"].params,
                         dict(dtype="fp16", r=3, stride=1, c=64, k=64, hw=56))
        self.assertEqual(cases["resnet50_infer/fp16/channels_last/eager/64"].params,
                         dict(precision="fp16", channels_last=True, batch=64))
        self.assertEqual(cases["sd15/text_encode/bf16/eager/1/512"].params,
                         dict(what="text_encode", dtype="bf16", images=1, res=512))
        self.assertEqual(cases["transformer_fwd/train/sdpa/32"].params, dict(train=True, batch=32))
        self.assertEqual(cases["torch/attention/cudnn/fwd_bwd/bf16/causal/128/1024"].params,
                         dict(backend="cudnn", train=True, dtype="bf16", causal=True, d=128, seq=1024))

    def test_a_configuration_without_a_case_says_why(self):
        plan = self.plan()
        why = dict(plan.left_out)
        self.assertEqual(sorted(why), [
            "conv/dgrad/bf16/3/1/64/64/56", "conv/fwd/bf16/1/1/64/256/56", "gemm_decode/fp8/11008x4096/8",
            "resnet50_infer/fp16/channels_last/graph/64", "transformer_fwd/train/module/32"])
        self.assertIn("forward only", why["conv/dgrad/bf16/3/1/64/64/56"])
        self.assertIn("a layer the default run leaves out", why["conv/fwd/bf16/1/1/64/256/56"])
        self.assertIn("bf16 only", why["gemm_decode/fp8/11008x4096/8"])
        self.assertIn("python runs eager", why["resnet50_infer/fp16/channels_last/graph/64"])
        self.assertIn("module's own attention", why["transformer_fwd/train/module/32"])
        # The covered families this listing has none of: a build without them has no case of them.
        self.assertEqual(plan.absent, ["resnet50_train", "llama_decode", "bert_train"])

    def test_a_family_whose_axes_changed_is_one_clear_error(self):
        from cubench_tools.input_error import InputError
        with self.assertRaisesRegex(InputError, "gemm/bf16/1024 has no axis 'm' .*update its reader"):
            self.plan([listing_line("gemm", {"dtype": "bf16", "size": 1024})])

    def test_list_and_left_out_read_the_binary(self):  # neither needs PyTorch
        with tempfile.TemporaryDirectory() as d:
            binary = fake_cubench(d, "\n".join(LISTING))
            r = tool("torch_reference.py", "--out", os.devnull, "--list", "--cubench-binary", binary,
                     "--filter", "^conv/")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), ["conv/fwd/bf16/3/1/64/64/56/manual_time",
                                                "conv/fwd/fp16/3/1/64/64/56/manual_time"])
            r = tool("torch_reference.py", "--out", os.devnull, "--left-out", "--cubench_binary", binary,
                     "--filter", "^gemm_decode/")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stdout, "^gemm_decode/fp8/11008x4096/8/manual_time\tbf16 only: .*\n$")
            # A filter of a family the build lists none of says so.
            assert_one_line_error(self, tool("torch_reference.py", "--out", os.devnull, "--list",
                                             "--cubench-binary", binary, "--filter", "^bert_train/"),
                                  "matches no case .*lists none of resnet50_train, llama_decode, bert_train")

    def test_a_binary_that_does_not_list_is_one_clear_error(self):
        with tempfile.TemporaryDirectory() as d:
            for binary, pattern in (
                    (os.path.join(d, "none"), "--cubench-binary .*/none: no such file \\(build cubench first"),
                    (fake_cubench(d, "", 2, "cubench: --cubench_list takes needs, got 'axes'"),
                     "--cubench_list=axes --cubench_suite=full exited 2: cubench: --cubench_list takes needs"),
                    (fake_cubench(d, "gemm/bf16/1024/1024/1024"), "output, line 1: not JSON"),
                    (fake_cubench(d, listing_line("gemm", {"dtype": "bf16"}).replace('"gemm/bf16"', '"gemm/fp8"')),
                     "line 1: gemm/fp8 is not its family gemm and its axes' values")):
                with self.subTest(pattern=pattern):
                    assert_one_line_error(self, tool("torch_reference.py", "--out", os.devnull, "--list",
                                                     "--cubench-binary", binary),
                                          "^tools/torch_reference.py: .*" + pattern)

    def test_sd15_without_diffusers_is_one_clear_error(self):
        # The case's error, which main() writes as the row's error message: what is missing and how
        # to get it (raised before PyTorch is touched).
        import importlib.util
        if importlib.util.find_spec("diffusers") and importlib.util.find_spec("transformers"):
            self.skipTest("diffusers and transformers are installed here")
        from cubench_tools import torch_sd15
        with self.assertRaisesRegex(RuntimeError, "the sd15 reference needs diffusers and transformers "
                                    "for this python .*: pip install diffusers transformers"):
            torch_sd15.sd15_models(None, None)

    def test_sd15_table_sets_each_row_beside_its_eager_peer(self):
        # docs/results/h100/sd15-table.py: a graph row against PyTorch's eager one; per image (the
        # time over the images), per step (step_ms or the unet_step row's time), peak, energy per
        # image; a figure a side lacks is "-".
        def row(name, us, **counters):
            r = {"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": "iteration",
                 "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 1,
                 "real_time": us, "cpu_time": us, "time_unit": "us"}
            r.update(counters)
            return r
        ours = [row("sd15/image/fp16/graph/4/512", 4e6, step_ms=150.0, peak_reserved_bytes=2**32,
                    energy_per_run_J=2000.0),
                row("sd15/unet_step/fp16/eager/1/512", 5e4, peak_reserved_bytes=2**31)]
        theirs = [row("sd15/image/fp16/eager/4/512", 5e6, step_ms=180.0, peak_reserved_bytes=5 * 2**30),
                  row("sd15/unet_step/fp16/eager/1/512", 6e4, peak_reserved_bytes=2**31, energy_per_run_J=20.0)]
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for rows in (ours, theirs):
                paths.append(os.path.join(d, f"{len(paths)}.json"))
                with open(paths[-1], "w") as f:
                    json.dump({"context": {}, "benchmarks": rows}, f)
            script = os.path.join(HERE, "..", "docs", "results", "h100", "sd15-table.py")
            r = subprocess.run([sys.executable, script, *paths], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| `sd15/image/fp16/graph/4/512` | 1000.0 / 1250.0 | 150.00 / 180.00 | 4.00 / 5.00 | "
                      "500.0 / - | 1.25 |", r.stdout)
        self.assertIn("| `sd15/unet_step/fp16/eager/1/512` | - / - | 50.00 / 60.00 | 2.00 / 2.00 | - / 20.0 | "
                      "1.20 |", r.stdout)

    def test_a_run_writes_each_case_as_cubench_writes_a_row(self):
        # On a stand-in for PyTorch (tests/data/stand_in_torch), so that what a case's rows hold
        # is checked here, where no GPU is: every repetition's row, then the aggregates, its work
        # as TFLOPS or GB/s, the context that names the stack.
        with tempfile.TemporaryDirectory() as d:
            binary, out = fake_cubench(d, "\n".join(LISTING)), os.path.join(d, "torch.json")
            r = subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "torch_reference.py"),
                                "--out", out, "--cubench-binary", binary, "--repetitions", "2", "--min-time", "0",
                                "--filter", "^(gemm|gemm_decode|sigmoid)/"], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=os.path.join(HERE, "data", "stand_in_torch")))
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                doc = json.load(f)
        self.assertEqual({k: v for k, v in doc["context"].items() if k != "date"}, {
            "executable": "tools/torch_reference.py", "framework": "pytorch eager", "torch": "9.9.9+fake",
            "cuda_runtime": "12.4", "cudnn": "90100", "gpu": "Fake GPU", "library_build_type": "release"})
        gemm = [row for row in doc["benchmarks"] if row["run_name"] == "gemm/fp8/8192/11008/4096/manual_time"]
        self.assertEqual([row.get("aggregate_name") or row["repetition_index"] for row in gemm],
                         [0, 1, "mean", "median", "stddev", "cv"])
        self.assertEqual((gemm[0]["iterations"], gemm[0]["real_time"], gemm[0]["label"]), (3, 125.0, "PyTorch eager"))
        self.assertAlmostEqual(gemm[0]["TFLOPS"], 2.0 * 8192 * 11008 * 4096 / 125e-6 / 1e12)
        decode = next(row for row in doc["benchmarks"] if row["name"] == "gemm_decode/bf16/11008x4096/8/manual_time")
        self.assertAlmostEqual(decode["GBps"], (11008 * 4096 + 8 * 4096 + 8 * 11008) * 2 / 125e-6 / 1e9)
        self.assertNotIn("TFLOPS", next(row for row in doc["benchmarks"] if row["name"].startswith("sigmoid/")))
        self.assertEqual(r.stderr.splitlines(), [
            "gemm/fp8/8192/11008/4096/manual_time: median 125.00 us",
            "sigmoid/torch/bf16/10000000/cold/manual_time: median 125.00 us",
            "gemm_decode/bf16/11008x4096/8/manual_time: median 125.00 us"])

    def test_flags_and_out_are_checked_before_anything_runs(self):
        for args, pattern in ((("--out", HERE), "--out .*: is a directory; name a file"),
                              (("--out", "/no/such/dir/t.json"), "--out .*: its directory /no/such/dir does not exist"),
                              (("--out", "t.json", "--repetitions", "0"), "--repetitions wants a count of at least 1"),
                              (("--out", "t.json", "--min-samples", "0"), "--min-samples wants a count of at least 1"),
                              (("--out", "t.json", "--warmup", "-1"), "--warmup wants a count of at least 0"),
                              (("--out", "t.json", "--filter", "(("), "--filter is not a valid regex"),
                              (("--filter", "x"), "the following arguments are required: --out")):
            with self.subTest(args=args):
                assert_one_line_error(self, tool("torch_reference.py", *args), "^tools/torch_reference.py: " + pattern)


if __name__ == "__main__":
    unittest.main(verbosity=2)
