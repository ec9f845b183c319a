"""Build and run cubench once per CUDA toolkit, or once per PyTorch install, then table and plot
the results.

  tools/run-matrix [--presets cuda-11.8,cuda-13.0] [--processes 4] [--repetitions 1]
                   [--min-time S] [--suite default|full|cpu] [--filter REGEX] [--kernels]
                   [--build-dir DIR] [--build-only]
  tools/run-matrix --torch LABEL=PATH --torch LABEL=PATH [...] [the same flags, not --presets]

For each preset (default: every toolkit preset in CMakePresets.json whose nvcc exists here, oldest
toolkit first, so the table reads as the upgrade does; two or more: one toolkit is nothing to
compare):
configure and build in a folder of run-matrix's own, DIR/<preset> (--build-dir, default
build/run-matrix: your build/<preset> is never reconfigured), then run the suite --processes times
(default 4), each process into results/<preset>.process-<i>.json, merged into results/<preset>.json with one sample per process
(tools/merge-processes says why): the rule the A/A passed with, a process as the unit of the
U test. All presets are built first and their processes take turns (process 1 of each, then
process 2...). Each process runs --repetitions times (default 1: the merge keeps one sample per
process, its median repetition, so more buy a little steadiness for their time) and, unless
--min-time is given (passed as
--benchmark_min_time), cubench decides by itself how long to time each benchmark: it stops when
the samples' noise settles. --suite default|full|cpu is passed as --cubench_suite (cubench's own
default when not given). With --processes 1 the suite runs once into results/<preset>.json.
--kernels passes --cubench_kernels=on: each row's label names the kernels one run of it launched,
and the table notes, for a faster or slower row, what ran under each toolkit.
Then results/table.md (tools/compare --table, the first preset as the base), with three presets or
more one table per step from each preset to the next (results/step-<a>-to-<b>.md: which upgrade
paid for what), and results/plots/ (tools/plot: a chart per family, a line or bar per toolkit).
A family a build left out (no NCCL, cuDNN or LibTorch for that toolkit) is in the tables, marked
`not built`, with the build's reason in a note.
Last, with two presets or more, results/report.html and results/report.md (tools/report on the
merged files, each labelled by its preset): the page to hand on, with each family's verdict in a
sentence, the GPU's conditions, the kernels that changed, what was not built, the cost side and
the commands; each merged file's context records the command its processes ran
("command_line"), which the page shows, and the CPU's name ("cpu_model", from /proc/cpuinfo: a run
without a GPU is titled by it).
--build-only builds the presets and stops (no GPU needed; one preset is enough).

--torch LABEL=PATH (given twice or more; not with --presets) compares PyTorch installs instead of
toolkits: a build per install, each with the LibTorch of that install. PATH is a python that
imports torch (asked with one small `python -c` script: torch.utils.cmake_prefix_path, its
version, CUDA and git revision, the cuDNN, cuBLAS and NCCL its wheel bundles: nvidia.cudnn,
nvidia.cublas, nvidia.nccl) or an unpacked LibTorch (a folder with share/cmake/Torch/TorchConfig.cmake,
or a Torch_DIR itself, such as Debian's /usr/lib/x86_64-linux-gnu/cmake/Torch; its version from
its build-version file, else include/torch/csrc/api/include/torch/version.h). Each is built with
the toolkit preset of its own CUDA (the preset of the same major version and the nearest minor
at or above its own, else below: +cu118 with cuda-11.8, +cu121 and +cu124 with cuda-12.4, +cu13x
with cuda-13.0; a CPU-only torch with the newest preset, cuda-13.0, whose GPU families still
build and whose LibTorch families are then the CPU ones), in DIR/torch-<LABEL>:
  cmake --preset <its preset> -B DIR/torch-<LABEL> -DCUBENCH_WITH_TORCH=ON -DTorch_DIR=<its Torch>
        -DCMAKE_POLICY_VERSION_MINIMUM=3.5 [-DCUDA_TOOLKIT_ROOT_DIR=<the preset's toolkit>]
        [-DCUDNN_ROOT=<the wheel's nvidia/cudnn>]
(the policy floor for TorchConfig's old CMake code under CMake 4; the toolkit root for a CUDA
LibTorch whose TorchConfig looks for CUDA with FindCUDA, which would otherwise take the nvcc on
PATH; the wheel's cuDNN where it bundles one with its headers, the one LibTorch loads anyway, as
tools/gpu-session.sh does). TORCH_CUDA_ARCH_LIST from the environment reaches TorchConfig (e.g.
9.0: else a CUDA LibTorch may add every architecture it was built for to the CUDA flags). Then the
processes of the labels take turns, and the merge, tables, plots and report follow as for
toolkits, each file named and labelled by its LABEL (results/<LABEL>.json, the first --torch the
base); each result's context names its install ("torch_install") and records its version,
CUDA and Torch_DIR's real path ("torch_version", "torch_cuda", "torch_dir"), by which the tables
and the report label each build by its PyTorch and tell one install from two. Two labels of one
install (the same Torch_DIR, as real paths, and torch version: one python or LibTorch given twice,
or by two paths) are run, an A/A being legitimate, with a warning line on stderr that says the
comparison is an A/A, and the report says so first. A LibTorch built with the
pre-C++11 ABI (PyTorch's pip wheels before 2.7) is refused: cubench's harness and Google
Benchmark use the C++11 one, and the two do not link (LibTorch's cxx11-abi archive of the same
version does). No GPU is needed where every install's torch is CPU only and --suite cpu is given.

Before anything is built, every input is checked: the flags (a --filter that is no regular
expression, checked with Python's re after a leading '-', Google Benchmark's negation), the
presets, --out-dir and --build-dir, that each preset's toolkit is here (one line names a missing
one and the variable that points at it, e.g. CUBENCH_CUDA124_ROOT) and that there are two presets
or more; with --torch each LABEL=PATH (an '=', a label of letters, digits and ._+-, none twice),
each PATH (a python that imports torch, or a LibTorch folder), its ABI and the toolkit its CUDA
needs, and two installs or more; then that there is a GPU (`nvidia-smi -L` lists one; not asked
with --build-only).
Progress goes to stderr: while a preset configures and builds, every 10 s a line with its step
and time, also while it prints nothing ("configuring cuda-12.4 ... (12 s)", "building cuda-12.4:
[37/95] (1 min 5 s)";
the whole output in DIR/<preset>/run-matrix.log, and a failed step's error lines on stderr);
then cubench's own lines ("[k/N] name ... elapsed, ETA"), each led by the preset and process; at
the end the report's path and run-matrix's wall time, in all and split into building and running.
A preset that fails to build or run makes the status 1 (the others still build and run).
"""
import collections
import contextlib
import json
import math
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOLS = os.path.join(ROOT, "tools")
BUILD_ROOT = os.path.join(ROOT, "build", "run-matrix")  # --build-dir's default
PROG = "tools/run-matrix"
NO_GPU = 3  # the exit status where no GPU is here to run on

EXIT_STATUS_HELP = """exit status:
  0  done
  1  a build or a run failed (the others still ran), or an internal error (a bug)
  2  a bad flag, preset, toolkit, --torch install, --out-dir or --build-dir: one line on stderr
     says which, and nothing is built
  3  no GPU here (nvidia-smi -L lists none): one line on stderr; --build-only builds anyway
  130, 143  stopped by SIGINT (Ctrl-C) or SIGTERM: the running cmake or cubench was given the
     signal, no further build or run started, no merged result written from part of the processes"""
from . import cli
from .process_merge import merge  # noqa: E402
from .results import InputError  # noqa: E402


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


def say(msg):
    print(f"[run-matrix] {msg}", file=sys.stderr, flush=True)


def fmt_duration(s):
    """A wall time as a person reads it: "52 s", "14 min 2 s"."""
    minutes, seconds = divmod(int(round(s)), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def suite_command(binary, args, out_path):
    """The command line of one process of the suite. --benchmark_min_time only where --min-time
    is given: without it cubench stops each benchmark by itself once its noise settles."""
    cmd = [binary, f"--benchmark_filter={args.filter}", f"--benchmark_repetitions={args.repetitions}",
           f"--benchmark_out={out_path}", "--benchmark_out_format=json",
           "--benchmark_report_aggregates_only=false"]
    if args.min_time is not None:
        cmd.append(f"--benchmark_min_time={args.min_time}")
    if args.suite is not None:
        cmd.append(f"--cubench_suite={args.suite}")
    if args.kernels:
        cmd.append("--cubench_kernels=on")
    return cmd


PROGRESS = re.compile(r"^\[\d+/\d+\] ")


# --- stopping on SIGINT and SIGTERM ---------------------------------------------------------------
# Ctrl-C (SIGINT, to the whole foreground group) or a job scheduler's SIGTERM (to run-matrix
# alone) stops the matrix: the running child (cmake, or a cubench process, which then writes its
# finished rows and "interrupted") gets the same signal, no further build or run starts, and no
# result file is written from a part of the processes. Without this, a child the signal killed
# read as a failed build, and the next one started.

class Stopped(Exception):
    """The matrix was stopped by a signal (its name in args[0])."""


_children = []  # the child running now, for the signal to be passed on to
STOP_WAIT_S = 30  # how long a child has to stop on the signal before it is killed


def _on_signal(signum, _frame):
    for child in list(_children):
        if child.poll() is None:
            with contextlib.suppress(OSError):
                child.send_signal(signum)
    raise Stopped(signal.Signals(signum).name)


@contextlib.contextmanager
def stoppable(proc):
    """While proc runs, a signal is passed on to it; if the matrix stops, proc is given
    STOP_WAIT_S to end (cubench writes its finished rows), then killed."""
    _children.append(proc)
    try:
        yield proc
    except BaseException:
        try:
            proc.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
        raise
    finally:
        _children.remove(proc)


def handle_signals():
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_signal)


def run_suite(binary, args, out_path, what):
    """Runs one process of the suite; relays cubench's progress lines (on its stderr), led by
    what. They are the one source of progress: cubench knows its benchmarks, their count and its
    ETA; counting result lines here as well would give two figures that disagree."""
    tail = []
    with subprocess.Popen(suite_command(binary, args, out_path), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as proc, stoppable(proc):
        for line in proc.stdout:
            line = line.rstrip()
            tail = (tail + [line])[-5:]
            if PROGRESS.match(line):
                say(f"{what}: {line}")
    code = proc.returncode
    if code != 0:
        say(f"{what}: cubench exited {code}: " + " / ".join(tail))
    return code


def merge_into(out_path, parts, command, context=None):
    """Merges the processes' files into out_path, its context naming the command they ran (and
    adding context's fields: a --torch build's "torch_install")."""
    try:
        merged = merge(parts)
        merged["context"]["command_line"] = command
        merged["context"].update(context or {})
        cli.write_file(out_path, json.dumps(merged, indent=1))
    except InputError as e:
        say(f"merge failed: {e}")
        return False
    return True


def record_command(path, command, context=None):
    """Adds the command (and context's fields) to the context of a file cubench wrote (one
    process, no merge): the report shows the exact command each build ran. Whether it could be
    added or not, the file stays."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        data["context"]["command_line"] = command
        data["context"].update(context or {})
        cli.write_file(path, json.dumps(data, indent=1))
    except (OSError, ValueError, KeyError, TypeError, InputError) as e:
        say(f"{path}: the command line was not recorded in it ({e})")


def host_context():
    """What the result files' context adds of the machine: its CPU's name ("cpu_model", from
    /proc/cpuinfo), which Google Benchmark's context lacks and a run without a GPU is titled by;
    {} where it cannot be read."""
    text = _read("/proc/cpuinfo") or ""
    m = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return {"cpu_model": m.group(1).strip()} if m else {}


def write_report(written, out_dir):
    """tools/report on the result files, each labelled by its preset, the first the base; the
    HTML page's path, or None where the report failed (said on stderr)."""
    stem = os.path.join(out_dir, "report")
    labelled = [f"{os.path.splitext(os.path.basename(path))[0]}={path}" for path in written]
    r = subprocess.run([sys.executable, os.path.join(TOOLS, "report.py"), "--out", stem, *labelled],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        say(f"report failed: {r.stderr.strip()}")
        return None
    say(f"report: {stem}.html (and {stem}.md)")
    return stem + ".html"


def min_time(value):
    """--min-time: seconds, a positive number (an "s" after it, as Google Benchmark 1.8 writes it,
    is let be); passed through as given."""
    try:
        seconds = float(value[:-1] if value.endswith("s") else value)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise InputError(f"--min-time wants a time in seconds above 0 (e.g. 0.5), got '{value}'")
    return value


def benchmark_filter(value):
    """--filter: a regular expression, as Google Benchmark takes it (a leading '-' negates it);
    one that does not compile is refused here, before the builds, not by cubench after them."""
    try:
        re.compile(value[1:] if value.startswith("-") else value)
    except re.error as e:
        raise InputError(f"--filter '{value}' is not a regular expression: {e}")
    return value


def check_dir(path, option):
    """Raises InputError unless path is, or can be made, a writable directory, found out by
    writing (a file made and removed in it, or in the folder it would be made in: os.access says
    yes to root under /proc and /sys); makes nothing (the folders are made once every input is
    checked)."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise InputError(f"{option} {path}: exists and is not a directory")
    where = os.path.abspath(path)
    while not os.path.exists(where):
        where = os.path.dirname(where)
    if not os.path.isdir(where):
        raise InputError(f"{option} {path}: cannot create it: {where} is not a directory")
    try:
        cli._probe_new_file(os.path.join(where, f".cubench-probe{os.getpid()}"))
    except OSError as e:
        if where == os.path.abspath(path):
            raise InputError(f"{option} {path}: not writable: {e.strerror}")
        raise InputError(f"{option} {path}: cannot create it in {where}: {e.strerror}")


def check_build_dir(build_root, names):
    """run-matrix builds in folders of its own: never in a preset's own binaryDir (build/<preset>,
    the user's build, which a configure of run-matrix's would change)."""
    check_dir(build_root, "--build-dir")
    own = os.path.realpath(os.path.join(ROOT, "build"))
    if os.path.realpath(build_root) == own:
        raise InputError(f"--build-dir {build_root}: its {names[0]} would be build/{names[0]}, the "
                         "preset's own build folder (yours), which run-matrix never reconfigures; "
                         "name another (default build/run-matrix)")


def find_gpus():
    """(the GPUs `nvidia-smi -L` lists, one line each; why there are none, where there are none)."""
    try:
        r = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace", timeout=60)
    except FileNotFoundError:
        return [], "no nvidia-smi on PATH"
    except subprocess.TimeoutExpired:
        return [], "nvidia-smi -L gave no answer in 60 s"
    except OSError as e:
        return [], f"nvidia-smi: {cli.os_message(e)}"
    gpus = [line.strip() for line in r.stdout.splitlines() if line.startswith("GPU ")]
    if r.returncode != 0:
        said = next((line.strip() for line in r.stdout.splitlines() if line.strip()), "")
        return [], f"nvidia-smi -L exited {r.returncode}" + (f": {said}" if said else "")
    return gpus, "" if gpus else "nvidia-smi -L lists no GPU"


# --- --torch: a build per PyTorch install ------------------------------------------------------

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


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def torch_config_abi(torch_dir):
    """Whether a TorchConfig.cmake asks for the C++11 ABI (-D_GLIBCXX_USE_CXX11_ABI=1: True, =0:
    False), None where it says nothing."""
    m = re.search(r"_GLIBCXX_USE_CXX11_ABI=([01])", _read(os.path.join(torch_dir, "TorchConfig.cmake")) or "")
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
    text = _read(os.path.join(torch_dir, "TorchConfig.cmake")) or ""
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
    version = (_read(os.path.join(prefix, "build-version")) or "").strip()
    if not version:
        text = _read(os.path.join(prefix, "include", "torch", "csrc", "api", "include", "torch",
                                  "version.h")) or ""
        m = re.search(r'#define\s+TORCH_VERSION\s+(?:\\\s*)?"([^"]+)"', text)
        version = m.group(1) if m else ""
    if not version:
        m = re.search(r'PACKAGE_VERSION\s+"([^"]+)"',
                      _read(os.path.join(torch_dir, "TorchConfigVersion.cmake")) or "")
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
    git = (_read(os.path.join(prefix, "build-hash")) or "").strip() or None
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


def chosen_torch(args, known):
    """The --torch installs to build, every input about them checked (InputError, status 2, else):
    the LABEL=PATH values, --out-dir and --build-dir usable, two installs or more (one alone is
    nothing to compare; --build-only builds one), each a python with torch or a LibTorch with
    the C++11 ABI, each one's toolkit here."""
    pairs = torch_pairs(args.torch)
    check_dir(args.out_dir, "--out-dir")
    check_dir(args.build_dir, "--build-dir")
    if len(pairs) == 1 and not args.build_only:
        raise InputError(f"one --torch ({pairs[0][0]}) is nothing to compare: give two or more "
                         "(--build-only builds one alone)")
    installs = [inspect_torch(label, path) for label, path in pairs]
    torch_toolkits(installs, known)
    return installs


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
        builds.append(Build(install.label, folder, cmd, install.context()))
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


def gpu_needed(args, installs=None):
    """Whether the run needs a GPU: not with --build-only, nor where every --torch install is CPU
    only and --suite cpu runs the CPU families alone."""
    if args.build_only:
        return False
    return not (installs and args.suite == "cpu" and all(not i.cuda for i in installs))


def parse_args(argv):
    p = cli.parser(PROG, __doc__)
    p.epilog = EXIT_STATUS_HELP
    p.add_argument("--presets", help="comma-separated presets (default: those whose nvcc exists)")
    p.add_argument("--torch", action="append", metavar="LABEL=PATH",
                   help="a PyTorch install to build and compare (a python that imports torch, or "
                        "an unpacked LibTorch), under LABEL; twice or more; not with --presets")
    # 4: the smallest count whose U test can flag anything at 0.05 (2/C(8,4) = 0.029), and enough
    # for the A/A of the default run on the H200 (four processes against four: 0 of 69 rows
    # flagged).
    p.add_argument("--processes", type=int, default=4,
                   help="run the suite K times and merge, one sample per process (default 4)")
    p.add_argument("--repetitions", type=int, default=1, help="repetitions in each process (default 1)")
    p.add_argument("--min-time", help="--benchmark_min_time, in seconds (default: none passed; "
                                      "cubench stops each benchmark on its noise)")
    p.add_argument("--suite", choices=("default", "full", "cpu"),
                   help="passed as --cubench_suite (default: none passed, cubench's own)")
    p.add_argument("--filter", default=".", help="--benchmark_filter (a regular expression)")
    p.add_argument("--out-dir", default=os.path.join(ROOT, "results"))
    p.add_argument("--build-dir", default=BUILD_ROOT, metavar="DIR",
                   help="build each preset in DIR/<preset> (default build/run-matrix; never "
                        "build/<preset>, your own)")
    p.add_argument("--build-only", action="store_true",
                   help="configure and build the presets, run nothing (no GPU needed)")
    p.add_argument("--kernels", action="store_true",
                   help="name each row's kernels (--cubench_kernels=on) and what ran per toolkit")
    p.add_argument("--list-presets", action="store_true", help="say which presets can build here")
    args = p.parse_args(argv)
    if args.torch is not None and args.presets is not None:
        raise InputError("--torch and --presets are exclusive: --torch builds each PyTorch install "
                         "with the toolkit preset of its own CUDA, --presets compares toolkits")
    if args.torch is not None:
        torch_pairs(args.torch)
    if args.repetitions < 1 or args.processes < 1:
        raise InputError("--repetitions and --processes want a count of at least 1")
    if args.min_time is not None:
        min_time(args.min_time)
    benchmark_filter(args.filter)
    args.build_dir = os.path.abspath(args.build_dir)  # cmake runs in the source folder
    return args


def main(argv):
    args = parse_args(argv)
    known = toolkit_presets()
    if args.list_presets:
        for name, nvcc, ok in known:
            print(f"{name}\t{'available' if ok else 'missing'}\t{nvcc}")
        return 0
    if args.torch is not None:
        installs = chosen_torch(args, known)
        builds = torch_builds(installs, args.build_dir)
    else:
        installs = None
        builds = preset_builds(chosen_presets(args, known), args.build_dir)
    if gpu_needed(args, installs):
        gpus, why = find_gpus()
        if not gpus:
            return cli.fail(PROG, f"no GPU here ({why}): the suite runs on a GPU; nothing was built "
                                  "(--build-only builds without running)", NO_GPU)
        say(f"on {gpus[0]}" + (f" (and {len(gpus) - 1} more)" if len(gpus) > 1 else ""))
    elif not args.build_only:
        say("no GPU needed: every install's torch is CPU only and --suite cpu runs the CPU "
            "families alone")
    if shutil.which("cmake") is None:
        raise InputError("no cmake on PATH: run-matrix configures and builds each preset with it")
    for install in installs or []:
        say(f"{install.label}: torch {install.version} "
            f"({'CUDA ' + install.cuda if install.cuda else 'CPU only'}), {install.what()}, "
            f"Torch_DIR {install.torch_dir}; built with preset {install.preset}")
    for line in one_install_warnings(installs or []):
        say(line)
    # Checked above; made only now that the work starts.
    cli.output_dir(args.build_dir, "--build-dir")
    if not args.build_only:
        cli.output_dir(args.out_dir)
    clock = {"start": time.monotonic(), "build": 0.0, "runs": 0.0}
    handle_signals()
    try:
        return build_and_run(builds, args, clock)
    except Stopped as e:
        name = e.args[0]
        say(f"stopped by {name}: the running step was given {name}; no further build or run was "
            f"started, and no merged result was written from part of the processes")
        return 128 + int(getattr(signal, name))
    finally:
        total = time.monotonic() - clock["start"]
        say(f"{fmt_duration(total)} in all (build {fmt_duration(clock['build'])}, "
            f"runs {fmt_duration(clock['runs'])})")


def chosen_presets(args, known):
    """The presets to build, every input about them checked (InputError, status 2, else): known
    names, none twice, --out-dir and --build-dir usable, two presets or more (one alone is nothing
    to compare; --build-only builds one), each one's toolkit here."""
    if args.presets is not None and not args.presets.strip(","):
        raise InputError("--presets names no preset")
    available = {n for n, _, ok in known if ok}
    names = (sorted(available, key=toolkit_order) if args.presets is None
             else [n for n in args.presets.split(",") if n])
    unknown = [n for n in names if n not in {k[0] for k in known}]
    if unknown:
        raise InputError(f"unknown preset(s) {', '.join(unknown)}; known: {', '.join(k[0] for k in known)}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"--presets names {', '.join(twice)} twice: a preset is built and run once")
    check_dir(args.out_dir, "--out-dir")  # before the builds: a bad --out-dir costs nothing
    check_build_dir(args.build_dir, names or [k[0] for k in known])
    if not names:
        raise InputError("no toolkit preset's nvcc exists on this machine: "
                         + "; ".join(missing_toolkit(n, nvcc) for n, nvcc, _ in known))
    if len(names) == 1 and not args.build_only:
        if args.presets is None:
            others = [missing_toolkit(n, nvcc) for n, nvcc, ok in known if not ok]
            another = ("; ".join(others) if others else
                       "add a preset for another toolkit to CMakePresets.json")
            raise InputError(f"only {names[0]}'s toolkit is here, and one toolkit is nothing to "
                             f"compare; for another: {another} (--build-only builds one alone)")
        raise InputError(f"--presets names one toolkit ({names[0]}): nothing to compare; name two "
                         "or more (--build-only builds one alone)")
    nvccs = {n: nvcc for n, nvcc, _ in known}
    missing = [n for n in names if n not in available]
    if missing:
        raise InputError("; ".join(missing_toolkit(n, nvccs[n]) for n in missing))
    return names


def tables(written):
    """[(file name, result files)]: every preset against the first, then with three or more each
    step from one preset to the next."""
    if len(written) < 2:
        return []
    out = [("table.md", written)]
    if len(written) > 2:
        stem = lambda path: os.path.splitext(os.path.basename(path))[0]  # noqa: E731
        out += [(f"step-{stem(a)}-to-{stem(b)}.md", [a, b]) for a, b in zip(written, written[1:])]
    return out


@contextlib.contextmanager
def timed(clock, key):
    """Adds the wall time of the block to clock[key], also when it is interrupted."""
    start = time.monotonic()
    try:
        yield
    finally:
        clock[key] += time.monotonic() - start


PROGRESS_EVERY_S = 10.0  # a build says where it is at least this often
BUILD_STEP = re.compile(r"^\[\s*(\d+)\s*/\s*(\d+)\s*\]|^\[\s*(\d+)%\]")  # ninja's [37/95], make's [ 37%]


class StepProgress:
    """What a configure or build says while it runs: its latest step ("[37/95]" from ninja's
    lines, "[37%]" from make's) and its time, at most once every `every` seconds, and as often
    while it prints nothing (one long compile): "building cuda-12.4: [37/95] (1 min 5 s)",
    "configuring cuda-12.4 ... (12 s)" before any step."""

    def __init__(self, what, start, every=PROGRESS_EVERY_S):
        self.what, self.start, self.every = what, start, every
        self.said = start
        self.step = None

    def seen(self, line):
        m = BUILD_STEP.match(line)
        if m:
            self.step = f"[{m.group(1)}/{m.group(2)}]" if m.group(1) else f"[{m.group(3)}%]"

    def text(self, now):
        took = fmt_duration(now - self.start)
        return f"{self.what}: {self.step} ({took})" if self.step else f"{self.what} ... ({took})"

    def due(self, now):
        """The line to say now, or None where one was said less than `every` seconds ago."""
        if now - self.said < self.every:
            return None
        self.said = now
        return self.text(now)


def run_step(cmd, progress, log, clock=time.monotonic):
    """Runs cmd in the source folder, its output (stdout and stderr) into the open file log,
    saying progress's lines on stderr as it goes; (exit status, its last 200 lines)."""
    lines = queue.Queue()
    tail = collections.deque(maxlen=200)
    with subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, text=True, errors="replace") as proc, stoppable(proc):
        def pump():  # a thread: the loop below speaks on time also while nothing is printed
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)
        threading.Thread(target=pump, daemon=True).start()
        try:
            while True:
                try:
                    line = lines.get(timeout=min(1.0, progress.every))
                except queue.Empty:
                    line = ""
                if line is None:
                    break
                if line:
                    log.write(line)
                    tail.append(line.rstrip("\n"))
                    progress.seen(line)
                text = progress.due(clock())
                if text:
                    say(text)
        finally:
            log.flush()
    return proc.returncode, list(tail)


def error_lines(tail, most=12):
    """What a failed step's output says of why: from its first error line (ninja's "FAILED:",
    "CMake Error", a compiler's "error"), at most `most` lines; else its last lines."""
    first = next((i for i, line in enumerate(tail)
                  if re.search(r"^FAILED:|^CMake Error|\berror\b", line)), None)
    lines = tail[first:first + most] if first is not None else tail[-most:]
    return [line for line in lines if line.strip()]


def build_dir(build_root, preset):
    return os.path.join(build_root, preset)


# One build of the matrix: its name (a preset, or a --torch label: its result files' and its
# progress lines'), its folder, its configure command, and what its result files' context adds.
Build = collections.namedtuple("Build", "name folder configure context")


def preset_builds(names, build_root):
    """[Build] of the presets: each in build_root/<preset> (cmake --preset P -B there: the preset's
    own binaryDir, build/<preset>, is left alone)."""
    return [Build(p, build_dir(build_root, p), ["cmake", "--preset", p, "-B", build_dir(build_root, p)], {})
            for p in names]


def build_preset(preset, build_root):
    """Configures and builds preset in build_root/<preset>; whether it built."""
    return build_one(preset_builds([preset], build_root)[0])


def build_one(build):
    """Configures and builds one Build in its folder, saying its progress; whether it built."""
    name, folder = build.name, build.folder
    os.makedirs(folder, exist_ok=True)
    log_path = os.path.join(folder, "run-matrix.log")
    with open(log_path, "w", encoding="utf-8") as log:
        for verb, done, cmd in (("configuring", "configured", build.configure),
                                ("building", "built", ["cmake", "--build", folder])):
            start = time.monotonic()
            say(f"{verb} {name} ...")
            log.write(f"$ {shlex.join(cmd)}\n")
            log.flush()
            code, tail = run_step(cmd, StepProgress(f"{verb} {name}", start), log)
            took = fmt_duration(time.monotonic() - start)
            if code != 0:
                say(f"{name}: {shlex.join(cmd)} failed (exit {code}) after {took}; its whole "
                    f"output: {log_path}")
                for line in error_lines(tail):
                    say(f"{name}:   {line}")
                return False
            say(f"{name}: {done} ({took})")
    return True


def build_all(names, clock, where=BUILD_ROOT):
    """(names built, names failed), every build first: the runs then take turns. where: the
    {name: Build} to make, or a build root (each name a preset, built in where/<preset>)."""
    builds = where if isinstance(where, dict) else {b.name: b for b in preset_builds(names, where)}
    failed, built = [], []
    with timed(clock, "build"):
        for name in names:
            (built if build_one(builds[name]) else failed).append(name)
    return built, failed


def build_and_run(builds, args, clock):
    """Builds every Build, then runs their processes in turns, merges, tables, plots, reports."""
    folders = {b.name: b.folder for b in builds}
    contexts = {b.name: dict(b.context, **host_context()) for b in builds}
    built, failed = build_all([b.name for b in builds], clock, {b.name: b for b in builds})
    if args.build_only:
        for preset in built:
            say(f"{preset}: {os.path.join(folders[preset], 'cubench')}")
        return 1 if failed else 0
    # Process i of every preset before process i+1 of any: a drift of the machine over the
    # matrix (clocks, temperature, a neighbour's load) then falls on every preset alike instead
    # of looking like the difference between the first preset and the last.
    parts = {p: [] for p in built}
    commands = {}  # preset -> its first process's command line, for the file's context
    with timed(clock, "runs"):
        for i in range(1, args.processes + 1):
            for preset in [p for p in built if p not in failed]:
                if args.processes == 1:
                    part, what = os.path.join(args.out_dir, f"{preset}.json"), preset
                else:
                    part = os.path.join(args.out_dir, f"{preset}.process-{i}.json")
                    what = f"{preset} process {i}/{args.processes}"
                binary = os.path.join(folders[preset], "cubench")
                commands.setdefault(preset, shlex.join(suite_command(binary, args, part)))
                if run_suite(binary, args, part, what) == 0:
                    parts[preset].append(part)
                else:
                    failed.append(preset)
    written = []
    for preset in [p for p in built if p not in failed]:
        out_path = os.path.join(args.out_dir, f"{preset}.json")
        if args.processes == 1:
            record_command(out_path, commands[preset], contexts[preset])
            written.append(out_path)
        elif merge_into(out_path, parts[preset], commands[preset], contexts[preset]):
            written.append(out_path)
        else:
            failed.append(preset)
    for name, files in tables(written):
        path = os.path.join(args.out_dir, name)
        with open(path, "w") as f:
            r = subprocess.run([sys.executable, os.path.join(TOOLS, "compare.py"), "--table", *files],
                               stdout=f, stderr=subprocess.PIPE, text=True)
        say(f"table: {path}" if r.returncode == 0 else f"table {name} failed: {r.stderr.strip()}")
        failed += [name] if r.returncode != 0 else []
    if written:
        r = subprocess.run([sys.executable, os.path.join(TOOLS, "plot.py"), "--out-dir",
                            os.path.join(args.out_dir, "plots"), *written])
        failed += ["plots"] if r.returncode != 0 else []
    if len(written) > 1:
        failed += ["report"] if write_report(written, args.out_dir) is None else []
    return 1 if failed else 0

