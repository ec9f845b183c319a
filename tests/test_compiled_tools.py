"""Compiled mode's Python side, where no PyTorch is needed: the package names tools/aoti-export
takes (the C++ families name their packages the same way), its command line and its errors, and
tools/torch_reference.py's compiled cases read from a listing."""
import importlib.util
import os
import subprocess
import sys
import unittest

from tools_test_support import TOOLS, listing_line
from cubench_tools import axes_listing, compiled_modules, torch_cases  # noqa: E402
from cubench_tools.results import InputError  # noqa: E402


def aoti_export(*args, python=sys.executable):
    return subprocess.run([os.path.join(TOOLS, "aoti-export"), *args], capture_output=True, text=True,
                          env=dict(os.environ, CUBENCH_PYTHON=python))


class PackageNames(unittest.TestCase):
    def test_each_familys_name_is_its_configuration(self):
        self.assertEqual(compiled_modules.parse_package("resnet50_infer-fp16-channels_last-256"),
                         dict(family="resnet50_infer", name="resnet50_infer-fp16-channels_last-256",
                              dtype="fp16", format="channels_last", batch=256))
        self.assertEqual(compiled_modules.parse_package("sd15_unet-bf16-4-768"),
                         dict(family="sd15_unet", name="sd15_unet-bf16-4-768", dtype="bf16", images=4,
                              resolution=768))
        self.assertEqual(compiled_modules.parse_package("llama_decode-bf16-1024-256-32"),
                         dict(family="llama_decode", name="llama_decode-bf16-1024-256-32", dtype="bf16",
                              prompt=1024, new=256, batch=32))

    def test_the_default_runs_packages_are_names_it_takes(self):
        for name in compiled_modules.DEFAULT_PACKAGES:
            self.assertEqual(compiled_modules.parse_package(name)["name"], name)

    def test_a_name_no_family_makes_is_one_clear_error(self):
        for bad, says in [("resnet50_infer-fp32-channels_last-1", "not a compiled row's name"),
                          ("resnet50_infer-bf16-nchw-1", "not a compiled row's name"),
                          ("sd15_unet-fp16-1-500", "multiple of 8"),
                          ("llama_decode-bf16-4000-128-1", "rotary table"),
                          ("llama_decode-bf16-128-128-0", "positive"),
                          ("gemm-bf16-1024", "not a compiled row's name")]:
            with self.assertRaisesRegex(InputError, says):
                compiled_modules.parse_package(bad)


class AotiExportCommand(unittest.TestCase):
    def test_list_prints_the_default_packages_without_torch(self):
        r = aoti_export("--list")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), list(compiled_modules.DEFAULT_PACKAGES))
        r = aoti_export("--list", "--package", "sd15_unet-fp16-4-512")
        self.assertEqual(r.stdout.split(), ["sd15_unet-fp16-4-512"])

    def test_bad_input_is_one_line_and_status_2(self):
        for args in (["--package", "nonsense"], ["--mode", "fastest"], ["--bogus"]):
            r = aoti_export(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertTrue(r.stderr.startswith("tools/aoti-export: "), r.stderr)

    def test_a_python_without_torch_says_which_python_to_use(self):
        if importlib.util.find_spec("torch") is not None:
            self.skipTest(f"{sys.executable} has torch: the message for one without is not reached")
        r = aoti_export("--out", os.devnull + ".d")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("no torch in", r.stderr)
        self.assertIn("CUBENCH_PYTHON", r.stderr)


class CompiledCases(unittest.TestCase):
    """torch_reference.py's compiled cases: the configuration's own parameters and compiled=True
    (the module under torch.compile); graph rows stay python-less."""

    def plan(self, lines):
        return torch_cases.plan(axes_listing.parse("\n".join(lines)))

    def test_a_compiled_row_is_its_eager_case_compiled(self):
        plan = self.plan([
            listing_line("resnet50_infer", {"precision": "bf16", "format": "channels_last",
                                            "mode": "compiled", "batch": 256}),
            listing_line("llama_decode", {"dtype": "bf16", "mode": "compiled", "prompt": 128, "new": 128,
                                          "batch": 1}),
            listing_line("sd15", {"what": "unet_step", "dtype": "fp16", "mode": "compiled", "images": 1,
                                  "resolution": 512}),
            listing_line("sd15", {"what": "image", "dtype": "fp16", "mode": "graph", "images": 1,
                                  "resolution": 512})])
        cases = {c.name: c for c in plan.cases}
        self.assertEqual(cases["resnet50_infer/bf16/channels_last/compiled/256"].params,
                         dict(precision="bf16", channels_last=True, batch=256, compiled=True))
        self.assertEqual(cases["llama_decode/bf16/compiled/128/128/1"].params,
                         dict(dtype="bf16", prompt=128, new=128, batch=1, compiled=True))
        self.assertEqual(cases["sd15/unet_step/fp16/compiled/1/512"].params,
                         dict(what="unet_step", dtype="fp16", images=1, res=512, compiled=True))
        self.assertEqual([name for name, _ in plan.left_out], ["sd15/image/fp16/graph/1/512"])

    def test_torch_reference_takes_a_compile_mode_and_refuses_another(self):
        r = subprocess.run([sys.executable, os.path.join(TOOLS, "torch_reference.py"), "--out", os.devnull,
                            "--compile-mode", "fastest", "--list"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--compile-mode", r.stderr)


if __name__ == "__main__":
    unittest.main()
