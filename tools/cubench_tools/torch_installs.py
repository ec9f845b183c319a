"""tools/run-matrix --torch: a build per PyTorch install (a python with torch, or an unpacked
LibTorch): what each install is (asked of it, or read from its files), the toolkit preset that
matches its CUDA, and the configure command that builds cubench against it."""
import contextlib
import json
import os
import re
import shutil
import subprocess

from . import cli
from .input_error import InputError
from .matrix_builds import Build
from .toolkits import missing_toolkit



LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
# What run-matrix asks a python (one `-c` script, its answer one line of JSON after a marker: an
# import may print warnings of its own). sys.version_info first: a python without torch still
# names itself.
TORCH_QUERY_MARK = "cubench-torch-query "
TORCH_QUERY = r"""
import importlib, json, sys
out = {"python": "%d.%d" % tuple(sys.version_info[:2])}
try:
    import torch
except Exception as e:
    out["error"] = "%s: %s" % (type(e).__name__, e)
else:
    v = getattr(torch, "version", None)
    out.update(version=str(torch.__version__), cuda=getattr(v, "cuda", None),
               hip=getattr(v, "hip", None), git_version=getattr(v, "git_version", None),
               cmake_prefix_path=torch.utils.cmake_prefix_path, file=torch.__file__,
               cxx11_abi=getattr(getattr(torch, "_C", None), "_GLIBCXX_USE_CXX11_ABI", None))
    for name in ("cudnn", "cublas", "nccl"):
        try:
            out[name] = list(importlib.import_module("nvidia." + name).__path__)[0]
        except Exception:
            out[name] = None
print("cubench-torch-query " + json.dumps(out))
"""


class TorchInstall:
    """One --torch LABEL=PATH, as found: kind "python" or "libtorch", its version, CUDA ("12.4", or
    None where CPU only), git revision, Torch_DIR, the libraries its wheel bundles (folders, or
    None), whether it uses the C++11 ABI (None: not said), and, once chosen, its toolkit preset."""

    def __init__(self, label, path, kind, version, cuda, torch_dir, git=None, cxx11_abi=None,
                 cudnn=None, cublas=None, nccl=None, python=None):
        self.label, self.path, self.kind = label, path, kind
        self.version, self.cuda, self.torch_dir, self.git = version, cuda, torch_dir, git
        self.cxx11_abi, self.cudnn, self.cublas, self.nccl = cxx11_abi, cudnn, cublas, nccl
        self.python = python
        self.preset = self.nvcc = None

    def what(self):
        """ "python3.12 at /venv/bin/python" or "the LibTorch at /opt/libtorch"."""
        if self.kind == "python":
            return f"python{self.python} at {self.path}" if self.python else f"{self.path}"
        return f"the LibTorch at {self.path}"

    def cudnn_root(self):
        """The wheel's cuDNN where it comes with its headers (what CUDNN_ROOT needs), else None."""
        if self.cudnn and os.path.isfile(os.path.join(self.cudnn, "include", "cudnn_version.h")):
            return self.cudnn
        return None

    def context(self):
        """What its result files' context adds: the install in one line, and, for the tools'
        labels and their one-install check, its version, CUDA and Torch_DIR (its real path)."""
        out = {"torch_install": self.summary(), "torch_version": self.version,
               "torch_dir": os.path.realpath(self.torch_dir)}
        if self.cuda:
            out["torch_cuda"] = self.cuda
        return out

    def summary(self):
        """The context's "torch_install": where the install is and what it is, in one line."""
        text = f"{self.label}: {self.what()}: torch {self.version}"
        if self.git:
            text += f" (git {self.git[:12]})"
        text += f", CUDA {self.cuda}" if self.cuda else ", CPU only"
        text += f"; Torch_DIR {self.torch_dir}; built with preset {self.preset}"
        wheel = [f"{name} {path}" for name, path in (("cuDNN", self.cudnn), ("cuBLAS", self.cublas),
                                                     ("NCCL", self.nccl)) if path]
        if wheel:
            text += "; its wheel's " + ", ".join(wheel)
        return text


def torch_pairs(values):
    """[(label, path)] of the --torch values, each checked: an '=', a label that can name files and
    a folder, a path, no label twice."""
    pairs = []
    for value in values:
        label, eq, path = value.partition("=")
        if not eq:
            raise InputError(f"--torch '{value}': want LABEL=PATH (a label, '=', a python that "
                             "imports torch or an unpacked LibTorch), e.g. 2.5.1=/venv-a/bin/python")
        if not LABEL.fullmatch(label):
            raise InputError(f"--torch '{value}': the label '{label}' names its result files and "
                             "build folder: letters, digits and . _ + - (a letter or digit first)")
        if not path:
            raise InputError(f"--torch '{value}': no path after '='")
        path = os.path.expanduser(path)
        if os.sep in path or os.path.exists(path):  # else a name, looked for on PATH
            path = os.path.abspath(path)
        pairs.append((label, path))
    labels = [label for label, _ in pairs]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise InputError(f"--torch names the label {', '.join(twice)} twice: each install is built "
                         "and run once, under a label of its own")
    return pairs


def cuda_of_version(version):
    """The CUDA a version string names ("2.5.1+cu124" -> "12.4", "2.0.1+cu118" -> "11.8"), "" for
    "+cpu", None where it names none."""
    m = re.search(r"\+(cu(\d+)|cpu)\b", version or "")
    if not m:
        return None
    if m.group(1) == "cpu":
        return ""
    digits = m.group(2)
    return f"{int(digits[:-1])}.{digits[-1]}" if len(digits) >= 2 else None


def read_text(path):
    """The text of a file, or None where it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def torch_config_abi(torch_dir):
    """Whether a TorchConfig.cmake asks for the C++11 ABI (-D_GLIBCXX_USE_CXX11_ABI=1: True, =0:
    False), None where it says nothing."""
    m = re.search(r"_GLIBCXX_USE_CXX11_ABI=([01])", read_text(os.path.join(torch_dir, "TorchConfig.cmake")) or "")
    return None if m is None else m.group(1) == "1"


def libtorch_torch_dir(path):
    """The folder holding TorchConfig.cmake of an unpacked LibTorch at path (its root, with
    share/cmake/Torch; a Torch_DIR itself; or a prefix with lib[/<triplet>]/cmake/Torch), or None."""
    candidates = [os.path.join(path, "share", "cmake", "Torch"), path,
                  os.path.join(path, "lib", "cmake", "Torch")]
    try:
        candidates += sorted(os.path.join(path, "lib", d, "cmake", "Torch")
                             for d in os.listdir(os.path.join(path, "lib")))
    except OSError:
        pass
    return next((d for d in candidates if os.path.isfile(os.path.join(d, "TorchConfig.cmake"))), None)


def libtorch_prefix(torch_dir):
    """The install prefix a TorchConfig.cmake takes (its TORCH_INSTALL_PREFIX, written relative to
    its folder: ../../../ in an archive's share/cmake/Torch, ../../../../ in Debian's
    lib/<triplet>/cmake/Torch)."""
    text = read_text(os.path.join(torch_dir, "TorchConfig.cmake")) or ""
    m = re.search(r'TORCH_INSTALL_PREFIX\s+"\$\{CMAKE_CURRENT_LIST_DIR\}/((?:\.\./?)+)"', text)
    up = m.group(1) if m else "../../../"
    return os.path.normpath(os.path.join(torch_dir, up))


def inspect_libtorch(label, path):
    """A TorchInstall for an unpacked LibTorch folder (InputError where it is none)."""
    torch_dir = libtorch_torch_dir(path)
    if torch_dir is None:
        raise InputError(f"--torch {label}={path}: not a LibTorch (no share/cmake/Torch/TorchConfig.cmake "
                         "in it, nor a TorchConfig.cmake): give an unpacked LibTorch archive's folder "
                         "or a python that imports torch")
    prefix = libtorch_prefix(torch_dir)
    version = (read_text(os.path.join(prefix, "build-version")) or "").strip()
    if not version:
        text = read_text(os.path.join(prefix, "include", "torch", "csrc", "api", "include", "torch",
                                  "version.h")) or ""
        m = re.search(r'#define\s+TORCH_VERSION\s+(?:\\\s*)?"([^"]+)"', text)
        version = m.group(1) if m else ""
    if not version:
        m = re.search(r'PACKAGE_VERSION\s+"([^"]+)"',
                      read_text(os.path.join(torch_dir, "TorchConfigVersion.cmake")) or "")
        version = m.group(1) if m else "unknown"
    cuda = cuda_of_version(version)
    if cuda is None:  # no +cuXYZ nor +cpu: CUDA where its libraries are
        libs = [os.path.join(prefix, "lib")]
        with contextlib.suppress(OSError):
            libs += [os.path.join(prefix, "lib", d) for d in os.listdir(os.path.join(prefix, "lib"))]
        with_cuda = any(os.path.exists(os.path.join(d, name)) for d in libs
                        for name in ("libtorch_cuda.so", "libc10_cuda.so"))
        if with_cuda:
            raise InputError(f"--torch {label}={path}: LibTorch {version} is built with CUDA "
                             "(libtorch_cuda.so) but says not which (no build-version file with "
                             "+cuXYZ): give the python of its install instead, or its archive as "
                             "unpacked (it has build-version)")
        cuda = ""
    git = (read_text(os.path.join(prefix, "build-hash")) or "").strip() or None
    return TorchInstall(label, path, "libtorch", version, cuda or None, torch_dir, git=git,
                        cxx11_abi=torch_config_abi(torch_dir))


def inspect_python(label, path):
    """A TorchInstall for a python that imports torch, asked with TORCH_QUERY (InputError where it
    does not run, is no python or has no torch)."""
    try:
        r = subprocess.run([path, "-c", TORCH_QUERY], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, text=True, errors="replace", timeout=300)
    except subprocess.TimeoutExpired:
        raise InputError(f"--torch {label}={path}: gave no answer in 300 s to `{path} -c 'import torch ...'`")
    except OSError as e:
        raise InputError(f"--torch {label}={path}: cannot run it as a python ({e.strerror})")
    answer = None
    for line in r.stdout.splitlines():
        if line.startswith(TORCH_QUERY_MARK):
            with contextlib.suppress(ValueError):
                answer = json.loads(line[len(TORCH_QUERY_MARK):])
    if not isinstance(answer, dict):
        said = cli.one_line(r.stderr.strip().splitlines()[-1]) if r.stderr.strip() else ""
        raise InputError(f"--torch {label}={path}: not a python that answers `-c` (exit "
                         f"{r.returncode}{': ' + said if said else ''})")
    who = f"python{answer.get('python')} at {path}" if answer.get("python") else path
    if "error" in answer:
        raise InputError(f"--torch {label}: {who}: no torch ({answer['error']})")
    version = str(answer.get("version") or "unknown")
    if answer.get("hip"):
        raise InputError(f"--torch {label}: {who}: torch {version} is a ROCm build (HIP "
                         f"{answer['hip']}): cubench builds for CUDA")
    prefix = answer.get("cmake_prefix_path") or ""
    torch_dir = os.path.join(prefix, "Torch")
    if not os.path.isfile(os.path.join(torch_dir, "TorchConfig.cmake")):
        raise InputError(f"--torch {label}: {who}: torch {version} has no TorchConfig.cmake at "
                         f"{torch_dir} (torch.utils.cmake_prefix_path): no LibTorch to build with")
    abi = answer.get("cxx11_abi")
    abi = torch_config_abi(torch_dir) if abi is None else bool(abi)
    return TorchInstall(label, path, "python", version, answer.get("cuda") or None, torch_dir,
                        git=answer.get("git_version") or None, cxx11_abi=abi,
                        cudnn=answer.get("cudnn"), cublas=answer.get("cublas"),
                        nccl=answer.get("nccl"), python=answer.get("python"))


def inspect_torch(label, path):
    """The install a --torch PATH names: a folder is a LibTorch, a file a python."""
    if os.path.isdir(path):
        install = inspect_libtorch(label, path)
    elif os.path.exists(path) or (os.sep not in path and shutil.which(path)):
        install = inspect_python(label, path)
    else:
        raise InputError(f"--torch {label}={path}: no such file or folder (give a python that "
                         "imports torch or an unpacked LibTorch)")
    if install.cxx11_abi is False:
        base = install.version.split("+")[0]
        flavour = f"+cu{install.cuda.replace('.', '')}" if install.cuda else "+cpu"
        raise InputError(f"--torch {label}: {install.what()}: torch {install.version} is built with "
                         "the pre-C++11 ABI (_GLIBCXX_USE_CXX11_ABI=0, as PyTorch's pip wheels "
                         "before 2.7 are), and cubench's harness and Google Benchmark use the C++11 "
                         "one: the two do not link; give LibTorch's cxx11-abi archive of that version "
                         f"instead, unpacked (libtorch-cxx11-abi-shared-with-deps-{base}{flavour}.zip)")
    return install


def preset_for_cuda(cuda, known):
    """The toolkit preset a torch of this CUDA ("12.1"; None: CPU only) is built with, of known
    ([(name, nvcc, here)]): the same major version, the nearest minor at or above its own (a newer
    minor of one major runs its code), else the nearest below; CPU only: the newest preset. None
    where no preset has that major version."""
    versioned = []
    for name, _, _ in known:
        m = re.search(r"(\d+)\.(\d+)", name)
        if m:
            versioned.append((int(m.group(1)), int(m.group(2)), name))
    if not versioned:
        return None
    if not cuda:
        return max(versioned)[2]
    m = re.match(r"(\d+)\.(\d+)", cuda)
    if not m:
        return None
    major, minor = int(m.group(1)), int(m.group(2))
    same = sorted(v for v in versioned if v[0] == major)
    at_or_above = [v for v in same if v[1] >= minor]
    if at_or_above:
        return at_or_above[0][2]
    return same[-1][2] if same else None


def torch_toolkits(installs, known):
    """Each install's preset (install.preset, .nvcc), its toolkit here; InputError, one line naming
    each that is missing and how to point at it, else."""
    nvccs = {n: (nvcc, ok) for n, nvcc, ok in known}
    missing = []
    for install in installs:
        preset = preset_for_cuda(install.cuda, known)
        if preset is None:
            majors = sorted({m.group(1) for m in (re.search(r"(\d+)\.\d+", n) for n, _, _ in known) if m},
                            key=int)
            missing.append(f"torch {install.version} ({install.label}) needs a CUDA {install.cuda} "
                           f"toolkit, and no preset of CMakePresets.json is one of CUDA "
                           f"{install.cuda.split('.')[0]} (they are CUDA {', '.join(majors)})")
            continue
        install.preset = preset
        nvcc, ok = nvccs[preset]
        install.nvcc = nvcc
        if ok:
            continue
        want = re.search(r"(\d+\.\d+)", preset).group(1)
        if not install.cuda:
            need = f"is CPU only and builds with the newest toolkit preset, {preset}: a CUDA {want}"
        elif want == install.cuda:
            need = f"needs a CUDA {want} toolkit"
        else:
            need = f"(CUDA {install.cuda}) needs a CUDA {want} toolkit, its preset's ({preset})"
        said = missing_toolkit(preset, nvcc)
        said = said[len(preset) + 2:] if said.startswith(f"{preset}: ") else said
        missing.append(f"torch {install.version} ({install.label}) {need}: {said}")
    if missing:
        raise InputError("; ".join(missing))


AOTI_EXPORT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "aoti_export.py")


def torch_builds(installs, build_root):
    """[Build] of the installs: each in build_root/torch-<LABEL>, with its preset and LibTorch."""
    builds = []
    for install in installs:
        folder = os.path.join(build_root, f"torch-{install.label}")
        cmd = ["cmake", "--preset", install.preset, "-B", folder, "-DCUBENCH_WITH_TORCH=ON",
               f"-DTorch_DIR={install.torch_dir}", "-DCMAKE_POLICY_VERSION_MINIMUM=3.5"]
        if install.cuda and install.nvcc:
            cmd.append(f"-DCUDA_TOOLKIT_ROOT_DIR={os.path.dirname(os.path.dirname(install.nvcc))}")
        if install.cudnn_root():
            cmd.append(f"-DCUDNN_ROOT={install.cudnn_root()}")
        # A python install with CUDA makes its own compiled rows' packages, into the folder its
        # build looks in (a package runs only under the PyTorch that made it).
        after = ()
        if install.kind == "python" and install.cuda:
            after = (("making the AOTInductor packages of", "packages made",
                      [install.path, AOTI_EXPORT, "--out", os.path.join(folder, "aoti")]),)
        builds.append(Build(install.label, folder, cmd, install.context(), after))
    return builds


def install_key(install):
    """What makes two installs one: the real path of their Torch_DIR (a python's is its torch's,
    so two venvs whose python is one /usr/bin/python3 stay two) and the torch version there."""
    return os.path.realpath(install.torch_dir), install.version


def one_install_warnings(installs):
    """A warning line per group of --torch labels that name one install (the same python or
    LibTorch under two labels, or two paths to it): legitimate, but an A/A, which a reader of the
    tables would otherwise take for two PyTorch builds."""
    groups = {}
    for install in installs:
        groups.setdefault(install_key(install), []).append(install.label)
    out = []
    for (torch_dir, version), labels in groups.items():
        if len(labels) > 1:
            named = ", ".join(labels[:-1]) + f" and {labels[-1]}"
            out.append(f"warning: --torch {named} are one install (torch {version}, Torch_DIR "
                       f"{torch_dir}): the comparison is an A/A, the install against itself, not "
                       "two PyTorch builds")
    return out
