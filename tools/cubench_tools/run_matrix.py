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
9.0: else a CUDA LibTorch may add every architecture it was built for to the CUDA flags). A python
install with CUDA then makes its compiled rows' AOTInductor packages with its own torch
(`<its python> tools/aoti_export.py --out DIR/torch-<LABEL>/aoti`: docs/compiled.md), so each
build's compiled rows are its own PyTorch's (where that fails, they are left out, saying why). Then
the processes of the labels take turns, and the merge, tables, plots and report follow as for
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
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

from . import cli
from .checkout import BUILD_ROOT, ROOT, TOOLS
from .input_error import InputError
from .matrix_builds import build_all, preset_builds
from .matrix_progress import PROGRESS, fmt_duration, say, timed
from .process_merge import merge
from .stopping import Stopped, handle_signals, stoppable
from .toolkits import missing_toolkit, toolkit_order, toolkit_presets
from .torch_installs import (inspect_torch, one_install_warnings, read_text, torch_builds, torch_pairs,
                             torch_toolkits)


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
    text = read_text("/proc/cpuinfo") or ""
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
