#!/usr/bin/env python3
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
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cubench_tools import axes_listing, cli, torch_cases  # noqa: E402
from cubench_tools.results import InputError  # noqa: E402

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
    p.add_argument("--compile-mode", choices=("default", "max-autotune"), default="default",
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


# What the ops need besides a configuration's axes, which cubench does not vary (so they are no
# axes of its families) and which must match its fixed values: torch/attention's tokens and width
# (benchmarks/attention.torch.cpp: batch = tokens / seq, heads = width / head_dim); conv's batch
# (benchmarks/conv.cudnn.cpp); sd15's steps, guidance, prompt tokens and VAE scale
# (benchmarks/sd15.torch.cpp).
ATTENTION_TOKENS, ATTENTION_WIDTH = 16384, 2048
CONV_BATCH = 256
SD15_STEPS, SD15_GUIDANCE, SD15_TOKENS, SD15_VAE_SCALE = 20, 7.5, 77, 0.18215


COMPILE_MODE = "default"  # --compile-mode, set by main()


def compiled(torch, module):
    """torch.compile of a compiled row's module in --compile-mode (Dynamo and Inductor, warm after
    the first call; the first call's compile is in first_forward_ms / first_run_ms)."""
    return torch.compile(module, mode=None if COMPILE_MODE == "default" else COMPILE_MODE,
                         dynamic=False)  # fixed shapes, as the packages: one graph per shape


def dtypes(torch):
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def make_op(torch, dt, kind, a):
    """Returns (op, flops, bytes) with inputs on the GPU and fresh random data."""
    dev = "cuda"
    if kind == "gemm":
        m, n, k = a["m"], a["n"], a["k"]
        torch.backends.cuda.matmul.allow_tf32 = a["dtype"] == "tf32"
        if a["dtype"] == "fp8":
            x = (torch.rand(m, k, device=dev) * 2 - 1).to(torch.float8_e4m3fn)
            w = (torch.rand(n, k, device=dev) * 2 - 1).to(torch.float8_e4m3fn)
            one = torch.ones((), device=dev)
            op = lambda: torch._scaled_mm(x, w.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        else:
            x = torch.rand(m, k, device=dev, dtype=dt[a["dtype"]]) * 2 - 1
            w = torch.rand(k, n, device=dev, dtype=dt[a["dtype"]]) * 2 - 1
            op = lambda: torch.mm(x, w)
        return op, 2.0 * m * n * k, 0.0
    if kind == "sigmoid":
        x = torch.rand(a["n"], device=dev, dtype=dt[a["dtype"]]) * 16 - 8
        y = torch.empty_like(x)
        return (lambda: torch.sigmoid(x, out=y)), 0.0, 2.0 * x.numel() * x.element_size()
    if kind == "svd":
        t = torch.float64 if a["dtype"] == "fp64" else torch.float32
        x = torch.rand(a["n"], a["n"], device=dev, dtype=t) * 2 - 1
        return (lambda: torch.linalg.svd(x, full_matrices=False)), 0.0, 0.0
    if kind == "resnet":
        return resnet_step(torch, a), 0.0, 0.0
    if kind == "resnet_infer":
        return resnet_forward(torch, dt, a), 0.0, 0.0
    if kind == "transformer":
        return transformer_forward(torch, a), 0.0, 0.0
    if kind == "llama":
        if a.get("compiled"):
            return llama_compiled(torch, a), 0.0, 0.0
        return llama_generate(torch, dt, a), 0.0, 0.0
    if kind == "bert":
        return bert_step(torch, a), 0.0, 0.0
    if kind == "sd15":
        return sd15(torch, dt, a), 0.0, 0.0
    if kind == "attention":
        return attention(torch, dt, a)
    if kind == "conv":
        return conv(torch, dt, a)
    if kind == "gemm_decode":
        x = torch.rand(a["m"], a["k"], device=dev, dtype=dt[a["dtype"]]) * 2 - 1
        w = torch.rand(a["n"], a["k"], device=dev, dtype=dt[a["dtype"]]) * 2 - 1
        linear = torch.nn.functional.linear
        op = lambda: linear(x, w)
        # cubench's model: the weights and X read once, Y written once
        nbytes = (a["n"] * a["k"] + a["m"] * a["k"] + a["m"] * a["n"]) * x.element_size()
        return op, 2.0 * a["m"] * a["n"] * a["k"], float(nbytes)
    raise ValueError(kind)


def train_step(torch, precision, opt, loss_of):
    """One training step as python writes it: zero_grad (set to none), the loss under autocast
    (fp16 or bf16 for amp_*), backward and the optimizer step through GradScaler (a no-op but for
    amp_fp16). loss_of() runs the forward and returns the loss."""
    amp = precision.startswith("amp_")
    dtype = torch.bfloat16 if precision == "amp_bf16" else torch.float16
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "amp_fp16")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype, enabled=amp):
            loss = loss_of()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return step


def resnet_step(torch, a):
    import torchvision  # the GPU machine's python has it
    classes = 1000 if a["res"] == 224 else 10
    torch.backends.cuda.matmul.allow_tf32 = a["precision"] == "tf32"
    torch.backends.cudnn.allow_tf32 = a["precision"] == "tf32"
    torch.backends.cudnn.benchmark = True
    fmt = torch.channels_last if a["channels_last"] else torch.contiguous_format
    model = torchvision.models.resnet50(num_classes=classes).cuda().to(memory_format=fmt)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(a["batch"], 3, a["res"], a["res"], device="cuda").to(memory_format=fmt)
    y = torch.randint(classes, (a["batch"],), device="cuda")
    step = train_step(torch, a["precision"], opt, lambda: torch.nn.functional.cross_entropy(model(x), y))
    step.images = a["batch"]
    step.memory = True
    return step


def resnet_forward(torch, dt, a):
    """cubench's resnet50_infer eager: the first forward timed on the host (synchronised on both
    sides) before any warm-up, then the peaks restarted as cubench restarts them after its check
    (cache emptied, cuBLAS workspaces released), so both count the forwards alone."""
    import torchvision  # the GPU machine's python has it
    torch.backends.cuda.matmul.allow_tf32 = a["precision"] == "tf32"
    torch.backends.cudnn.allow_tf32 = a["precision"] == "tf32"
    torch.backends.cudnn.benchmark = True
    fmt = torch.channels_last if a["channels_last"] else torch.contiguous_format
    dtype = dt[a["precision"]]
    model = torchvision.models.resnet50(num_classes=1000).eval().cuda().to(dtype).to(memory_format=fmt)
    if a.get("compiled"):
        model = compiled(torch, model)
    x = torch.randn(a["batch"], 3, 224, 224, device="cuda").to(memory_format=fmt).to(dtype)

    def forward():
        with torch.inference_mode():
            model(x)
    torch.cuda.synchronize()
    start = time.perf_counter()
    forward()
    torch.cuda.synchronize()
    forward.first_forward_ms = (time.perf_counter() - start) * 1e3
    if hasattr(torch._C, "_cuda_clearCublasWorkspaces"):
        torch._C._cuda_clearCublasWorkspaces()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    forward.images = a["batch"]
    forward.memory = True
    return forward


def llama_generate(torch, dt, a):
    """cubench's llama_decode eager: transformers' LlamaForCausalLM at LLaMA-7B's configuration,
    random weights made on the GPU in the dtype, a StaticCache of prompt + new tokens, and a greedy
    loop by hand: the prompt's prefill keeping its last logits (logits_to_keep=1), then one token
    per forward, argmax on the device. CUDA events between the steps give the same counters as
    cubench's (the first generation, before the peaks restart, is not counted)."""
    from transformers import LlamaConfig, LlamaForCausalLM, StaticCache  # the GPU machine has it
    config = LlamaConfig(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                         num_attention_heads=32, num_key_value_heads=32, vocab_size=32000,
                         rms_norm_eps=1e-6, max_position_embeddings=4096)
    dtype = dt[a["dtype"]]
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("cuda"):
            model = LlamaForCausalLM(config).eval()
    finally:
        torch.set_default_dtype(default)
    b, prompt, new = a["batch"], a["prompt"], a["new"]
    cache = StaticCache(config=config, max_cache_len=prompt + new)
    ids = torch.randint(config.vocab_size, (b, prompt), device="cuda")
    positions = torch.arange(prompt + new, device="cuda")
    events = [torch.cuda.Event(enable_timing=True) for _ in range(new + 1)]
    prefills, steps, pending = [], [], [False]

    def collect():
        if pending[0]:
            events[-1].synchronize()
            times = [events[i - 1].elapsed_time(events[i]) for i in range(1, new + 1)]
            prefills.append(times[0])
            steps.extend(times[1:])
            pending[0] = False

    from torch.nn.attention import SDPBackend, sdpa_kernel

    def generate():
        collect()
        # The memory-efficient attention kernel, as cubench's: left to choose, 2.11 takes cuDNN's
        # at batch 32, whose results differ call to call (in 15 pairs of calls of 20 on the H200).
        with torch.inference_mode(), sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
            cache.reset()
            events[0].record()
            out = model(input_ids=ids, past_key_values=cache, cache_position=positions[:prompt],
                        use_cache=True, logits_to_keep=1)
            token = out.logits[:, -1].argmax(-1, keepdim=True)
            events[1].record()
            for i in range(1, new):
                pos = prompt + i - 1
                out = model(input_ids=token, past_key_values=cache,
                            cache_position=positions[pos:pos + 1], use_cache=True)
                token = out.logits[:, -1].argmax(-1, keepdim=True)
                events[i + 1].record()
        pending[0] = True

    generate()  # as cubench's check: kernels loaded, the cache's tensors made
    torch.cuda.synchronize()
    pending[0] = False
    if hasattr(torch._C, "_cuda_clearCublasWorkspaces"):
        torch._C._cuda_clearCublasWorkspaces()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()

    def median(v, q=0.5):
        v = sorted(v)
        return v[min(len(v) - 1, int(q * len(v)))] if v else 0.0

    def counters():
        collect()
        out = {"ttft_ms": median(prefills), "token_ms_median": median(steps),
               "token_ms_p99": median(steps, 0.99),
               "parameters": float(sum(p.numel() for p in model.parameters()))}
        layers = getattr(cache, "layers", [])
        kv = sum(t.numel() * t.element_size() for l in layers
                 for t in (getattr(l, "keys", None), getattr(l, "values", None)) if t is not None)
        if kv:
            out["kv_cache_bytes"] = float(kv)
        return out
    generate.tokens = b * new
    generate.counters = counters
    generate.memory = True
    return generate


def llama_compiled(torch, a):
    """cubench's llama_decode compiled rows' module (compiled_modules.py's step, the weights under
    transformers' names, a static cache as buffers) under torch.compile: a greedy loop of a
    prefill (the prompt at once) and one token per call, argmax on the device, CUDA events
    between the steps as llama_generate's."""
    from cubench_tools.compiled_modules import build
    config = dict(family="llama_decode", name="llama_decode", dtype=a["dtype"], prompt=a["prompt"],
                  new=a["new"], batch=a["batch"])
    module, (token, _), _ = build(torch, config)
    step = compiled(torch, module)
    b, prompt, new = a["batch"], a["prompt"], a["new"]
    ids = torch.randint(32000, (b, prompt), device="cuda")
    positions = torch.arange(prompt + new, device="cuda")
    events = [torch.cuda.Event(enable_timing=True) for _ in range(new + 1)]
    prefills, steps, pending = [], [], [False]

    def collect():
        if pending[0]:
            events[-1].synchronize()
            times = [events[i - 1].elapsed_time(events[i]) for i in range(1, new + 1)]
            prefills.append(times[0])
            steps.extend(times[1:])
            pending[0] = False

    from torch.nn.attention import SDPBackend, sdpa_kernel

    def generate():
        collect()
        with torch.inference_mode(), sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
            events[0].record()
            token = step(ids, positions[:prompt]).argmax(-1)
            events[1].record()
            for i in range(1, new):
                pos = prompt + i - 1
                token = step(token, positions[pos:pos + 1]).argmax(-1)
                events[i + 1].record()
        pending[0] = True

    generate()  # the compile, for the prefill's shape and the step's
    torch.cuda.synchronize()
    pending[0] = False
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()

    def median(v, q=0.5):
        v = sorted(v)
        return v[min(len(v) - 1, int(q * len(v)))] if v else 0.0

    def counters():
        collect()
        return {"ttft_ms": median(prefills), "token_ms_median": median(steps),
                "token_ms_p99": median(steps, 0.99)}
    generate.tokens = b * new
    generate.counters = counters
    generate.memory = True
    return generate


def sd15_models(torch, dtype, what="image"):
    """SD 1.5's UNet, VAE (its decoder and post_quant_conv: the encoder dropped, as cubench builds
    the decoder alone), CLIP ViT-L/14's text encoder and DDIMScheduler, from their configurations
    in code, random weights made on the GPU in `dtype`: those `what` runs (None for the others, so
    a stage's peak memory holds its own model's weights alone, as cubench's)."""
    try:
        import diffusers
        import transformers
    except ImportError as e:
        raise RuntimeError(f"the sd15 reference needs diffusers and transformers for this python ({e}): "
                           "pip install diffusers transformers") from None
    unet_config = dict(sample_size=64, in_channels=4, out_channels=4, layers_per_block=2,
                       block_out_channels=(320, 640, 1280, 1280),
                       down_block_types=("CrossAttnDownBlock2D",) * 3 + ("DownBlock2D",),
                       up_block_types=("UpBlock2D",) + ("CrossAttnUpBlock2D",) * 3,
                       cross_attention_dim=768, attention_head_dim=8, norm_num_groups=32, norm_eps=1e-5,
                       flip_sin_to_cos=True, freq_shift=0, act_fn="silu")
    vae_config = dict(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 4,
                      up_block_types=("UpDecoderBlock2D",) * 4, block_out_channels=(128, 256, 512, 512),
                      layers_per_block=2, latent_channels=4, norm_num_groups=32, sample_size=512,
                      scaling_factor=SD15_VAE_SCALE)
    text_config = transformers.CLIPTextConfig(vocab_size=49408, hidden_size=768, intermediate_size=3072,
                                              num_hidden_layers=12, num_attention_heads=12,
                                              max_position_embeddings=SD15_TOKENS, hidden_act="quick_gelu",
                                              layer_norm_eps=1e-5, projection_dim=768)
    unet = vae = text = None
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("cuda"):
            if what in ("image", "unet_step"):
                unet = diffusers.UNet2DConditionModel(**unet_config).eval()
            if what in ("image", "vae_decode"):
                vae = diffusers.AutoencoderKL(**vae_config).eval()
                vae.encoder = vae.quant_conv = None
            if what in ("image", "text_encode"):
                text = transformers.CLIPTextModel(text_config).eval()
    finally:
        torch.set_default_dtype(default)
    scheduler = diffusers.DDIMScheduler(num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012,
                                        beta_schedule="scaled_linear", clip_sample=False,
                                        set_alpha_to_one=False, steps_offset=1)
    return unet, vae, text, scheduler


def sd15(torch, dt, a):
    """cubench's sd15 eager rows: `image` is StableDiffusionPipeline's loop written out (the text
    encoder on [unconditional, conditional] random ids, each repeated per image; 20 DDIM steps,
    eta 0, the UNet on [latents, latents], guidance 7.5; vae.decode(latents / 0.18215) and
    (x / 2 + 0.5).clamp(0, 1)), from fixed initial noise each call; `unet_step` one guided step at
    t = 951 (the UNet, guidance, scheduler.step); `vae_decode` the decode and the clamp;
    `text_encode` the text encoder at batch 2. The first run is timed on the host (synchronised on
    both sides) before any warm-up (first_image_ms, first_run_ms); the peaks restart after it, as
    cubench's after its check. Image rows: CUDA events between the stages give text_encode_ms,
    denoise_ms, vae_decode_ms, step_ms and it_per_s (the steps over the denoising loop)."""
    dtype = dt[a["dtype"]]
    torch.backends.cudnn.benchmark = False  # diffusers' (PyTorch's) default; resnet's cases turn it on
    what, n = a["what"], a["images"]
    unet, vae, text, scheduler = sd15_models(torch, dtype, what)
    if a.get("compiled"):  # diffusers' recipe: the UNet alone compiled
        unet = compiled(torch, unet)
    side = a["res"] // 8
    ids = torch.randint(49408, (2, SD15_TOKENS), device="cuda")
    noise = torch.randn(n, 4, side, side, device="cuda", dtype=dtype)
    context = torch.randn(2 * n, SD15_TOKENS, 768, device="cuda", dtype=dtype)
    scheduler.set_timesteps(SD15_STEPS, device="cuda")
    events = [torch.cuda.Event(enable_timing=True) for _ in range(SD15_STEPS + 3)]
    runs, pending = [], [False]

    def encode():
        return text(ids)[0].repeat_interleave(n, 0)

    def step(latents, t, ctx):
        eps = unet(torch.cat([latents] * 2), t, encoder_hidden_states=ctx).sample
        uncond, cond = eps.chunk(2)
        return scheduler.step(uncond + SD15_GUIDANCE * (cond - uncond), t, latents).prev_sample

    def decode(latents):
        return (vae.decode(latents / SD15_VAE_SCALE).sample / 2 + 0.5).clamp(0, 1)

    def collect():
        if pending[0]:
            events[-1].synchronize()
            runs.append([events[0].elapsed_time(e) for e in events])
            pending[0] = False

    def image():
        collect()
        events[0].record()
        ctx = encode()
        events[1].record()
        latents = noise * scheduler.init_noise_sigma
        for i, t in enumerate(scheduler.timesteps):
            latents = step(latents, t, ctx)
            events[2 + i].record()
        decode(latents)
        events[-1].record()
        pending[0] = True

    def op():
        with torch.inference_mode():
            if what == "image":
                image()
            elif what == "unet_step":
                step(noise, scheduler.timesteps[0], context)
            elif what == "vae_decode":
                decode(noise)
            else:
                encode()

    torch.cuda.synchronize()
    start = time.perf_counter()
    op()
    torch.cuda.synchronize()
    first_ms = (time.perf_counter() - start) * 1e3
    pending[0] = False
    if hasattr(torch._C, "_cuda_clearCublasWorkspaces"):
        torch._C._cuda_clearCublasWorkspaces()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()

    def median(v):
        v = sorted(v)
        return v[len(v) // 2] if v else 0.0

    def counters():
        collect()
        out = {"first_image_ms" if what == "image" else "first_run_ms": first_ms,
               "parameters": float(sum(p.numel() for m in (unet, vae, text) if m is not None
                                       for p in m.parameters()))}
        if what == "image" and runs:
            last = SD15_STEPS + 1
            denoise = median([r[last] - r[1] for r in runs])
            out.update(text_encode_ms=median([r[1] for r in runs]), denoise_ms=denoise,
                       vae_decode_ms=median([r[last + 1] - r[last] for r in runs]),
                       step_ms=median([r[i + 1] - r[i] for r in runs for i in range(1, last)]),
                       it_per_s=SD15_STEPS / (denoise * 1e-3) if denoise > 0 else 0.0)
        return out
    op.counters = counters
    op.memory = True
    op.energy = True
    if what in ("image", "vae_decode"):
        op.images = n
        op.ms_per_image = what == "image"
    if what == "unet_step":
        op.steps = 1
    return op


def bert_step(torch, a):
    """One BertForMaskedLM training step on cubench's synthetic batch: random ids and token types,
    no padding (no attention mask), round(0.15 seq) random positions per sequence labelled with
    random ids, -100 elsewhere; torch.optim.AdamW with python's default (foreach on CUDA)."""
    import transformers  # the GPU machine's python has it
    torch.backends.cuda.matmul.allow_tf32 = a["precision"] == "tf32"
    torch.backends.cudnn.allow_tf32 = a["precision"] == "tf32"
    config = transformers.BertConfig()
    model = transformers.BertForMaskedLM._from_config(config, attn_implementation="sdpa").cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    batch, seq = a["batch"], a["seq"]
    ids = torch.randint(config.vocab_size, (batch, seq), device="cuda")
    types = torch.randint(config.type_vocab_size, (batch, seq), device="cuda")
    positions = torch.rand(batch, seq, device="cuda").topk(max(1, round(0.15 * seq)), dim=1).indices
    labels = torch.full((batch, seq), -100, device="cuda").scatter(
        1, positions, torch.randint(config.vocab_size, positions.shape, device="cuda"))
    step = train_step(torch, a["precision"], opt,
                      lambda: model(input_ids=ids, token_type_ids=types, labels=labels).loss)
    step.samples = batch
    step.tokens = batch * seq
    step.memory = True
    return step


def transformer_forward(torch, a):
    torch.backends.cuda.matmul.allow_tf32 = False
    model = torch.nn.Transformer(d_model=512, nhead=8).cuda()  # sequence-first, as the C++ module
    model.train(a["train"])
    x = torch.randn(512, a["batch"], 512, device="cuda")

    def forward():
        if a["train"]:
            model.zero_grad(set_to_none=True)
            model(x, x).mean().backward()
        else:
            with torch.no_grad():
                model(x, x)
    forward.memory = True
    return forward


def attention(torch, dt, a):
    """cubench's torch/attention: Q, K, V stored (b, s, h, d), passed as (b, h, s, d) views; only
    the named backend allowed while the case lives (op.close gives the switches back)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    torch.backends.cuda.matmul.allow_tf32 = False  # the math backend's fp32 matmuls, as cubench's
    s, d = a["seq"], a["d"]
    b, h = ATTENTION_TOKENS // s, ATTENTION_WIDTH // d
    q, k, v, do = (torch.randn(b, s, h, d, device="cuda").to(dt[a["dtype"]]) for _ in range(4))
    if a["train"]:
        q, k, v = (t.requires_grad_() for t in (q, k, v))
    backend = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
               "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}[a["backend"]]
    sdpa = torch.nn.functional.scaled_dot_product_attention
    causal, train = a["causal"], a["train"]

    def op():
        o = sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal)
        if train:
            torch.autograd.grad(o, (q, k, v), do.transpose(1, 2))
    scope = sdpa_kernel(backend)
    scope.__enter__()
    op.close = lambda: scope.__exit__(None, None, None)
    op.memory = True
    flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0) * (3.5 if train else 1.0)
    return op, flops, 0.0


def conv(torch, dt, a):
    """F.conv2d forward, NHWC (channels_last) as cubench's, batch 256, cudnn.benchmark on (cuDNN's
    fastest plan, timed by PyTorch at the first call); the switches given back by op.close."""
    was = torch.backends.cudnn.benchmark, torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = a["dtype"] == "tf32"
    r, s, c, k, hw = a["r"], a["stride"], a["c"], a["k"], a["hw"]
    x = torch.randn(CONV_BATCH, c, hw, hw, device="cuda").to(dt[a["dtype"]]).to(memory_format=torch.channels_last)
    w = torch.randn(k, c, r, r, device="cuda").to(dt[a["dtype"]]).to(memory_format=torch.channels_last)
    conv2d = torch.nn.functional.conv2d
    op = lambda: conv2d(x, w, stride=s, padding=r // 2)

    def close():
        torch.backends.cudnn.benchmark, torch.backends.cudnn.allow_tf32 = was
    op.close = close
    out = (hw + 2 * (r // 2) - r) // s + 1
    return op, 2.0 * CONV_BATCH * k * c * r * r * out * out, 0.0


class Conditions:
    """The SM clock and the software power cap while a repetition's samples run, polled from NVML
    every 10 ms on a thread (as cubench polls its conditions), so that a row here says the clock its
    time ran at and the tools can set cycles against cycles: sm_clock_MHz (the mean of the polls)
    and power_capped_pct (polls that found the software power cap holding the clock). Nothing is
    claimed where NVML (pynvml) cannot be read."""

    POWER_CAP = 0x4  # nvmlClocksEventReasonSwPowerCap

    def __init__(self):
        self.nvml = self.handle = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or 0))
        except Exception:  # noqa: BLE001 - no pynvml or no NVML: no clock figure, said by its absence
            self.nvml = None

    def reasons(self):
        n = self.nvml
        fn = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or n.nvmlDeviceGetCurrentClocksThrottleReasons
        return fn(self.handle)

    def during(self, work, energy=False):
        """Runs work() while polling; returns (its result, {counter: value}). With `energy`, also
        energy_J: NVML's total-energy counter's rise over the work (it moves in steps of up to
        ~100 ms: a window of seconds, as a whole image's samples, holds that to a few %)."""
        if self.nvml is None:
            return work(), {}
        joules = None
        if energy:
            try:
                joules = self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle)
            except Exception:  # noqa: BLE001 - no energy counter on this GPU: no figure
                joules = None
        import threading
        clocks, capped, stop = [], [], threading.Event()

        def poll():
            while not stop.is_set():
                try:
                    clocks.append(self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM))
                    capped.append(bool(self.reasons() & self.POWER_CAP))
                except Exception:  # noqa: BLE001 - one failed poll is not a figure
                    pass
                stop.wait(0.01)
        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        try:
            result = work()
        finally:
            stop.set()
            thread.join()
        figures = {}
        if joules is not None:
            try:
                figures["energy_J"] = (self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle) - joules) / 1e3
            except Exception:  # noqa: BLE001 - no figure
                pass
        if clocks:
            figures["sm_clock_MHz"] = statistics.fmean(clocks)
            figures["power_capped_pct"] = 100.0 * sum(capped) / len(capped)
        return result, figures


CONDITIONS = None


def time_case(torch, op, cold, args, flush):
    repetitions, min_time = args.repetitions, args.min_time
    for _ in range(args.warmup):  # handles, heuristics, module load
        op()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    reps = []
    global CONDITIONS
    if CONDITIONS is None:
        CONDITIONS = Conditions()
    for _ in range(repetitions):
        def samples_of():
            samples, total = [], 0.0
            while total < min_time or len(samples) < args.min_samples:
                if cold:
                    flush.add_(1)
                start.record()
                op()
                stop.record()
                stop.synchronize()
                s = start.elapsed_time(stop) * 1e-3
                samples.append(s)
                total += s
            return samples
        samples, figures = CONDITIONS.during(samples_of, energy=getattr(op, "energy", False))
        if "energy_J" in figures:  # per run, as cubench's energy_per_run_J
            figures["energy_per_run_J"] = figures.pop("energy_J") / len(samples)
        reps.append((statistics.fmean(samples), len(samples), figures))
    return reps


def main(argv):
    args = parse_args(argv)
    global COMPILE_MODE
    COMPILE_MODE = args.compile_mode
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


if __name__ == "__main__":
    sys.exit(cli.run(PROG, main))
