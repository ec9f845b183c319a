"""Writes sd15_tiny_diffusers.pt beside this file: diffusers' own UNet2DConditionModel at cubench's
tiny SD 1.5 configuration (sd15::UNetConfig::tiny(): every block kind of SD 1.5's, 32/64/64/64
channels, 2 heads, a 32-wide context) run once in fp32 on the CPU, for test_torch_sd15.cpp's
Sd15.TinyUNetIsDiffusers, which builds cubench's tiny UNet with the same weights and requires the
same prediction, without Python.

The weights are not stored: every parameter is made from its place in the model by an integer
hash (weights() below; the test computes the same, exactly, in int64 and float64 before rounding
to fp32), so the fixture holds only the inputs, diffusers' prediction and each parameter's sum
(so a mismatch of the weights themselves is told apart from one of the model). Norm weights and
biases are drawn away from one and zero, so that a norm's affine part is exercised too.

The file holds a dict: "sample" [2, 4, 16, 16], "timestep" [1] (951.0), "context" [2, 77, 32],
"out" [2, 4, 16, 16] (diffusers' prediction), "parameter_sums" (float64, one per parameter in
sorted name order), "diffusers_version" and "torch_version".

Made with diffusers 0.40.0.dev0 on Debian 12's CPU torch 1.13.1 (which names itself 1.13.0a0),
where diffusers picks AttnProcessor, torch 2's F.scaled_dot_product_attention being absent;
AttnProcessor2_0, its default on torch 2, gave the same prediction bit for bit on the CPU (with
that function's math definition put in). The output is the same file byte for byte when run again.
Run it with a diffusers install on the path:
  python3 tests/data/make_sd15_tiny_diffusers.py
"""
import math
import os
import sys

import torch
from diffusers import UNet2DConditionModel, __version__ as diffusers_version

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from cubench_tools.compiled_modules import sd15_unet_config  # noqa: E402

# SD 1.5's configuration with UNetConfig::tiny()'s widths, head count and context width.
CONFIG = dict(sd15_unet_config(), block_out_channels=(32, 64, 64, 64), cross_attention_dim=32,
              attention_head_dim=2)

PRIME = 2147483647  # 2^31 - 1: every product below stays within int64


def weights(model):
    """Fills every parameter of `model` and returns each one's sum (float64), in sorted name order:
    element k of the parameters in that order is hashed as x = (48271 k + 1) mod p, then twice
    x = (x^2 + c) mod p (c 11, then 13), s = 2x/p - 1 in [-1, 1); a norm's weight is 1 + 0.2 s, its
    bias 0.2 s, another weight s / sqrt(fan_in) (PyTorch's default bound), another bias 0.1 s."""
    params = dict(model.named_parameters())
    offset = 0
    with torch.no_grad():
        for name in sorted(params):
            p = params[name]
            n = p.numel()
            k = torch.arange(offset, offset + n, dtype=torch.int64)
            x = torch.remainder(k * 48271 + 1, PRIME)
            x = torch.remainder(x * x + 11, PRIME)
            x = torch.remainder(x * x + 13, PRIME)
            s = x.double() / float(PRIME) * 2.0 - 1.0
            if "norm" in name:
                v = 1.0 + 0.2 * s if name.endswith("weight") else 0.2 * s
            elif p.dim() >= 2:
                v = s / math.sqrt(float(n // p.shape[0]))
            else:
                v = 0.1 * s
            p.copy_(v.view(p.shape))
            offset += n
    return [params[name].double().sum() for name in sorted(params)]


def main():
    torch.set_num_threads(2)
    unet = UNet2DConditionModel(**CONFIG).eval()
    sums = weights(unet)
    g = torch.Generator().manual_seed(1505)
    sample = torch.randn(2, 4, 16, 16, generator=g)
    context = torch.randn(2, 77, 32, generator=g)
    timestep = torch.tensor([951.0])
    with torch.no_grad():
        out = unet(sample, timestep, encoder_hidden_states=context).sample
    fixture = {"sample": sample, "timestep": timestep, "context": context, "out": out,
               "parameter_sums": torch.stack(sums), "diffusers_version": diffusers_version,
               "torch_version": str(torch.__version__)}
    path = os.path.join(HERE, "sd15_tiny_diffusers.pt")
    torch.save(fixture, path)
    print(f"{path}: {len(sums)} parameters, prediction norm {out.norm().item():.6f}, "
          f"{os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
