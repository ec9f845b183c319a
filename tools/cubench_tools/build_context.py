"""What a result file's context says of the build that wrote it: the optional libraries it left
out (not_built), its label on a page (the stack: CUDA and cuBLAS, or the PyTorch of a LibTorch
build), and what it ran on (a GPU, or the CPU alone)."""
import json
import os
import re

from .input_error import InputError
from .json_values import describe


# Context field: JSON text {"<library>": "<why>"}, the optional libraries the build left its
# families out for (cmake/OptionalSources.cmake); a family's schema entry names its "library".
NOT_BUILT_FIELD = "not_built"


def not_built_of(context, path="result file"):
    """{library: why} of a file's context["not_built"] ({} where the file has none: built before
    cubench said, or nothing left out); InputError unless it is JSON text of an object of
    strings."""
    text = context.get(NOT_BUILT_FIELD, "{}")
    where = f"{path}: context \"{NOT_BUILT_FIELD}\""
    if not isinstance(text, str):
        raise InputError(f"{where} is {describe(text)}, not a string (JSON text)")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{where} is not JSON ({e.msg} at line {e.lineno} column {e.colno})")
    if not isinstance(doc, dict) or not all(isinstance(v, str) for v in doc.values()):
        raise InputError(f"{where} is not an object of strings ({{\"library\": \"why\"}})")
    return doc


def label_of(path, context):
    """A column name that says what stack made the file: a LibTorch build's by its PyTorch (two
    builds of one toolkit differ there, not in the toolkit), else by its toolkit and cuBLAS."""
    if context.get("framework"):
        return f"{context['framework']} {context.get('torch', '')}".strip()
    toolkit = context.get("cuda_toolkit")
    if context.get("libtorch"):
        label = torch_label(context)
    else:
        label = f"CUDA {toolkit} (cuBLAS {context.get('cublas', '?')})" if toolkit else path
    if context.get("processes"):  # merged by tools/merge-processes: say what a sample is
        label += f", {context['processes']} processes"
    return label



def cudnn_text(encoded):
    """cuDNN's version as cudnnGetVersion encodes it (context "libtorch_cudnn"), as written:
    91900 -> "9.19.0" (cuDNN 9 on: major*10000), 8902 -> "8.9.2" (before: major*1000); None for
    0 or no number (a LibTorch without cuDNN)."""
    try:
        n = int(str(encoded))
    except ValueError:
        return None
    if n <= 0:
        return None
    major, rest = divmod(n, 10000) if n >= 10000 else divmod(n, 1000)
    return f"{major}.{rest // 100}.{rest % 100}"


def loaded_libraries(context):
    """{file name: real path} of the libraries the run loaded (context "loaded_libraries", JSON
    text); {} where the file has none or it is unreadable: it only refines a label."""
    try:
        value = json.loads(context.get("loaded_libraries") or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def bundled_copy(context, library):
    """The version in the file name of LibTorch's own renamed copy of library ("libcublas") that
    the run loaded (an archive's lib/libcublas-3b81d170.so.12: "12"), or None where it loaded
    none: then LibTorch used the one copy of that soname the process has, whose version cubench
    asked (context "cublas")."""
    for name, real in loaded_libraries(context).items():
        if re.fullmatch(re.escape(library) + r"-[0-9a-f]+\.so(\.[0-9.]+)?", str(name)):
            versions = [re.search(r"\.so\.([0-9.]+)$", n) for n in (os.path.basename(str(real)), name)]
            return next((m.group(1) for m in versions if m), "?")
    return None


def torch_cuda(context):
    """The CUDA a LibTorch build's PyTorch was made for: tools/run-matrix records it ("torch_cuda"),
    a version may name it ("2.5.1+cu124"), else the CUDA runtime the run loaded, which LibTorch
    shares with cubench (one soname per process)."""
    if context.get("torch_cuda"):
        return str(context["torch_cuda"])
    m = re.search(r"\+cu(\d+)(\d)\b", str(context.get("torch_version") or context.get("libtorch") or ""))
    if m:
        return f"{int(m.group(1))}.{m.group(2)}"
    return str(context.get("cuda_runtime") or context.get("cuda_toolkit") or "?")


def torch_label(context):
    """A LibTorch build's PyTorch, as run: "LibTorch 2.5.1+cu124 (CUDA 12.4, cuDNN 9.1.0, cuBLAS
    12.4.5)", "LibTorch 1.13.1 (CPU only)". The version is the install's where tools/run-matrix
    recorded it (with its +cuXYZ), else LibTorch's own; cuBLAS is the one loaded (LibTorch's
    bundled copy where it brought one)."""
    version = context.get("torch_version") or context.get("libtorch")
    if str(context.get("libtorch_cuda", "yes")).startswith("no"):
        return f"LibTorch {version} (CPU only)"
    parts = [f"CUDA {torch_cuda(context)}"]
    cudnn = cudnn_text(context.get("libtorch_cudnn", ""))
    if cudnn:
        parts.append(f"cuDNN {cudnn}")
    bundled = bundled_copy(context, "libcublas")
    parts.append(f"cuBLAS {bundled} (bundled)" if bundled else f"cuBLAS {context.get('cublas', '?')}")
    return f"LibTorch {version} ({', '.join(parts)})"


def no_gpu(context):
    """Whether the run had no GPU: cubench writes "gpu": "none (<why>)" then."""
    gpu = str(context.get("gpu", ""))
    return gpu == "none" or gpu.startswith("none (")


def ran_on(context, why=False):
    """What a file's rows ran on, for a title: its GPU; without one the CPU ("the CPU (no GPU)",
    or its name where the context has it: tools/run-matrix records "cpu_model"), never "none".
    why: a run without a GPU says cubench's reason too."""
    if not no_gpu(context):
        return str(context.get("gpu", "?"))
    cpu = f"the CPU, {context['cpu_model']}" if context.get("cpu_model") else "the CPU"
    reason = str(context.get("gpu", ""))[len("none ("):-1] if why else ""
    return f"{cpu} (no GPU{': ' + reason if reason else ''})"
