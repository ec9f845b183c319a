"""Build and run cubench once per CUDA toolkit, then table and plot the results.

  tools/run-matrix [--presets cuda-13.0,cuda-11.8] [--repetitions 5] [--processes K] [--filter REGEX]

For each preset (default: every toolkit preset in CMakePresets.json whose nvcc exists here):
configure, build, run the suite with repetitions into results/<preset>.json. With --processes K
the suite runs K times, each into results/<preset>.process-<i>.json, merged into
results/<preset>.json with one sample per process (tools/merge-processes says why); all presets
are built first and their processes take turns (process 1 of each, then process 2...). Then
results/table.md (tools/compare --table, the first preset as the base) and results/plots/
(tools/plot). Progress goes to stderr: which preset, which benchmark, elapsed and remaining.
A bad flag or --out-dir is one line on stderr and status 2 before anything is built; a preset that
fails to build or run makes the status 1 (the others still run).
"""
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TOOLS = os.path.join(ROOT, "tools")
sys.path.insert(0, TOOLS)
import cli  # noqa: E402
from merge_processes import merge  # noqa: E402
from results import InputError  # noqa: E402


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
    toolkit root (CUDAToolkit_ROOT, or CUBENCH_CUDA_ROOT_DEFAULT where that expands to nothing);
    the preset's CMAKE_CUDA_COMPILER where it names an nvcc that exists under that root (or there is
    no root), else <root>/bin/nvcc."""
    root = _expand(str(cache.get("CUDAToolkit_ROOT", "")))
    if not root:
        root = _expand(str(cache.get("CUBENCH_CUDA_ROOT_DEFAULT", "")))
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


def say(msg):
    print(f"[run-matrix] {msg}", file=sys.stderr, flush=True)


def fmt_seconds(s):
    return f"{int(s // 60)}m{int(s % 60):02d}s"


def run_suite(preset, args, out_path, what):
    binary = os.path.join(ROOT, "build", preset, "cubench")
    listed = subprocess.run([binary, "--benchmark_list_tests", f"--benchmark_filter={args.filter}"],
                            capture_output=True, text=True)
    total = len(listed.stdout.split()) * args.repetitions
    cmd = [binary, f"--benchmark_filter={args.filter}", f"--benchmark_repetitions={args.repetitions}",
           f"--benchmark_min_time={args.min_time}", f"--benchmark_out={out_path}",
           "--benchmark_out_format=json", "--benchmark_report_aggregates_only=false"]
    start, done = time.time(), 0
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail = []
    for line in proc.stdout:
        tail = (tail + [line.rstrip()])[-5:]
        m = re.match(r"^(\S+/manual_time)\s", line)
        if m and not re.search(r"_(mean|median|stddev|cv)$", m.group(1)):
            done += 1
            elapsed = time.time() - start
            remaining = elapsed / done * max(total - done, 0)
            say(f"{what}: {done}/{total} {m.group(1)}  elapsed {fmt_seconds(elapsed)}, "
                f"about {fmt_seconds(remaining)} left")
    code = proc.wait()
    if code != 0:
        say(f"{what}: cubench exited {code}: " + " / ".join(tail))
    return code


def merge_into(out_path, parts):
    try:
        cli.write_file(out_path, json.dumps(merge(parts), indent=1))
    except InputError as e:
        say(f"merge failed: {e}")
        return False
    return True


def main(argv):
    p = cli.parser("tools/run-matrix", __doc__)
    p.add_argument("--presets", help="comma-separated presets (default: those whose nvcc exists)")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--processes", type=int, default=1,
                   help="run the suite K times and merge, one sample per process (default 1)")
    p.add_argument("--min-time", default="0.1", help="--benchmark_min_time, in seconds")
    p.add_argument("--filter", default=".", help="--benchmark_filter")
    p.add_argument("--out-dir", default=os.path.join(ROOT, "results"))
    p.add_argument("--list-presets", action="store_true", help="say which presets can build here")
    args = p.parse_args(argv)
    if args.repetitions < 1 or args.processes < 1:
        raise InputError("--repetitions and --processes want a count of at least 1")
    known = toolkit_presets()
    if args.list_presets:
        for name, nvcc, ok in known:
            print(f"{name}\t{'available' if ok else 'missing'}\t{nvcc}")
        return 0
    if args.presets is not None and not args.presets.strip(","):
        raise InputError("--presets names no preset")
    names = [n for n, _, ok in known if ok] if args.presets is None else [n for n in args.presets.split(",") if n]
    unknown = [n for n in names if n not in {k[0] for k in known}]
    if unknown:
        raise InputError(f"unknown preset(s) {', '.join(unknown)}; known: {', '.join(k[0] for k in known)}")
    if not names:
        raise InputError("no toolkit preset's nvcc exists on this machine")
    cli.output_dir(args.out_dir)  # before the builds: a bad --out-dir costs nothing
    failed, built = [], []
    for preset in names:  # every build first: the runs below then take turns
        say(f"{preset}: configure and build")
        for step in (["cmake", "--preset", preset], ["cmake", "--build", "--preset", preset]):
            r = subprocess.run(step, cwd=ROOT, capture_output=True, text=True)
            if r.returncode != 0:
                say(f"{preset}: {' '.join(step)} failed:\n{(r.stdout + r.stderr)[-2000:]}")
                failed.append(preset)
                break
        else:
            built.append(preset)
    # Process i of every preset before process i+1 of any: a drift of the machine over the
    # matrix (clocks, temperature, a neighbour's load) then falls on every preset alike instead
    # of looking like the difference between the first preset and the last.
    parts = {p: [] for p in built}
    for i in range(1, args.processes + 1):
        for preset in [p for p in built if p not in failed]:
            if args.processes == 1:
                part, what = os.path.join(args.out_dir, f"{preset}.json"), preset
            else:
                part = os.path.join(args.out_dir, f"{preset}.process-{i}.json")
                what = f"{preset} process {i}/{args.processes}"
            if run_suite(preset, args, part, what) == 0:
                parts[preset].append(part)
            else:
                failed.append(preset)
    written = []
    for preset in [p for p in built if p not in failed]:
        out_path = os.path.join(args.out_dir, f"{preset}.json")
        if args.processes == 1 or merge_into(out_path, parts[preset]):
            written.append(out_path)
        else:
            failed.append(preset)
    if len(written) >= 2:
        with open(os.path.join(args.out_dir, "table.md"), "w") as f:
            r = subprocess.run([sys.executable, os.path.join(TOOLS, "compare.py"), "--table", *written],
                               stdout=f, stderr=subprocess.PIPE, text=True)
        say(f"table: {os.path.join(args.out_dir, 'table.md')}" if r.returncode == 0 else f"table failed: {r.stderr.strip()}")
        failed += ["table"] if r.returncode != 0 else []
    if written:
        r = subprocess.run([sys.executable, os.path.join(TOOLS, "plot.py"), "--out-dir",
                            os.path.join(args.out_dir, "plots"), *written])
        failed += ["plots"] if r.returncode != 0 else []
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(cli.run("tools/run-matrix", main))
