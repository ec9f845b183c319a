"""ctest docs.readme_tour_runs_in_order: the README's tour, line by line and in order, in a fresh
folder, on the files its own lines make, so that what a new user types composes.

    check_readme_tour.py README.md BUILD_DIR

Each line runs as the README shows it, from a folder where build/cuda-13.0 is BUILD_DIR and
tools/ and CMakePresets.json the repository's, and must exit 0, with three exceptions said here:
  - without a GPU, a cubench line that needs one ends with its one line and exit 3; where it
    writes a file (--benchmark_out=a.json) the tour goes on with a stand-in, tests/data/tour/a.json
    (two processes of the same build on an H100: the gemm rows of an A/A), so the tools' lines
    still run on what such a run writes;
  - a line that runs a whole suite (--cubench_suite=full or cpu) is listed instead
    (--benchmark_list_tests appended): hours on a GPU, not a test's;
  - run-matrix builds every toolkit there is: it lists its presets instead (--list-presets).
`tools/history regressions` may exit 1 (it found a slower row: its answer, not a failure).
The compare lines must give a verdict (faster, slower, same or too noisy to tell)."""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NO_GPU_EXIT = 3
VERDICT = re.compile(r"\b(faster|slower|same|too noisy to tell)\b")


def tour_lines(readme):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    heading = re.search(r"^## An? [a-z-]+ tour\n", text, re.M)
    if not heading:
        sys.exit("check_readme_tour: README.md has no '## A ... tour' section")
    block = re.search(r"```sh\n(.*?)```", text[heading.end():], re.S)
    lines = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line]


def run(words, cwd):
    r = subprocess.run(words, cwd=cwd, capture_output=True, text=True, timeout=1800)
    return r.returncode, r.stdout + r.stderr


def main(readme, build_dir):
    work = tempfile.mkdtemp(prefix="cubench-tour-")
    os.makedirs(os.path.join(work, "build"))
    os.symlink(os.path.abspath(build_dir), os.path.join(work, "build", "cuda-13.0"))
    for shared in ("tools", "CMakePresets.json"):  # the repository root as the README's lines see it
        os.symlink(os.path.join(ROOT, shared), os.path.join(work, shared))
    failures = []
    for line in tour_lines(readme):
        words = shlex.split(line)
        note = ""
        if words[0].endswith("/cubench") and any(w.startswith("--cubench_suite=") for w in words) \
                and "--benchmark_list_tests" not in words:
            words.append("--benchmark_list_tests")
            note = " (listed, not run: a whole suite)"
        if words[0].endswith("run-matrix"):
            words = [words[0], "--list-presets"]
            note = " (--list-presets: building every toolkit is not a test's)"
        code, out = run(words, work)
        out_file = next((w.split("=", 1)[1] for w in words if w.startswith("--benchmark_out=")), None)
        if words[0].endswith("/cubench") and code == NO_GPU_EXIT and "no usable CUDA GPU" in out:
            if out_file:
                shutil.copy(os.path.join(HERE, "data", "tour", os.path.basename(out_file)),
                            os.path.join(work, out_file))
                note = f" (no GPU: the stand-in tests/data/tour/{os.path.basename(out_file)})"
            else:
                note = " (no GPU: its one line, exit 3)"
            code = 0
        ok = code == 0 or (code == 1 and words[:2] == ["tools/history", "regressions"])
        if ok and words[0] == "tools/compare" and not VERDICT.search(out):
            ok, note = False, " (no verdict in its output)"
        print(f"{'ok  ' if ok else 'FAIL'} {line}{note}")
        if not ok:
            failures.append(f"{line}: exit {code}{note}\n{out[-2000:]}")
    shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print(f"\n--- {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: check_readme_tour.py README.md BUILD_DIR")
    sys.exit(main(sys.argv[1], sys.argv[2]))
