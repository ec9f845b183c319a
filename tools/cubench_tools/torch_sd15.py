"""tools/torch_reference.py's sd15 family: Stable Diffusion v1.5 as cubench's sd15 rows run it,
with diffusers' and transformers' own models built from their configurations in code."""
import time

from .compiled_modules import sd15_unet_config
from .torch_compile import compiled

# sd15's steps, guidance, prompt tokens and VAE scale, cubench's fixed values
# (benchmarks/sd15.torch.cpp).
SD15_STEPS, SD15_GUIDANCE, SD15_TOKENS, SD15_VAE_SCALE = 20, 7.5, 77, 0.18215


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
    unet_config = sd15_unet_config()
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

