#!/usr/bin/env python3
"""Issue 18: which of LLaMA decode's kernels repeat bit for bit on the H200 (cubench's greedy
tokens did not repeat at batch 8 and 32, nor at batch 1 with a 1024-token prompt; they did at
batch 1 with 128). Each operation of a decode step, at the shapes of those rows, twice on the same
inputs, compared with torch.equal; then transformers' LlamaForCausalLM (LLaMA-7B config, random
bf16 weights, StaticCache) generating greedily twice from one prompt, compared token for token.
    python3 docs/results/h200/plans/issue18-determinism.py"""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

torch.manual_seed(0)
bf16, dev = torch.bfloat16, "cuda"


def same(name, fn, times=20):
    first = fn()
    diffs = sum(not torch.equal(first, fn()) for _ in range(times))
    print(f"{name}: {'repeats' if diffs == 0 else f'DIFFERS in {diffs} of {times}'}", flush=True)


for b, length, seen in ((1, 256, 130), (8, 256, 130), (32, 256, 130), (1, 1280, 1030)):
    q = torch.randn(b, 32, 1, 128, device=dev, dtype=bf16)
    k = torch.randn(b, 32, length, 128, device=dev, dtype=bf16)
    v = torch.randn(b, 32, length, 128, device=dev, dtype=bf16)
    mask = (torch.arange(length, device=dev) < seen).view(1, 1, 1, length)
    same(f"sdpa default, b{b} keys {length}", lambda: F.scaled_dot_product_attention(q, k, v, mask))
    for backend in (SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH):
        try:
            with sdpa_kernel(backend):
                same(f"sdpa {backend.name}, b{b} keys {length}",
                     lambda: F.scaled_dot_product_attention(q, k, v, mask))
        except RuntimeError as e:
            print(f"sdpa {backend.name}, b{b}: refused ({str(e)[:80]})")
    # the prefill's attention over the static cache
    qp = torch.randn(b, 32, 128, 128, device=dev, dtype=bf16)
    maskp = (torch.arange(length, device=dev).view(1, -1) <= torch.arange(128, device=dev).view(-1, 1))
    same(f"sdpa prefill 128 queries, b{b} keys {length}",
         lambda: F.scaled_dot_product_attention(qp, k, v, maskp.view(1, 1, 128, length)))
    x = torch.randn(b, 1, 4096, device=dev, dtype=bf16)
    for n, kdim in ((4096, 4096), (11008, 4096), (4096, 11008), (32000, 4096)):
        w = torch.randn(n, kdim, device=dev, dtype=bf16) * 0.02
        xi = x if kdim == 4096 else torch.randn(b, 1, kdim, device=dev, dtype=bf16)
        same(f"linear b{b} {n}x{kdim}", lambda: F.linear(xi, w))
    xp = torch.randn(b, 128, 4096, device=dev, dtype=bf16)
    w = torch.randn(4096, 4096, device=dev, dtype=bf16) * 0.02
    same(f"linear prefill b{b} 128 tokens 4096x4096", lambda: F.linear(xp, w))

from transformers import LlamaConfig, LlamaForCausalLM, StaticCache  # noqa: E402
config = LlamaConfig(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                     num_attention_heads=32, num_key_value_heads=32, vocab_size=32000,
                     rms_norm_eps=1e-6, max_position_embeddings=4096)
torch.set_default_dtype(bf16)
with torch.device(dev):
    model = LlamaForCausalLM(config).eval()
torch.set_default_dtype(torch.float32)
for b in (1, 8):
    prompt, new = 128, 128
    ids = torch.randint(32000, (b, prompt), device=dev)
    cache = StaticCache(config=config, max_cache_len=prompt + new)
    positions = torch.arange(prompt + new, device=dev)
    runs = []
    for _ in range(2):
        with torch.inference_mode():
            cache.reset()
            out = model(input_ids=ids, past_key_values=cache, cache_position=positions[:prompt],
                        use_cache=True, logits_to_keep=1)
            tok = out.logits[:, -1].argmax(-1, keepdim=True)
            toks = [tok]
            for i in range(1, new):
                pos = prompt + i - 1
                out = model(input_ids=tok, past_key_values=cache, cache_position=positions[pos:pos + 1],
                            use_cache=True)
                tok = out.logits[:, -1].argmax(-1, keepdim=True)
                toks.append(tok)
        runs.append(torch.cat(toks, 1))
    differ = (runs[0] != runs[1])
    first = [int(r.nonzero()[0]) if r.any() else -1 for r in differ]
    print(f"transformers greedy b{b} 128+128: tokens {'repeat' if not differ.any() else 'DIFFER'};"
          f" first differing step per sequence: {first}", flush=True)
