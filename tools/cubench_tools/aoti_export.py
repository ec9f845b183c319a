"""Make the AOTInductor packages that cubench's compiled rows load.

  tools/aoti-export [--out DIR] [--package NAME ...] [--mode default|max-autotune] [--list]

Each package is a module of a compiled row (tools/cubench_tools/compiled_modules.py names them:
resnet50_infer-bf16-channels_last-256, sd15_unet-fp16-1-512, llama_decode-bf16-128-128-1, ...)
built at its configuration with random weights, exported by torch.export at its fixed shapes and
compiled by Inductor ahead of time (torch._inductor.aoti_compile_and_package) into NAME.pt2 in
--out, with the weights left out (cubench hands the package its own model's weights by name) and
the PyTorch that made it in the package's metadata. Without --package: the default run's
(--list prints them).

Run it with the python of the PyTorch install whose LibTorch the cubench build links: a package
runs only under the version that made it, on the kind of GPU it was made on (the build says so in
the row otherwise). The default --out is build/cuda-13.0/aoti, where the default build looks;
tools/run-matrix --torch makes each install's in its own build folder.

Beside each package, NAME.json: the install (torch, CUDA, GPU), the mode, the constants' names,
seconds to export and to compile, the peak memory of making it (device: PyTorch's allocator;
host: the process's resident peak so far) — a compile is a cost a user pays — and the package's size.
(The package is not loaded here: PyTorch 2.11's aoti_load_package, handed a decode step's
tensors in the process that compiled it, ended that process with a segmentation fault on an
H100; the C++ rows' checks judge what a package computes.) One line
per package on stdout; a package that fails says why on stderr and the others are still made
(exit status 1 then)."""
import json
import os
import resource
import sys
import time

from . import cli
from .checkout import ROOT
from .compiled_modules import DEFAULT_PACKAGES, build, constant_names, parse_package
from .input_error import InputError

DEFAULT_OUT = os.path.join(ROOT, "build", "cuda-13.0", "aoti")
MODES = ("default", "max-autotune")


def parse_args(argv):
    p = cli.parser("tools/aoti-export", __doc__)
    p.add_argument("--out", default=DEFAULT_OUT, help=f"folder of the packages (default {DEFAULT_OUT})")
    p.add_argument("--package", action="append", default=[], metavar="NAME",
                   help="a package to make (repeatable; default: the default run's)")
    p.add_argument("--mode", choices=MODES, default="default",
                   help="Inductor's mode: default, or max-autotune (Triton and cuBLAS's "
                        "candidates timed at compile time; minutes longer)")
    p.add_argument("--list", action="store_true", help="print the default run's packages and exit")
    args = p.parse_args(argv)
    args.configs = [parse_package(name) for name in (args.package or DEFAULT_PACKAGES)]
    return args


def import_torch():
    """torch with CUDA and AOTInductor's packaging, or one line saying what this python lacks."""
    try:
        import torch
    except ImportError as e:
        raise InputError(f"no torch in {sys.executable} ({e}): run it with the python of the "
                         "PyTorch install whose LibTorch the build links (CUBENCH_PYTHON=...)") from None
    if not torch.cuda.is_available():
        raise InputError(f"torch {torch.__version__} in {sys.executable} sees no CUDA GPU: a "
                         "package is compiled for the GPU it runs on")
    import torch._inductor.config as inductor_config
    missing = [k for k in ("package_constants_in_so", "metadata")
               if not hasattr(inductor_config.aot_inductor, k)]
    if not hasattr(torch._inductor, "aoti_compile_and_package") or missing:
        raise InputError(f"torch {torch.__version__} cannot make packages without their weights "
                         "(aoti_compile_and_package, aot_inductor.package_constants_in_so: 2.6+)")
    return torch


def inductor_configs(torch, mode):
    configs = {"aot_inductor.package_constants_in_so": False,
               "aot_inductor.metadata": {"torch_version": torch.__version__, "cubench_mode": mode}}
    if mode == "max-autotune":
        configs["max_autotune"] = True
    return configs


def make_package(torch, config, out, mode):
    """Builds, exports and compiles one package; returns its record (NAME.json's)."""
    name = config["name"]
    path = os.path.join(out, name + ".pt2")
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    module, args, kwargs = build(torch, config)
    with torch.no_grad():
        start = time.perf_counter()
        exported = torch.export.export(module, args, kwargs)
        export_s = time.perf_counter() - start
        start = time.perf_counter()
        torch._inductor.aoti_compile_and_package(exported, package_path=path,
                                                 inductor_configs=inductor_configs(torch, mode))
        compile_s = time.perf_counter() - start
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    record = {
        "package": name, "path": path, "mode": mode, "torch_version": torch.__version__,
        "cuda": torch.version.cuda, "gpu": props.name, "capability": f"{props.major}.{props.minor}",
        "export_s": round(export_s, 3), "compile_s": round(compile_s, 3),
        "peak_device_bytes": torch.cuda.max_memory_allocated(),
        "peak_host_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "constants": constant_names(module),
        "package_bytes": os.path.getsize(path),
    }
    del module, exported
    return record


def main(argv):
    args = parse_args(argv)
    if args.list:
        print("\n".join(c["name"] for c in args.configs))
        return 0
    torch = import_torch()
    cli.output_dir(args.out, "--out")
    failed = 0
    for config in args.configs:
        try:
            record = make_package(torch, config, args.out, args.mode)
        except Exception as e:  # noqa: BLE001 - one package's failure is said, the rest still made
            failed += 1
            print(f"tools/aoti-export: {config['name']}: {cli.one_line(f'{type(e).__name__}: {e}')}",
                  file=sys.stderr)
            continue
        with open(os.path.join(args.out, config["name"] + ".json"), "w") as f:
            json.dump(record, f, indent=1)
            f.write("\n")
        print(f"{record['path']}: export {record['export_s']:.1f} s, compile {record['compile_s']:.1f} s, "
              f"peak {record['peak_device_bytes'] / 1e9:.2f} GB on the GPU, "
              f"{record['peak_host_bytes'] / 1e9:.2f} GB host, {len(record['constants'])} constants, "
              f"{record['package_bytes'] / 1e6:.1f} MB, torch {record['torch_version']}", flush=True)
    if failed:
        raise cli.WorkFailed(f"{failed} of {len(args.configs)} packages not made (above)")
    return 0
