"""The modules cubench's compiled rows run, in Python: what tools/aoti-export exports and compiles
with AOTInductor for the C++ rows, and what tools/torch_reference.py times under torch.compile
beside them. One package per configuration, named as the C++ family names it:

  resnet50_infer-<fp16|bf16>-channels_last-<batch>   torchvision's resnet50, eval, 224 x 224
  sd15_unet-<fp16|bf16>-<images>-<resolution>         diffusers' UNet2DConditionModel at SD 1.5's
                                                      configuration, batch 2 x images (guidance)
  llama_decode-<bf16|fp16>-<prompt>-<new>-<batch>     one greedy decode step of cubench's LLaMA-7B
                                                      over a static KV cache of prompt + new

Names are parsed without torch (parse_package), so a bad name is one line wherever the tool runs;
the modules are built with the torch of the python that runs it (build)."""
import re

from .input_error import InputError

DTYPES = ("fp16", "bf16")
# The compiled rows of cubench's default run, and the configurations the side-by-side table
# compares with Python's torch.compile (resnet50 at batch 256 in fp16, channels-last).
DEFAULT_PACKAGES = (
    "resnet50_infer-bf16-channels_last-1",
    "resnet50_infer-bf16-channels_last-256",
    "resnet50_infer-fp16-channels_last-256",
    "sd15_unet-fp16-1-512",
    "llama_decode-bf16-128-128-1",
)

_PATTERNS = {
    "resnet50_infer": re.compile(r"resnet50_infer-(fp16|bf16)-(channels_last)-(\d+)"),
    "sd15_unet": re.compile(r"sd15_unet-(fp16|bf16)-(\d+)-(\d+)"),
    "llama_decode": re.compile(r"llama_decode-(fp16|bf16)-(\d+)-(\d+)-(\d+)"),
}

# cubench's LLaMA-7B (benchmarks/models/llama.h): layers, hidden, heads, FFN, vocab.
LLAMA_7B = dict(layers=32, hidden=4096, heads=32, ffn=11008, vocab=32000, rms_eps=1e-6,
                rope_theta=10000.0, max_positions=4096)
SD15_CONTEXT_TOKENS, SD15_CONTEXT_DIM = 77, 768


def parse_package(name):
    """The configuration a package name stands for, as a dict with its `family`; InputError (one
    line) for a name no family makes."""
    for family, pattern in _PATTERNS.items():
        m = pattern.fullmatch(name)
        if not m:
            continue
        g = m.groups()
        if family == "resnet50_infer":
            config = dict(dtype=g[0], format=g[1], batch=int(g[2]))
        elif family == "sd15_unet":
            config = dict(dtype=g[0], images=int(g[1]), resolution=int(g[2]))
            if config["resolution"] % 8:
                raise InputError(f"package {name}: the resolution must be a multiple of 8")
        else:
            config = dict(dtype=g[0], prompt=int(g[1]), new=int(g[2]), batch=int(g[3]))
            if config["prompt"] + config["new"] > LLAMA_7B["max_positions"]:
                raise InputError(f"package {name}: prompt + new beyond the rotary table's "
                                 f"{LLAMA_7B['max_positions']} positions")
        if any(v == 0 for v in config.values() if isinstance(v, int)):
            raise InputError(f"package {name}: sizes must be positive")
        return dict(family=family, name=name, **config)
    raise InputError(f"package {name!r}: not a compiled row's name (one of "
                     "resnet50_infer-<fp16|bf16>-channels_last-<batch>, "
                     "sd15_unet-<fp16|bf16>-<images>-<resolution>, "
                     "llama_decode-<fp16|bf16>-<prompt>-<new>-<batch>)")


def torch_dtype(torch, name):
    return {"fp16": torch.float16, "bf16": torch.bfloat16}[name]


def build(torch, config):
    """(module, args, kwargs): the configuration's module on the GPU in its dtype with random
    weights, and example inputs of the shapes its package is compiled for. The module's
    state_dict names (and its non-persistent buffers') are those the C++ model hands the package."""
    family = config["family"]
    if family == "resnet50_infer":
        return _resnet50(torch, config)
    if family == "sd15_unet":
        return _sd15_unet(torch, config)
    return _llama_decode(torch, config)


def _resnet50(torch, c):
    import torchvision
    dtype = torch_dtype(torch, c["dtype"])
    model = torchvision.models.resnet50(num_classes=1000).eval().cuda().to(dtype)
    model = model.to(memory_format=torch.channels_last)
    images = torch.randn(c["batch"], 3, 224, 224, device="cuda", dtype=dtype)
    return model, (images.contiguous(memory_format=torch.channels_last),), {}


def sd15_unet_config():
    """SD 1.5's UNet2DConditionModel configuration: the package's, torch_reference's sd15 rows' and,
    with cubench's tiny widths, tests/data/make_sd15_tiny_diffusers.py's."""
    return dict(sample_size=64, in_channels=4, out_channels=4, layers_per_block=2,
                block_out_channels=(320, 640, 1280, 1280),
                down_block_types=("CrossAttnDownBlock2D",) * 3 + ("DownBlock2D",),
                up_block_types=("UpBlock2D",) + ("CrossAttnUpBlock2D",) * 3,
                cross_attention_dim=SD15_CONTEXT_DIM, attention_head_dim=8, norm_num_groups=32,
                norm_eps=1e-5, flip_sin_to_cos=True, freq_shift=0, act_fn="silu")


def _sd15_unet(torch, c):
    try:
        import diffusers
    except ImportError as e:
        raise InputError(f"package {c['name']}: needs diffusers in this python ({e})") from None
    dtype = torch_dtype(torch, c["dtype"])
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("cuda"):
            unet = diffusers.UNet2DConditionModel(**sd15_unet_config()).eval()
    finally:
        torch.set_default_dtype(default)

    class UNetNoise(torch.nn.Module):
        """The UNet's noise prediction as a tensor (diffusers returns a dataclass); its weights
        are diffusers' names under "unet." (the C++ model hands them so)."""

        def __init__(self, unet):
            super().__init__()
            self.unet = unet

        def forward(self, sample, timestep, context):
            return self.unet(sample, timestep, encoder_hidden_states=context, return_dict=False)[0]

    batch = 2 * c["images"]
    side = c["resolution"] // 8
    sample = torch.randn(batch, 4, side, side, device="cuda", dtype=dtype)
    # cubench's UNet takes the timestep as a [1] float tensor on the device (its graph reads it
    # there); the package is made for the same.
    timestep = torch.tensor([951.0], device="cuda")
    context = torch.randn(batch, SD15_CONTEXT_TOKENS, SD15_CONTEXT_DIM, device="cuda", dtype=dtype)
    return UNetNoise(unet), (sample, timestep, context), {}


def _llama_decode(torch, c):
    nn, F = torch.nn, torch.nn.functional
    cfg = LLAMA_7B
    dtype = torch_dtype(torch, c["dtype"])
    batch, max_len = c["batch"], c["prompt"] + c["new"]
    hidden, heads, ffn, vocab = cfg["hidden"], cfg["heads"], cfg["ffn"], cfg["vocab"]
    d = hidden // heads

    def linear(i, o):
        return nn.Linear(i, o, bias=False, device="cuda", dtype=dtype)

    class Norm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden, device="cuda", dtype=dtype))

        def forward(self, x):  # transformers' LlamaRMSNorm: in fp32, then cast back
            x32 = x.float()
            x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + cfg["rms_eps"])
            return self.weight * x32.to(x.dtype)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj, self.k_proj = linear(hidden, hidden), linear(hidden, hidden)
            self.v_proj, self.o_proj = linear(hidden, hidden), linear(hidden, hidden)
            shape = (batch, heads, max_len, d)
            self.register_buffer("k_cache", torch.zeros(shape, device="cuda", dtype=dtype))
            self.register_buffer("v_cache", torch.zeros(shape, device="cuda", dtype=dtype))

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_proj, self.up_proj = linear(hidden, ffn), linear(hidden, ffn)
            self.down_proj = linear(ffn, hidden)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_layernorm, self.post_attention_layernorm = Norm(), Norm()
            self.self_attn, self.mlp = Attention(), Mlp()

    class Rotary(nn.Module):
        def __init__(self):
            super().__init__()
            inv_freq = 1.0 / torch.pow(cfg["rope_theta"],
                                       torch.arange(0, d, 2, device="cuda", dtype=torch.float32) / d)
            angles = torch.outer(torch.arange(cfg["max_positions"], device="cuda",
                                              dtype=torch.float32), inv_freq)
            emb = torch.cat((angles, angles), -1)
            self.register_buffer("cos", emb.cos())
            self.register_buffer("sin", emb.sin())

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(vocab, hidden, device="cuda", dtype=dtype)
            self.layers = nn.ModuleList(Layer() for _ in range(cfg["layers"]))
            self.norm = Norm()
            self.rotary_emb = Rotary()

    def rotate(x, cos, sin):
        half = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), -1) * sin

    class DecodeStep(nn.Module):
        """benchmarks/models/llama.cpp's forward with the cache, last position only, the same
        arithmetic in the same order; exported at n = 1, a decode step: the token at `position`
        [1] in, its logits out [batch, 1, vocab]; its key and value written into the layer's
        static cache there, and attention over the whole cache with the slots past it masked. The weights carry
        transformers' LlamaForCausalLM names (model.layers.N.self_attn.q_proj.weight, ...); the
        caches (model.layers.N.self_attn.k_cache, v_cache) and the rotary tables
        (model.rotary_emb.cos, sin) are buffers the C++ model hands over as well, so the package
        writes into the cache the eager prefill filled. Written by hand, as gpt-fast writes its
        own, because a package's inputs and buffers must be plain tensors."""

        def __init__(self):
            super().__init__()
            self.model = Model()
            self.lm_head = linear(hidden, vocab)
            for p in self.parameters():
                if p.dim() > 1:
                    nn.init.normal_(p, 0.0, 0.02)

        def forward(self, tokens, positions):
            """tokens [batch, n] at positions [n] (n = 1: a decode step; the prompt: a prefill),
            the last position's logits [batch, 1, vocab]."""
            m, n = self.model, tokens.shape[1]
            cos = m.rotary_emb.cos.index_select(0, positions).to(dtype).view(1, 1, n, d)
            sin = m.rotary_emb.sin.index_select(0, positions).to(dtype).view(1, 1, n, d)
            keys = torch.arange(max_len, device=positions.device)
            visible = keys.unsqueeze(0).le(positions.unsqueeze(1)).view(1, 1, n, max_len)
            x = F.embedding(tokens, m.embed_tokens.weight)
            for layer in m.layers:
                a = layer.self_attn
                normed = layer.input_layernorm(x)
                q = a.q_proj(normed).view(batch, n, heads, d).transpose(1, 2)
                k = a.k_proj(normed).view(batch, n, heads, d).transpose(1, 2)
                v = a.v_proj(normed).view(batch, n, heads, d).transpose(1, 2)
                q, k = rotate(q, cos, sin), rotate(k, cos, sin)
                a.k_cache.index_copy_(2, positions, k)
                a.v_cache.index_copy_(2, positions, v)
                attended = F.scaled_dot_product_attention(q, a.k_cache, a.v_cache, attn_mask=visible)
                x = x + a.o_proj(attended.transpose(1, 2).reshape(batch, n, hidden))
                normed = layer.post_attention_layernorm(x)
                x = x + layer.mlp.down_proj(F.silu(layer.mlp.gate_proj(normed)) *
                                            layer.mlp.up_proj(normed))
            return self.lm_head(m.norm(x[:, n - 1:]))

    step = DecodeStep().eval()
    token = torch.randint(vocab, (batch, 1), device="cuda")
    position = torch.tensor([c["prompt"]], device="cuda")
    return step, (token, position), {}


def constant_names(module):
    """Every tensor a package of `module` may list: its parameters and buffers (persistent or
    not), by their dotted names."""
    return sorted({n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()})
