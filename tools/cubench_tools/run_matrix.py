"""Build and run cubench once per CUDA toolkit, then table and plot the results.

  tools/run-matrix [--presets cuda-11.8,cuda-13.0] [--processes 4] [--repetitions 1]
                   [--min-time S] [--suite default|full] [--filter REGEX] [--kernels]
                   [--build-dir DIR] [--build-only]

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
the samples' noise settles. --suite default|full is passed as --cubench_suite (cubench's own
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
("command_line"), which the page shows.
--build-only builds the presets and stops (no GPU needed; one preset is enough).

Before anything is built, every input is checked: the flags (a --filter that is no regular
expression, checked with Python's re after a leading '-', Google Benchmark's negation), the
presets, --out-dir and --build-dir, that each preset's toolkit is here (one line names a missing
one and the variable that points at it, e.g. CUBENCH_CUDA124_ROOT) and that there are two presets
or more; then that there is a GPU (`nvidia-smi -L` lists one; not asked with --build-only).
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
  2  a bad flag, preset, toolkit, --out-dir or --build-dir: one line on stderr says which, and
     nothing is built
  3  no GPU here (nvidia-smi -L lists none): one line on stderr; --build-only builds anyway"""
from . import cli
from .merge import merge  # noqa: E402
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


def run_suite(binary, args, out_path, what):
    """Runs one process of the suite; relays cubench's progress lines (on its stderr), led by
    what. They are the one source of progress: cubench knows its benchmarks, their count and its
    ETA; counting result lines here as well would give two figures that disagree."""
    tail = []
    with subprocess.Popen(suite_command(binary, args, out_path), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            line = line.rstrip()
            tail = (tail + [line])[-5:]
            if PROGRESS.match(line):
                say(f"{what}: {line}")
    code = proc.returncode
    if code != 0:
        say(f"{what}: cubench exited {code}: " + " / ".join(tail))
    return code


def merge_into(out_path, parts, command):
    """Merges the processes' files into out_path, its context naming the command they ran."""
    try:
        merged = merge(parts)
        merged["context"]["command_line"] = command
        cli.write_file(out_path, json.dumps(merged, indent=1))
    except InputError as e:
        say(f"merge failed: {e}")
        return False
    return True


def record_command(path, command):
    """Adds the command to the context of a file cubench wrote (one process, no merge): the report
    shows the exact command each build ran. Whether it could be added or not, the file stays."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        data["context"]["command_line"] = command
        cli.write_file(path, json.dumps(data, indent=1))
    except (OSError, ValueError, KeyError, TypeError, InputError) as e:
        say(f"{path}: the command line was not recorded in it ({e})")


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


def parse_args(argv):
    p = cli.parser(PROG, __doc__)
    p.epilog = EXIT_STATUS_HELP
    p.add_argument("--presets", help="comma-separated presets (default: those whose nvcc exists)")
    # 4: the smallest count whose U test can flag anything at 0.05 (2/C(8,4) = 0.029), and enough
    # for the A/A of the default run on the H200 (four processes against four: 0 of 69 rows
    # flagged).
    p.add_argument("--processes", type=int, default=4,
                   help="run the suite K times and merge, one sample per process (default 4)")
    p.add_argument("--repetitions", type=int, default=1, help="repetitions in each process (default 1)")
    p.add_argument("--min-time", help="--benchmark_min_time, in seconds (default: none passed; "
                                      "cubench stops each benchmark on its noise)")
    p.add_argument("--suite", choices=("default", "full"),
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
    names = chosen_presets(args, known)
    if not args.build_only:
        gpus, why = find_gpus()
        if not gpus:
            return cli.fail(PROG, f"no GPU here ({why}): the suite runs on a GPU; nothing was built "
                                  "(--build-only builds without running)", NO_GPU)
        say(f"on {gpus[0]}" + (f" (and {len(gpus) - 1} more)" if len(gpus) > 1 else ""))
    if shutil.which("cmake") is None:
        raise InputError("no cmake on PATH: run-matrix configures and builds each preset with it")
    # Checked above; made only now that the work starts.
    cli.output_dir(args.build_dir, "--build-dir")
    if not args.build_only:
        cli.output_dir(args.out_dir)
    clock = {"start": time.monotonic(), "build": 0.0, "runs": 0.0}
    try:
        return build_and_run(names, args, clock)
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
                          stdin=subprocess.DEVNULL, text=True, errors="replace") as proc:
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
        except BaseException:
            proc.kill()
            raise
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


def build_preset(preset, build_root):
    """Configures and builds preset in build_root/<preset> (cmake --preset P -B there: the
    preset's own binaryDir, build/<preset>, is left alone), saying its progress; whether it built."""
    folder = build_dir(build_root, preset)
    os.makedirs(folder, exist_ok=True)
    log_path = os.path.join(folder, "run-matrix.log")
    with open(log_path, "w", encoding="utf-8") as log:
        for verb, done, cmd in (("configuring", "configured", ["cmake", "--preset", preset, "-B", folder]),
                                ("building", "built", ["cmake", "--build", folder])):
            start = time.monotonic()
            say(f"{verb} {preset} ...")
            log.write(f"$ {shlex.join(cmd)}\n")
            log.flush()
            code, tail = run_step(cmd, StepProgress(f"{verb} {preset}", start), log)
            took = fmt_duration(time.monotonic() - start)
            if code != 0:
                say(f"{preset}: {shlex.join(cmd)} failed (exit {code}) after {took}; its whole "
                    f"output: {log_path}")
                for line in error_lines(tail):
                    say(f"{preset}:   {line}")
                return False
            say(f"{preset}: {done} ({took})")
    return True


def build_all(names, clock, build_root=BUILD_ROOT):
    """(built presets, failed presets), every build first: the runs then take turns."""
    failed, built = [], []
    with timed(clock, "build"):
        for preset in names:
            (built if build_preset(preset, build_root) else failed).append(preset)
    return built, failed


def build_and_run(names, args, clock):
    built, failed = build_all(names, clock, args.build_dir)
    if args.build_only:
        for preset in built:
            say(f"{preset}: {os.path.join(build_dir(args.build_dir, preset), 'cubench')}")
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
                binary = os.path.join(build_dir(args.build_dir, preset), "cubench")
                commands.setdefault(preset, shlex.join(suite_command(binary, args, part)))
                if run_suite(binary, args, part, what) == 0:
                    parts[preset].append(part)
                else:
                    failed.append(preset)
    written = []
    for preset in [p for p in built if p not in failed]:
        out_path = os.path.join(args.out_dir, f"{preset}.json")
        if args.processes == 1:
            record_command(out_path, commands[preset])
            written.append(out_path)
        elif merge_into(out_path, parts[preset], commands[preset]):
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

