"""The cases tools/torch_reference.py runs: one per configuration of cubench's own listing
(axes_listing.py) in the families it has a PyTorch twin for, read from the configuration's axes,
and for each configuration of those families it has no case for, why. Needs no PyTorch.

A case's name is its configuration's, so the tools set the two side by side, but where a PyTorch
op stands beside several of cubench's rows (reference_name). The parameters of a case are the
configuration's axis values; what PyTorch needs besides (conv's batch of 256, attention's 16384
tokens) is not an axis of cubench's, and stays beside the op in torch_reference.py.
"""
from .input_error import InputError

# sigmoid and svd time one PyTorch op beside each of cubench's kernels (variant) and cuSOLVER's
# algorithms (algo): its name has "torch" in that axis's place.
TORCH_IN_PLACE_OF = {"sigmoid": "variant", "svd": "algo"}
# PyTorch's cudnn.benchmark autotunes: one conv row stands beside conv's (the heuristic's plan) and
# conv_autotune's (the fastest of 8) row of a layer.
NAMED_AS_FAMILY = {"conv_autotune": "conv"}

EAGER_ONLY = "a CUDA graph row: python runs eager (the tables set a graph row beside its eager twin)"


class Case:
    """One PyTorch case: its name (without "/manual_time"), the kind of op torch_reference.py
    makes (make_op's), the op's parameters, and the cubench configurations it stands beside."""

    def __init__(self, name, kind, params):
        self.name, self.kind, self.params = name, kind, params
        self.peers = []


class Plan:
    """cases in the listing's order; left_out: (configuration, why) for each one of a covered
    family without a case; absent: the covered families this build lists nothing of."""

    def __init__(self, cases, left_out, absent):
        self.cases, self.left_out, self.absent = cases, left_out, absent


def reference_name(row):
    """The PyTorch row's name for a configuration (axes_listing.Row): its own, but for the two
    tables above."""
    replaced = TORCH_IN_PLACE_OF.get(row.family)
    values = ["torch" if axis == replaced else str(value) for axis, value in row.axes.items()]
    return "/".join([NAMED_AS_FAMILY.get(row.family, row.family)] + values)


def _layer(row):
    return tuple(row.axis(a) for a in ("r", "stride", "c", "k", "hw"))


def _weights(row):
    """gemm_decode's weights axis names a matrix by its shape, NxK (benchmarks/gemm.cpp)."""
    text = row.axis("weights")
    parts = text.split("x")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise InputError(f"cubench's listing: {row.name}: weights '{text}' is not NxK")
    return int(parts[0]), int(parts[1])


def _gemm(row, _):
    return "gemm", dict(dtype=row.axis("dtype"), m=row.axis("m"), n=row.axis("n"), k=row.axis("k"))


def _sigmoid(row, _):
    return "sigmoid", dict(dtype=row.axis("dtype"), n=row.axis("n"), cold=row.axis("cache") == "cold")


def _svd(row, _):
    return "svd", dict(dtype=row.axis("dtype"), n=row.axis("n"))


def _gemm_decode(row, _):
    if row.axis("dtype") != "bf16":
        return "bf16 only: F.linear takes no fp8 weights (torch._scaled_mm is the gemm rows' fp8)"
    n, k = _weights(row)
    # A decode step finds its weights in DRAM: the L2 flushed before each sample, as cubench's.
    return "gemm_decode", dict(dtype="bf16", n=n, k=k, m=row.axis("m"), cold=True)


def _conv(row, conv_layers):
    if row.axis("pass") != "fwd":
        return "forward only: F.conv2d's backward passes are not timed on the python side"
    if _layer(row) not in conv_layers:
        # Each layer is four PyTorch rows of a cudnn.benchmark search: the default run's layers
        # keep the reference to seconds and beside every conv row a default run has.
        return "a layer the default run leaves out: the reference times the default run's layers"
    r, stride, c, k, hw = _layer(row)
    return "conv", dict(dtype=row.axis("dtype"), r=r, stride=stride, c=c, k=k, hw=hw)


def _resnet_train(row, _):
    return "resnet", dict(precision=row.axis("precision"),
                          channels_last=row.axis("format") == "channels_last",
                          res=row.axis("res"), batch=row.axis("batch"))


def _eager_only(rule):
    """A family whose rows come eager, as CUDA graphs and compiled: python times the eager ones,
    and the compiled ones under torch.compile (params["compiled"]: the same module cubench's
    package was exported from, tools/cubench_tools/compiled_modules.py)."""
    def eager(row, listing):
        mode = row.axis("mode")
        if mode == "compiled":
            kind, params = rule(row, listing)
            return kind, dict(params, compiled=True)
        return rule(row, listing) if mode == "eager" else EAGER_ONLY
    return eager


@_eager_only
def _resnet_infer(row, _):
    return "resnet_infer", dict(precision=row.axis("precision"),
                                channels_last=row.axis("format") == "channels_last",
                                batch=row.axis("batch"))


@_eager_only
def _llama(row, _):
    return "llama", dict(dtype=row.axis("dtype"), prompt=row.axis("prompt"), new=row.axis("new"),
                         batch=row.axis("batch"))


def _bert(row, _):
    return "bert", dict(precision=row.axis("precision"), seq=row.axis("seq"), batch=row.axis("batch"))


@_eager_only
def _sd15(row, _):
    if row.axis("mode") == "compiled" and row.axis("what") not in ("image", "unet_step"):
        return EAGER_ONLY
    return "sd15", dict(what=row.axis("what"), dtype=row.axis("dtype"), images=row.axis("images"),
                        res=row.axis("resolution"))


def _transformer(row, _):
    if row.axis("attention") != "sdpa":
        return ("the C++ module's own attention: python's nn.Transformer calls "
                "scaled_dot_product_attention only")
    return "transformer", dict(train=row.axis("mode") == "train", batch=row.axis("batch"))


def _attention(row, _):
    return "attention", dict(backend=row.axis("backend"), train=row.axis("pass") == "fwd_bwd",
                             dtype=row.axis("dtype"), causal=row.axis("mask") == "causal",
                             d=row.axis("head_dim"), seq=row.axis("seq"))


# The families the reference has a twin for: a rule per family gives a configuration's
# (kind, parameters), or a string: why it has no case.
RULES = {
    "gemm": _gemm, "sigmoid": _sigmoid, "svd": _svd, "gemm_decode": _gemm_decode,
    "conv": _conv, "conv_autotune": _conv,
    "resnet50_train": _resnet_train, "resnet50_infer": _resnet_infer, "llama_decode": _llama,
    "bert_train": _bert, "sd15": _sd15, "transformer_fwd": _transformer,
    "torch/attention": _attention,
}


def plan(rows):
    """The Plan of a listing's rows (axes_listing.Row)."""
    conv_layers = {_layer(r) for r in rows if r.family in ("conv", "conv_autotune") and r.default_suite}
    cases, by_name, left_out = [], {}, []
    for row in rows:
        rule = RULES.get(row.family)
        if rule is None:
            continue
        made = rule(row, conv_layers)
        if isinstance(made, str):
            left_out.append((row.name, made))
            continue
        kind, params = made
        name = reference_name(row)
        case = by_name.get(name)
        if case is None:
            case = by_name[name] = Case(name, kind, params)
            cases.append(case)
        elif (case.kind, case.params) != (kind, params):
            raise InputError(f"cubench's listing: {case.peers[0]} and {row.name} both stand beside "
                             f"{name}, with different parameters")
        case.peers.append(row.name)
    listed = {row.family for row in rows}
    return Plan(cases, left_out, [f for f in RULES if f not in listed])
