"""Build and run cubench once per CUDA toolkit, then table and plot the results.

  tools/run-matrix [--presets cuda-11.8,cuda-13.0] [--processes 4] [--repetitions 1]
                   [--min-time S] [--suite default|full] [--filter REGEX] [--kernels]

For each preset (default: every toolkit preset in CMakePresets.json whose nvcc exists here, oldest
toolkit first, so the table reads as the upgrade does):
configure and build, then run the suite --processes times (default 4), each process into
results/<preset>.process-<i>.json, merged into results/<preset>.json with one sample per process
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
Progress goes to stderr: cubench's own lines ("[k/N] name ... elapsed, ETA"), each led by the
preset and process; at the end the report's path and run-matrix's wall time, in all and split
into building and running. A bad flag or --out-dir is one line on stderr and status 2 before
anything is built; a preset that fails to build or run makes the status 1 (the others still run).
"""
import contextlib
import json
import math
import os
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOLS = os.path.join(ROOT, "tools")
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


def toolkit_presets():
    """[(name, nvcc path, whether it exists)] for the non-hidden configure presets."""
    with open(os.path.join(ROOT, "CMakePresets.json")) as f:
        presets = json.load(f)["configurePresets"]
    by_name = {p["name"]: p for p in presets}
    out = []
    for p in presets:
        if p.get("hidden"):
            continue
        nvcc = preset_nvcc(_cache_variables(by_name, p))
        out.append((p["name"], nvcc, bool(nvcc) and os.path.exists(nvcc)))
    return out


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


def parse_args(argv):
    p = cli.parser("tools/run-matrix", __doc__)
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
    p.add_argument("--filter", default=".", help="--benchmark_filter")
    p.add_argument("--out-dir", default=os.path.join(ROOT, "results"))
    p.add_argument("--kernels", action="store_true",
                   help="name each row's kernels (--cubench_kernels=on) and what ran per toolkit")
    p.add_argument("--list-presets", action="store_true", help="say which presets can build here")
    args = p.parse_args(argv)
    if args.repetitions < 1 or args.processes < 1:
        raise InputError("--repetitions and --processes want a count of at least 1")
    if args.min_time is not None:
        min_time(args.min_time)
    return args


def main(argv):
    args = parse_args(argv)
    known = toolkit_presets()
    if args.list_presets:
        for name, nvcc, ok in known:
            print(f"{name}\t{'available' if ok else 'missing'}\t{nvcc}")
        return 0
    if args.presets is not None and not args.presets.strip(","):
        raise InputError("--presets names no preset")
    names = (sorted((n for n, _, ok in known if ok), key=toolkit_order) if args.presets is None
             else [n for n in args.presets.split(",") if n])
    unknown = [n for n in names if n not in {k[0] for k in known}]
    if unknown:
        raise InputError(f"unknown preset(s) {', '.join(unknown)}; known: {', '.join(k[0] for k in known)}")
    if not names:
        raise InputError("no toolkit preset's nvcc exists on this machine")
    cli.output_dir(args.out_dir)  # before the builds: a bad --out-dir costs nothing
    clock = {"start": time.monotonic(), "build": 0.0, "runs": 0.0}
    try:
        return build_and_run(names, args, clock)
    finally:
        total = time.monotonic() - clock["start"]
        say(f"{fmt_duration(total)} in all (build {fmt_duration(clock['build'])}, "
            f"runs {fmt_duration(clock['runs'])})")


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


def build_all(names, clock):
    """(built presets, failed presets), every build first: the runs then take turns."""
    failed, built = [], []
    with timed(clock, "build"):
        for preset in names:
            say(f"{preset}: configure and build")
            for step in (["cmake", "--preset", preset], ["cmake", "--build", "--preset", preset]):
                r = subprocess.run(step, cwd=ROOT, capture_output=True, text=True)
                if r.returncode != 0:
                    say(f"{preset}: {' '.join(step)} failed:\n{(r.stdout + r.stderr)[-2000:]}")
                    failed.append(preset)
                    break
            else:
                built.append(preset)
    return built, failed


def build_and_run(names, args, clock):
    built, failed = build_all(names, clock)
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
                binary = os.path.join(ROOT, "build", preset, "cubench")
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

