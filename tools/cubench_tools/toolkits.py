"""The CUDA toolkits tools/run-matrix can build with: CMakePresets.json's configure presets, the
nvcc each names (as cmake --preset would expand it), and what to do where one is missing."""
import json
import os
import re

from .checkout import ROOT, TOOLS


def _expand(value):
    """A preset's $penv{X} and $env{X}, from this environment (unset: empty), as cmake --preset does."""
    return re.sub(r"\$p?env\{([^}]*)\}", lambda m: os.environ.get(m.group(1), ""), value)


def _cache_variables(by_name, preset):
    """A preset's cacheVariables with those it inherits (its own win; of its parents, the first)."""
    out = {}
    parents = preset.get("inherits", [])
    for parent in reversed([parents] if isinstance(parents, str) else parents):
        out.update(_cache_variables(by_name, by_name[parent]))
    for key, value in preset.get("cacheVariables", {}).items():
        out[key] = value.get("value", "") if isinstance(value, dict) else value
    return out


def preset_nvcc(cache):
    """The nvcc a configure with these cache variables takes, as CMakeLists.txt picks it: the
    toolkit root (CUDAToolkit_ROOT, or where that expands to nothing CUBENCH_CUDA_ROOT_DEFAULT: of
    its ';'-separated folders the first that holds bin/nvcc, else the first); the preset's
    CMAKE_CUDA_COMPILER where it names an nvcc that exists under that root (or there is no root),
    else <root>/bin/nvcc."""
    root = _expand(str(cache.get("CUDAToolkit_ROOT", "")))
    if not root:
        defaults = [d for d in _expand(str(cache.get("CUBENCH_CUDA_ROOT_DEFAULT", ""))).split(";") if d]
        root = next((d for d in defaults if os.path.exists(os.path.join(d, "bin", "nvcc"))),
                    defaults[0] if defaults else "")
    compiler = _expand(str(cache.get("CMAKE_CUDA_COMPILER", "")))
    if root:
        root_nvcc = os.path.join(root, "bin", "nvcc")
        if os.path.exists(root_nvcc) and not (compiler and os.path.exists(compiler)
                                              and compiler.startswith(root.rstrip("/") + "/")):
            return root_nvcc
        return compiler or root_nvcc
    return compiler


def _configure_presets():
    with open(os.path.join(ROOT, "CMakePresets.json")) as f:
        presets = json.load(f)["configurePresets"]
    return presets, {p["name"]: p for p in presets}


def toolkit_presets():
    """[(name, nvcc path, whether it exists)] for the non-hidden configure presets."""
    presets, by_name = _configure_presets()
    out = []
    for p in presets:
        if p.get("hidden"):
            continue
        nvcc = preset_nvcc(_cache_variables(by_name, p))
        out.append((p["name"], nvcc, bool(nvcc) and os.path.exists(nvcc)))
    return out


def missing_toolkit(preset, nvcc):
    """What a preset whose nvcc is not here lacks, and what would point it at one, in words:
    "cuda-12.4: no nvcc at /usr/local/cuda-12.4/bin/nvcc; set CUBENCH_CUDA124_ROOT to the folder
    of a CUDA 12.4 (the one holding bin/nvcc), or install one at /usr/local/cuda-12.4 or
    /opt/cuda-12.4-debian (tools/install-deps --cuda-12.4)"."""
    _, by_name = _configure_presets()
    cache = _cache_variables(by_name, by_name[preset])
    named = " ".join(str(cache.get(k, "")) for k in ("CUDAToolkit_ROOT", "CMAKE_CUDA_COMPILER"))
    variables = list(dict.fromkeys(re.findall(r"\$p?env\{([^}]*)\}", named)))
    literal = _expand(str(cache.get("CUDAToolkit_ROOT", "")))
    defaults = [d for d in _expand(str(cache.get("CUBENCH_CUDA_ROOT_DEFAULT", ""))).split(";") if d]
    m = re.search(r"(\d+\.\d+)", preset)
    toolkit = f"a CUDA {m.group(1)}" if m else "its toolkit"
    said = f"{preset}: no nvcc at {nvcc}" if nvcc else f"{preset}: no nvcc named"
    set_ = [v for v in variables if os.environ.get(v)]
    if set_:
        said += f" ({', '.join(f'{v}={os.environ[v]}' for v in set_)})"
    what = toolkit[2:] if toolkit.startswith("a ") else toolkit
    if variables:
        hint = f"set {' or '.join(variables)} to the folder of {toolkit} (the one holding bin/nvcc)"
        if defaults:
            hint += f", or install one at {' or '.join(defaults)}"
    elif literal:
        hint = f"install {what} at {literal} (CMakePresets.json's CUDAToolkit_ROOT for {preset})"
    else:
        hint = f"name {what}'s folder in CMakePresets.json's CUDAToolkit_ROOT for {preset}"
    try:
        with open(os.path.join(TOOLS, "install-deps"), encoding="utf-8") as f:
            if f"--{preset})" in f.read():
                hint += f" (tools/install-deps --{preset})"
    except OSError:
        pass
    return f"{said}; {hint}"


def toolkit_order(preset):
    """A sort key putting presets in toolkit order: cuda-11.8 < cuda-12.4 < cuda-13.0 (numbers,
    not text: 9.2 before 11.8); a preset with no version in its name last, by name."""
    m = re.search(r"(\d+)\.(\d+)", preset)
    return (0, int(m.group(1)), int(m.group(2)), preset) if m else (1, 0, 0, preset)
