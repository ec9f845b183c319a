"""Issue 18, for the next device call: why cubench's bert_train is 5-11% slower than transformers'
BertForMaskedLM at seq 512 (calls 5 and 6) with the same peak memory. Times, in one python
process and alternating, (a) transformers' model and (b) a replica of cubench's module
(benchmarks/models/bert.cpp: the same ops in the same order, through torch.nn.functional), both
with torch.optim.AdamW and autocast as tools/torch_reference.py's bert_step; then prints each
one's 15 most expensive CUDA kernels (torch.profiler) over 3 steps. If (b) is as fast as (a), the
gap is LibTorch's C++ path, the harness or the libraries it loads (the cuBLAS this process loads is
printed last: compare `ldd build/cuda-13.0/cubench`); if not, the kernel tables show which op
differs. (Call 9: the replica was as fast as transformers, 97.06 against 97.13 ms; cubench 109.5.)
Two more modes for call 11, the replica alone: `conditions` times it, alternating, under what
differs in cubench's process (a non-default stream, as the harness's; TF32 allowed, as cubench's
AMP rows set it); `steps` runs 3 + 30 steps and nothing else, for ncu to time its kernels beside
cubench's.
  python3 docs/results/h200/plans/issue18-bert-probe.py [precision seq batch [conditions|steps]]
  (amp_bf16 512 64)"""
import sys
import time

import torch
import torch.nn.functional as F
import transformers

precision, seq, batch = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 \
    else ("amp_bf16", 512, 64)
mode = sys.argv[4] if len(sys.argv) > 4 else "compare"
amp = precision.startswith("amp_")
dtype = torch.bfloat16 if precision == "amp_bf16" else torch.float16
torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
config = transformers.BertConfig()
H, L, heads, V = config.hidden_size, config.num_hidden_layers, config.num_attention_heads, config.vocab_size


def linear(i, o):
    w = torch.nn.Parameter(torch.empty(o, i, device="cuda").normal_(0, 0.02))
    b = torch.nn.Parameter(torch.zeros(o, device="cuda"))
    return w, b


def norm():
    return torch.nn.Parameter(torch.ones(H, device="cuda")), torch.nn.Parameter(torch.zeros(H, device="cuda"))


class Replica(torch.nn.Module):
    """cubench's BertForMaskedLM (benchmarks/models/bert.cpp), op for op."""

    def __init__(self):
        super().__init__()
        p = torch.nn.ParameterList
        self.word = torch.nn.Parameter(torch.empty(V, H, device="cuda").normal_(0, 0.02))
        self.position = torch.nn.Parameter(torch.empty(512, H, device="cuda").normal_(0, 0.02))
        self.token_type = torch.nn.Parameter(torch.empty(2, H, device="cuda").normal_(0, 0.02))
        self.embedding_norm = p(norm())
        self.layers = torch.nn.ModuleList()
        for _ in range(L):
            m = torch.nn.Module()
            for name, shape in (("query", (H, H)), ("key", (H, H)), ("value", (H, H)),
                                ("attention_out", (H, H)), ("intermediate", (H, 4 * H)),
                                ("output", (4 * H, H))):
                setattr(m, name, p(linear(*shape)))
            m.attention_norm, m.output_norm = p(norm()), p(norm())
            self.layers.append(m)
        self.head_dense, self.head_norm = p(linear(H, H)), p(norm())
        self.decoder_bias = torch.nn.Parameter(torch.zeros(V, device="cuda"))

    def forward(self, ids, types):
        b, s = ids.shape
        d, t = H // heads, self.training
        x = F.embedding(ids, self.word) + F.embedding(types, self.token_type)
        x = x + F.embedding(torch.arange(s, device="cuda").unsqueeze(0), self.position)
        x = F.dropout(F.layer_norm(x, (H,), *self.embedding_norm, 1e-12), 0.1, t)
        for m in self.layers:
            q, k, v = (F.linear(x, *getattr(m, n)).view(b, s, heads, d).transpose(1, 2)
                       for n in ("query", "key", "value"))
            a = F.scaled_dot_product_attention(q, k, v, None, 0.1 if t else 0.0)
            a = F.linear(a.transpose(1, 2).reshape(b, s, H), *m.attention_out)
            h = F.layer_norm(F.dropout(a, 0.1, t) + x, (H,), *m.attention_norm, 1e-12)
            f = F.linear(F.gelu(F.linear(h, *m.intermediate)), *m.output)
            x = F.layer_norm(F.dropout(f, 0.1, t) + h, (H,), *m.output_norm, 1e-12)
        x = F.layer_norm(F.gelu(F.linear(x, *self.head_dense)), (H,), *self.head_norm, 1e-12)
        return F.linear(x, self.word, self.decoder_bias)


ids = torch.randint(V, (batch, seq), device="cuda")
types = torch.randint(2, (batch, seq), device="cuda")
positions = torch.rand(batch, seq, device="cuda").topk(max(1, round(0.15 * seq)), dim=1).indices
labels = torch.full((batch, seq), -100, device="cuda").scatter(
    1, positions, torch.randint(V, positions.shape, device="cuda"))


def stepper(model, loss_of):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "amp_fp16")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype, enabled=amp):
            loss = loss_of(model)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return step


def replica_step():
    return stepper(Replica().train(), lambda m: F.cross_entropy(m(ids, types).view(-1, V), labels.view(-1)))


def tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


if mode == "steps":  # for ncu: nothing but the replica's steps
    step = replica_step()
    for _ in range(33):
        step()
    torch.cuda.synchronize()
    sys.exit(0)
if mode == "conditions":
    side = torch.cuda.Stream()  # non-blocking, as cubench's own stream
    default = torch.cuda.current_stream()
    step = replica_step()
    conditions = {"default stream": (default, False), "default stream, TF32 on": (default, True),
                  "side stream": (side, False), "side stream, TF32 on": (side, True)}
    times = {name: [] for name in conditions}
    for _ in range(5):
        for name, (stream, on) in conditions.items():
            tf32(on)
            with torch.cuda.stream(stream):
                for _ in range(2):
                    step()
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(3):
                    step()
                stop.record()
            stop.synchronize()
            times[name].append(start.elapsed_time(stop) / 3)
    for name, t in times.items():
        print(f"replica, {name}: {precision} {seq}/{batch} median {sorted(t)[2]:.2f} ms a step "
              f"({', '.join(f'{x:.2f}' for x in t)})")
    sys.exit(0)
hf = transformers.BertForMaskedLM._from_config(config, attn_implementation="sdpa").cuda().train()
replica = Replica().train()
print(f"parameters: transformers {sum(p.numel() for p in hf.parameters()):,}, "
      f"replica {sum(p.numel() for p in replica.parameters()):,}")
steps = {
    "transformers": stepper(hf, lambda m: m(input_ids=ids, token_type_ids=types, labels=labels).loss),
    "replica": stepper(replica, lambda m: F.cross_entropy(m(ids, types).view(-1, V), labels.view(-1))),
}
for step in steps.values():
    for _ in range(3):
        step()
torch.cuda.synchronize()
start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
times = {name: [] for name in steps}
for _ in range(5):  # alternating, 5 steps each a round: neither side gets the cooler GPU
    for name, step in steps.items():
        start.record()
        for _ in range(5):
            step()
        stop.record()
        stop.synchronize()
        times[name].append(start.elapsed_time(stop) / 5)
for name, t in times.items():
    print(f"{name}: {precision} {seq}/{batch} median {sorted(t)[2]:.2f} ms a step ({', '.join(f'{x:.2f}' for x in t)})")
for name, step in steps.items():
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            step()
        torch.cuda.synchronize()
    print(f"\n== {name}: the 15 most expensive kernels over 3 steps")
    try:  # the key's name moved from cuda_ to device_ across torch 2.x
        print(prof.key_averages().table(sort_by="device_time_total", row_limit=15, max_name_column_width=70))
    except (AttributeError, KeyError, ValueError):
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15, max_name_column_width=70))
# Which cuBLAS/cuDNN this process loaded (cubench's context says the ones it runs with; LibTorch in
# cubench may resolve libcublas to the toolkit's, python's torch to its wheel's).
with open("/proc/self/maps") as maps:
    libs = sorted({line.split()[-1] for line in maps if any(n in line for n in ("libcublas", "libcudnn.so", "libnccl"))})
print("loaded:", *libs, sep="\n  ")
print(f"at {time.strftime('%H:%M:%S')}")
