"""What tools/torch_reference.py runs for each family it covers: one function per family, each
making its model and inputs on the GPU with fresh random data and returning (op, flops, bytes):
the call to time and the work one call does (0.0 where the family's rows report none). An op
carries what its rows report besides time as attributes: images, samples, tokens, steps (rates),
first_forward_ms, counters() (read after the timed runs), memory (peaks), energy, and close()
(what the case switched, switched back)."""
import time

from .compiled_modules import LLAMA_7B, build
from .torch_compile import compiled
from .torch_sd15 import sd15

# What the ops need besides a configuration's axes, which cubench does not vary (so they are no
# axes of its families) and which must match its fixed values: torch/attention's tokens and width
# (benchmarks/attention.torch.cpp: batch = tokens / seq, heads = width / head_dim); conv's batch
# (benchmarks/conv.cudnn.cpp). sd15's are torch_sd15.py's.
ATTENTION_TOKENS, ATTENTION_WIDTH = 16384, 2048
CONV_BATCH = 256


def dtypes(torch):
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def make_op(torch, dt, kind, a):
    """Returns (op, flops, bytes) with inputs on the GPU and fresh random data."""
    if kind not in FAMILIES:
        raise ValueError(kind)
    return FAMILIES[kind](torch, dt, a)


def gemm(torch, dt, a):
    dev = "cuda"
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


def sigmoid(torch, dt, a):
    x = torch.rand(a["n"], device="cuda", dtype=dt[a["dtype"]]) * 16 - 8
    y = torch.empty_like(x)
    return (lambda: torch.sigmoid(x, out=y)), 0.0, 2.0 * x.numel() * x.element_size()


def svd(torch, dt, a):
    t = torch.float64 if a["dtype"] == "fp64" else torch.float32
    x = torch.rand(a["n"], a["n"], device="cuda", dtype=t) * 2 - 1
    return (lambda: torch.linalg.svd(x, full_matrices=False)), 0.0, 0.0


def gemm_decode(torch, dt, a):
    x = torch.rand(a["m"], a["k"], device="cuda", dtype=dt[a["dtype"]]) * 2 - 1
    w = torch.rand(a["n"], a["k"], device="cuda", dtype=dt[a["dtype"]]) * 2 - 1
    linear = torch.nn.functional.linear
    op = lambda: linear(x, w)
    # cubench's model: the weights and X read once, Y written once
    nbytes = (a["n"] * a["k"] + a["m"] * a["k"] + a["m"] * a["n"]) * x.element_size()
    return op, 2.0 * a["m"] * a["n"] * a["k"], float(nbytes)


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


def restart_peaks(torch):
    """The peaks restarted as cubench restarts them after its check: cache emptied, cuBLAS
    workspaces released, so what follows counts the timed runs alone."""
    torch.cuda.synchronize()
    if hasattr(torch._C, "_cuda_clearCublasWorkspaces"):
        torch._C._cuda_clearCublasWorkspaces()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


class GenerationClock:
    """A greedy generation's CUDA events, as cubench's llama_decode records them between its
    steps, read after the run: the prefill's time (ttft_ms) and each decode step's (median and
    99th percentile). The memory-efficient attention kernel, as cubench's: left to choose, 2.11
    takes cuDNN's at batch 32, whose results differ call to call (15 pairs of calls of 20 on the
    H200)."""

    def __init__(self, torch, new):
        self.events = [torch.cuda.Event(enable_timing=True) for _ in range(new + 1)]
        self.new, self.prefills, self.steps, self.pending = new, [], [], False

    def collect(self):
        if self.pending:
            self.events[-1].synchronize()
            times = [self.events[i - 1].elapsed_time(self.events[i]) for i in range(1, self.new + 1)]
            self.prefills.append(times[0])
            self.steps.extend(times[1:])
            self.pending = False

    def forget(self):
        """The generation just made is not counted (the warm-up's)."""
        self.pending = False

    def generate(self, torch, prefill, step, prompt, before=lambda: None):
        """before() readies the cache (untimed), prefill() gives the first token, step(token,
        position) each next one."""
        from torch.nn.attention import SDPBackend, sdpa_kernel
        self.collect()
        with torch.inference_mode(), sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
            before()
            self.events[0].record()
            token = prefill()
            self.events[1].record()
            for i in range(1, self.new):
                token = step(token, prompt + i - 1)
                self.events[i + 1].record()
        self.pending = True

    def counters(self):
        self.collect()

        def median(v, q=0.5):
            v = sorted(v)
            return v[min(len(v) - 1, int(q * len(v)))] if v else 0.0
        return {"ttft_ms": median(self.prefills), "token_ms_median": median(self.steps),
                "token_ms_p99": median(self.steps, 0.99)}


def llama_generate(torch, dt, a):
    """cubench's llama_decode eager: transformers' LlamaForCausalLM at LLaMA-7B's configuration,
    random weights made on the GPU in the dtype, a StaticCache of prompt + new tokens, and a greedy
    loop by hand: the prompt's prefill keeping its last logits (logits_to_keep=1), then one token
    per forward, argmax on the device. CUDA events between the steps give the same counters as
    cubench's (the first generation, before the peaks restart, is not counted)."""
    from transformers import LlamaConfig, LlamaForCausalLM, StaticCache  # the GPU machine has it
    m = LLAMA_7B
    config = LlamaConfig(hidden_size=m["hidden"], intermediate_size=m["ffn"],
                         num_hidden_layers=m["layers"], num_attention_heads=m["heads"],
                         num_key_value_heads=m["heads"], vocab_size=m["vocab"],
                         rms_norm_eps=m["rms_eps"], max_position_embeddings=m["max_positions"])
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
    clock = GenerationClock(torch, new)

    def prefill():
        out = model(input_ids=ids, past_key_values=cache, cache_position=positions[:prompt],
                    use_cache=True, logits_to_keep=1)
        return out.logits[:, -1].argmax(-1, keepdim=True)

    def step(token, pos):
        out = model(input_ids=token, past_key_values=cache, cache_position=positions[pos:pos + 1],
                    use_cache=True)
        return out.logits[:, -1].argmax(-1, keepdim=True)

    def generate():
        clock.generate(torch, prefill, step, prompt, before=cache.reset)

    generate()  # as cubench's check: kernels loaded, the cache's tensors made
    clock.forget()
    restart_peaks(torch)

    def counters():
        out = dict(clock.counters(), parameters=float(sum(p.numel() for p in model.parameters())))
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


def llama_compiled(torch, a):
    """cubench's llama_decode compiled rows' module (compiled_modules.py's step, the weights under
    transformers' names, a static cache as buffers) under torch.compile: a greedy loop of a
    prefill (the prompt at once) and one token per call, argmax on the device, timed as
    llama_generate's."""
    config = dict(family="llama_decode", name="llama_decode", dtype=a["dtype"], prompt=a["prompt"],
                  new=a["new"], batch=a["batch"])
    module, _, _ = build(torch, config)
    model = compiled(torch, module)
    b, prompt, new = a["batch"], a["prompt"], a["new"]
    ids = torch.randint(LLAMA_7B["vocab"], (b, prompt), device="cuda")
    positions = torch.arange(prompt + new, device="cuda")
    clock = GenerationClock(torch, new)

    def generate():
        clock.generate(torch, lambda: model(ids, positions[:prompt]).argmax(-1),
                       lambda token, pos: model(token, positions[pos:pos + 1]).argmax(-1), prompt)

    generate()  # the compile, for the prefill's shape and the step's
    clock.forget()
    restart_peaks(torch)
    generate.tokens = b * new
    generate.counters = clock.counters
    generate.memory = True
    return generate


# Each kind of case (torch_cases.py's) to its family's function: a family added here is one entry.
FAMILIES = {
    "gemm": gemm,
    "sigmoid": sigmoid,
    "svd": svd,
    "resnet": lambda torch, dt, a: (resnet_step(torch, a), 0.0, 0.0),
    "resnet_infer": lambda torch, dt, a: (resnet_forward(torch, dt, a), 0.0, 0.0),
    "transformer": lambda torch, dt, a: (transformer_forward(torch, a), 0.0, 0.0),
    "llama": lambda torch, dt, a: ((llama_compiled(torch, a) if a.get("compiled")
                                    else llama_generate(torch, dt, a)), 0.0, 0.0),
    "bert": lambda torch, dt, a: (bert_step(torch, a), 0.0, 0.0),
    "sd15": lambda torch, dt, a: (sd15(torch, dt, a), 0.0, 0.0),
    "attention": attention,
    "conv": conv,
    "gemm_decode": gemm_decode,
}
