"""The same operations as cubench, in PyTorch eager, timed the way cubench times them.

CUDA events around each call on the current stream, warm-up first, an L2 flush before every
sample for `cold` cases, several repetitions; written as Google Benchmark JSON (iteration rows
plus mean/median/stddev/cv aggregates), so compare.py and cubench's tools read it like a cubench
result. Names follow cubench's: `gemm/<dtype>/<m>/<n>/<k>/manual_time` is torch.mm (torch._scaled_mm
for fp8), `sigmoid/torch/<dtype>/<n>/<cold|hot>/manual_time` is torch.sigmoid(x, out=y),
`svd/torch/<dtype>/<n>/manual_time` is torch.linalg.svd, `resnet50_train/<precision>/<format>/<res>/<batch>`
is one torchvision ResNet-50 training step (SGD momentum 0.9, lr 0.1; amp_fp16 with GradScaler)
with peak memory,
`resnet50_infer/<precision>/<format>/eager/<batch>` is torchvision's ResNet-50 forward in eval mode
under inference_mode (the model and input in fp16/bf16 for those precisions, no autocast) with peak
memory from after its first forward and first_forward_ms, that first forward's host time,
`llama_decode/<dtype>/eager/<prompt>/<new>/<batch>` is transformers' LlamaForCausalLM at LLaMA-7B's
configuration (random weights, StaticCache, a greedy loop by hand) with per-step counters,
`bert_train/<precision>/<seq>/<batch>` is one transformers BertForMaskedLM(BertConfig()) training
step (attn_implementation="sdpa", AdamW lr 1e-4 wd 0.01; amp_fp16 with GradScaler) with peak memory,
`transformer_fwd/<mode>/sdpa/<batch>` is nn.Transformer's forward (python's layers use
scaled_dot_product_attention) with peak memory from torch.cuda.max_memory_allocated,
`torch/attention/<backend>/<pass>/<dtype>/<mask>/<head_dim>/<seq>` is F.scaled_dot_product_attention
under sdpa_kernel(<backend>) as cubench's LibTorch rows of the same name (16384 tokens, width
2048, Q K V (b, s, h, d) passed transposed; fwd_bwd adds torch.autograd.grad(O, (Q, K, V), dO)),
`conv/fwd/<dtype>/<r>/<stride>/<c>/<k>/<hw>` is F.conv2d at batch 256, channels_last, under
cudnn.benchmark (cuDNN's TF32 on for tf32 only), to set against cubench's conv and conv_autotune
rows, `gemm_decode/bf16/<N>x<K>/<m>` is F.linear(X[m x K], W[N x K]) with the L2 flushed before
each sample, and `sd15/<what>/<dtype>/eager/<images>/<resolution>` is Stable Diffusion v1.5 as
cubench's sd15 rows run it, with diffusers' own UNet2DConditionModel, AutoencoderKL and
DDIMScheduler and transformers' CLIPTextModel (configurations built in code, random weights made on
the GPU in the dtype, random token ids: no download, no tokenizer; without diffusers each is a
reported error row), with per-stage counters, peak memory and energy_per_run_J (NVML's energy
counter over the samples). Each repetition's row carries the SM clock and power cap of its samples
(sm_clock_MHz, power_capped_pct: NVML polled every 10 ms, as cubench does).

The cases are cubench's own: the configurations of those families that a build of cubench lists
(`cubench --cubench_list=axes --cubench_suite=full`, the binary --cubench-binary names), each read
from its axes (tools/cubench_tools/torch_cases.py), so a value a family adds is a case here
without an edit, and a family the build leaves out (the LibTorch ones without a CUDA LibTorch, conv
without cuDNN) has none. --left-out prints the configurations of those families that get no case,
and why (graph rows, fp8 decode, conv's backward passes and the layers the default run leaves out).

    python3 tools/torch_reference.py --filter gemm --repetitions 5 --out torch.json

Flags and --out are checked before PyTorch is loaded or anything runs: a bad one, or a binary that
does not list, is one line on stderr and status 2; no GPU for PyTorch is status 3. --list and
--left-out need no PyTorch.
"""
import datetime
import json
import os
import re
import statistics
import sys

from . import axes_listing, cli, torch_cases, torch_compile
from .input_error import InputError
from .torch_families import dtypes, make_op
from .torch_timing import time_case

PROG = "tools/torch_reference.py"


def parse_args(argv):
    p = cli.parser(PROG, __doc__)
    p.add_argument("--out", required=True, help="JSON file to write")
    p.add_argument("--filter", default=".", help="regex on benchmark names (default: all)")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.2, help="seconds of samples per repetition")
    p.add_argument("--min-samples", type=int, default=3,
                   help="samples per repetition at least (1 for a case that is a whole generation)")
    p.add_argument("--warmup", type=int, default=3, help="untimed calls before the first repetition")
    p.add_argument("--compile-mode", choices=torch_compile.MODES, default="default",
                   help="torch.compile's mode for the compiled rows (the modules cubench's "
                        "compiled rows load as AOTInductor packages; compiled_modules.py)")
    p.add_argument("--list", action="store_true", help="print the names and exit")
    p.add_argument("--left-out", action="store_true",
                   help="print each cubench configuration of the families here that has no case, "
                        "tab-separated from why, and exit")
    p.add_argument("--cubench-binary", "--cubench_binary", dest="cubench_binary",
                   default=axes_listing.DEFAULT_BINARY, metavar="PATH",
                   help="the cubench whose listing (--cubench_list=axes --cubench_suite=full) gives "
                        "the cases (default: build/cuda-13.0/cubench)")
    args = p.parse_args(argv)
    if args.repetitions < 1:
        raise InputError(f"--repetitions wants a count of at least 1, got {args.repetitions}")
    if args.min_samples < 1:
        raise InputError(f"--min-samples wants a count of at least 1, got {args.min_samples}")
    if args.warmup < 0:
        raise InputError(f"--warmup wants a count of at least 0, got {args.warmup}")
    if not 0 <= args.min_time < 3600:
        raise InputError(f"--min-time wants seconds from 0 to 3600, got {args.min_time}")
    try:
        args.filter_regex = re.compile(args.filter)
    except re.error as e:
        raise InputError(f"--filter is not a valid regex: {e}")
    if not (args.list or args.left_out):  # before any case runs: a bad path found after an hour of work is lost work
        cli.check_output_file(args.out, "--out")
    return args




def main(argv):
    args = parse_args(argv)
    torch_compile.mode = args.compile_mode
    plan = torch_cases.plan(axes_listing.run(args.cubench_binary, option="--cubench-binary"))
    if args.left_out:
        for name, why in plan.left_out:
            if args.filter_regex.search(name + "/manual_time"):
                print(f"{name}/manual_time\t{why}")
        return 0
    selected = [c for c in plan.cases if args.filter_regex.search(c.name + "/manual_time")]
    if not selected:
        lacking = (f"; {args.cubench_binary} lists none of {', '.join(plan.absent)} (a build without "
                   "CUDA LibTorch or cuDNN: its not_built says why)") if plan.absent else ""
        raise InputError(f"--filter '{args.filter}' matches no case (--list shows them){lacking}")
    if args.list:
        print("\n".join(c.name + "/manual_time" for c in selected))
        return 0
    try:
        import torch
    except ImportError:
        raise InputError("PyTorch is not installed for this python")
    dt = dtypes(torch)
    if not torch.cuda.is_available():
        return cli.fail(PROG, "no CUDA GPU visible to PyTorch", 3)
    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 64 << 20)
    context = {"date": datetime.datetime.now().isoformat(), "executable": "tools/torch_reference.py",
               "framework": "pytorch eager", "torch": torch.__version__, "cuda_runtime": torch.version.cuda,
               "cudnn": str(torch.backends.cudnn.version()), "gpu": props.name,
               "library_build_type": "release"}
    rows = []
    for case in selected:
        kind, a = case.kind, case.params
        full = case.name + "/manual_time"
        op = flush = None
        try:
            # Peaks as cubench's: only this case's model, inputs and workspaces counted, so the
            # flush buffer exists only for a cold case and earlier cases' cuBLAS workspaces
            # (kept per handle and stream) are released first.
            if hasattr(torch._C, "_cuda_clearCublasWorkspaces"):
                torch._C._cuda_clearCublasWorkspaces()
            torch.cuda.empty_cache()
            if a.get("cold", False):
                flush = torch.empty(2 * l2_bytes // 4, device="cuda")
            torch.cuda.reset_peak_memory_stats()
            op, flops, nbytes = make_op(torch, dt, kind, a)
            at_start = torch.cuda.memory_allocated()  # model and inputs, before the first call
            reps = time_case(torch, op, a.get("cold", False), args, flush)
            extra = {}
            if getattr(op, "images", 0):
                extra["images_per_s"] = lambda sec, n=op.images: n / sec
            if getattr(op, "ms_per_image", False):
                extra["ms_per_image"] = lambda sec, n=op.images: sec * 1e3 / n
            if getattr(op, "steps", 0):
                extra["it_per_s"] = lambda sec, n=op.steps: n / sec
            if hasattr(op, "first_forward_ms"):
                extra["first_forward_ms"] = lambda sec, v=op.first_forward_ms: v
            if getattr(op, "tokens", 0):
                extra["tokens_per_s"] = lambda sec, n=op.tokens: n / sec
            for key, value in getattr(op, "counters", dict)().items():  # after the timed runs
                extra[key] = lambda sec, v=value: v
            if getattr(op, "samples", 0):
                extra["samples_per_s"] = lambda sec, n=op.samples: n / sec
            if getattr(op, "memory", False):
                peak_alloc, peak_res = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
                extra["peak_allocated_bytes"] = lambda sec, v=peak_alloc: v
                extra["peak_reserved_bytes"] = lambda sec, v=peak_res: v
                extra["allocated_at_start_bytes"] = lambda sec, v=at_start: v
        except Exception as e:  # noqa: BLE001 - an unsupported case is a reported row, not a crash
            rows.append({"name": full, "run_name": full, "run_type": "iteration", "repetitions": args.repetitions,
                         "repetition_index": 0, "threads": 1, "iterations": 0, "real_time": 0, "cpu_time": 0,
                         "time_unit": "us", "error_occurred": True, "error_message": f"{type(e).__name__}: {e}"})
            print(f"{full}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        finally:
            getattr(op, "close", lambda: None)()  # what the case switched, switched back
            op = flush = None  # freed; the next case's empty_cache() gives the memory back
        times = []
        for i, (sec, iters, figures) in enumerate(reps):
            row = {"name": full, "family_index": 0, "run_name": full, "run_type": "iteration",
                   "repetitions": args.repetitions, "repetition_index": i, "threads": 1,
                   "iterations": iters, "real_time": sec * 1e6, "cpu_time": sec * 1e6, "time_unit": "us",
                   "label": (f"PyTorch torch.compile {args.compile_mode}" if case.params.get("compiled")
                             else "PyTorch eager")}
            if flops:
                row["TFLOPS"] = flops / sec / 1e12
            if nbytes:
                row["GBps"] = nbytes / sec / 1e9
            row.update(figures)  # sm_clock_MHz, power_capped_pct: the conditions of these samples
            for key, value in extra.items():
                row[key] = value(sec)
            rows.append(row)
            times.append(sec * 1e6)
        mean = statistics.fmean(times)
        sd = statistics.stdev(times) if len(times) > 1 else 0.0
        for agg, val in (("mean", mean), ("median", statistics.median(times)), ("stddev", sd),
                         ("cv", sd / mean if mean else 0.0)):
            row = {"name": f"{full}_{agg}", "run_name": full, "run_type": "aggregate",
                   "repetitions": args.repetitions, "threads": 1, "aggregate_name": agg,
                   "aggregate_unit": "percentage" if agg == "cv" else "time",
                   "iterations": len(times), "real_time": val, "cpu_time": val, "time_unit": "us"}
            if agg in ("mean", "median") and (flops or nbytes):
                if flops:
                    row["TFLOPS"] = flops / (val * 1e-6) / 1e12
                if nbytes:
                    row["GBps"] = nbytes / (val * 1e-6) / 1e9
            rows.append(row)
        print(f"{full}: median {statistics.median(times):.2f} us", file=sys.stderr, flush=True)
        # Written after every case, so a run cut short by a deadline still leaves what it measured.
        write_results(args.out, context, rows)
    write_results(args.out, context, rows)
    return 0


def write_results(path, context, rows):
    with open(path + ".tmp", "w") as f:
        json.dump({"context": context, "benchmarks": rows}, f, indent=1)
    os.replace(path + ".tmp", path)

