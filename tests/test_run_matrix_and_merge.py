"""ctest: tools/merge-processes refuses what is not several processes of one build, and
tools/run-matrix checks every input before it builds anything, builds in folders of its own and
says how its builds go.

merge-processes: a file given twice (one path, one file under two names, a copy of its bytes, its
JSON written another way) and files of different builds (a context field that names the build
differs: the line names it) are one line on stderr, exit status 2 and no OUT; fields of the run
(date, memory limit, stopping rule) may differ, and the schema check still holds.

run-matrix, run as the command with what it needs stood in for on PATH (a fake nvidia-smi for a
GPU or for none, a fake cmake that records each call) and fake toolkits (a bin/nvcc under
CUBENCH_CUDA118_ROOT and CUBENCH_CUDA124_ROOT): a bad flag, preset, --out-dir or --build-dir, a
missing toolkit (one line naming its variable) and a single toolkit are exit 2 before cmake is
called or a folder made, with a GPU here or not; no GPU is exit 3, again before anything is built,
and --build-only builds anyway; the builds are in --build-dir/<preset> (default build/run-matrix),
never build/<preset>; a failed build says its error lines and makes the status 1; while a step
runs, a progress line with its step and time comes at most every PROGRESS_EVERY_S seconds, also
while the step prints nothing. No real build is run.

run-matrix --torch LABEL=PATH, with fake pythons (a wrapper of this python whose path holds a
fake torch package: run-matrix's -c script runs for real against it) and fake LibTorch folders:
each install is configured in --build-dir/torch-<LABEL> with the preset of its CUDA and its
Torch_DIR (and the wheel's cuDNN as CUDNN_ROOT), the labels' processes take turns and the merged
files and the report carry the labels; each bad input (no '=', a label twice or unfit for a file
name, --presets beside it, one install alone, a python without torch, a folder that is no
LibTorch, a torch of the pre-C++11 ABI, a missing toolkit) is one line and exit 2 before anything
is built; CPU-only installs with --suite cpu need no GPU. Debian's LibTorch, where installed, is
recognised with its version.
"""
import contextlib
import io
import json
import os
import re
import shutil
from shlex import quote as shlex_quote
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "tools")
DATA = os.path.join(HERE, "data")
ROOT = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, TOOLS)
from cubench_tools import matrix_builds  # noqa: E402
from cubench_tools import matrix_progress  # noqa: E402
from cubench_tools import run_matrix  # noqa: E402
from cubench_tools import toolkits  # noqa: E402
from cubench_tools import torch_installs  # noqa: E402
from cubench_tools.input_error import InputError  # noqa: E402

DEFAULT_BUILD_ROOT = os.path.join(ROOT, "build", "run-matrix")


def tool(name, *args, env=None):
    return subprocess.run([sys.executable, os.path.join(TOOLS, name), *args],
                          capture_output=True, text=True, env=env)


def data(name):
    return os.path.join(DATA, name)


def assert_one_line(test, r, pattern, code=2):
    """Exit status code, nothing on stdout and exactly one line on stderr, matching pattern."""
    test.assertEqual(r.returncode, code, r.stdout + r.stderr)
    test.assertEqual(r.stdout, "")
    lines = r.stderr.splitlines()
    test.assertEqual(len(lines), 1, r.stderr)
    test.assertRegex(lines[0], pattern)
    test.assertNotIn("Traceback", r.stderr)


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def load(path):
    with open(path) as f:
        return json.load(f)


# --- merge-processes --------------------------------------------------------------------------

class MergeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.out = os.path.join(self.dir, "merged.json")

    def tearDown(self):
        self.tmp.cleanup()

    def merge(self, *inputs):
        return tool("merge_processes.py", self.out, *inputs)

    def refused(self, inputs, pattern):
        r = self.merge(*inputs)
        assert_one_line(self, r, "^tools/merge-processes: " + pattern)
        self.assertFalse(os.path.exists(self.out))
        return r

    def copy(self, name, change=None, to=None):
        """A copy of the data file name, as a new file in the temporary folder, its document
        changed by change (a function) where given."""
        doc = load(data(name))
        if change is not None:
            change(doc)
        return write_json(os.path.join(self.dir, to or os.path.basename(name)), doc)


class MergeRefusesAFileTwice(MergeTest):
    def test_one_path_twice(self):
        a = data("one-process-a.json")
        self.refused((a, a), re.escape(f"{a} and {a} are the same file: name each process's file once") + "$")

    def test_one_file_under_two_names(self):
        a = self.copy("one-process-a.json")
        link = os.path.join(self.dir, "link.json")
        os.symlink(a, link)
        spelled = os.path.join(self.dir, ".", "one-process-a.json")
        for other in (link, spelled):
            with self.subTest(other=other):
                self.refused((a, data("one-process-b.json"), other),
                             re.escape(f"{a} and {other} are the same file"))

    def test_a_copy_of_its_bytes(self):
        copy = os.path.join(self.dir, "copy.json")
        shutil.copy(data("one-process-b.json"), copy)
        self.refused((data("one-process-b.json"), copy),
                     re.escape(f"{copy} holds the same bytes as {data('one-process-b.json')} (a copy)"))

    def test_its_json_written_another_way(self):
        doc = load(data("one-process-a.json"))
        other = os.path.join(self.dir, "indented.json")
        with open(other, "w") as f:
            json.dump(doc, f, indent=4, sort_keys=True)
        self.refused((data("one-process-a.json"), other),
                     re.escape(f"{other} holds the same results as {data('one-process-a.json')}"))

    def test_a_copy_of_a_file_cut_mid_write_is_one_line_with_no_warning(self):
        copy = os.path.join(self.dir, "truncated-copy.json")
        shutil.copy(data("truncated.json"), copy)
        r = self.refused((data("truncated.json"), copy), ".*holds the same bytes as")
        self.assertNotIn("warning", r.stderr)

    def test_a_bad_file_given_twice_is_named_as_bad(self):
        bad = data("bad/not-json.json")
        self.refused((bad, bad), re.escape(f"{bad}: not JSON"))

    def test_two_processes_merge(self):
        r = self.merge(data("one-process-a.json"), data("one-process-b.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(load(self.out)["context"]["processes"], "2")


class MergeRefusesDifferentBuilds(MergeTest):
    def test_two_toolkits_name_the_field(self):
        a, b = data("cuda-13.0.json"), data("cuda-11.8.json")
        self.refused((a, b), re.escape(f"{b} is of another build than {a}: its cuda_toolkit is '11.8', "
                                       f"{a}'s '13.0'; the processes of one merge must come from one "
                                       "build") + "$")

    def test_each_build_field(self):
        a = data("one-process-a.json")
        for field, value in (("git_revision", "0123456789ab"), ("cublas", "12.4.5"),
                             ("cuda_compiler", "/usr/local/cuda-12.4/bin/nvcc 12.4.131"),
                             ("cuda_architectures", "80"), ("build_type", "Debug"),
                             ("libtorch", "2.6.0"), ("gpu", "NVIDIA H200"),
                             ("executable", "build/cuda-12.4/cubench"),
                             ("not_built", '{"cudnn": "not found"}')):
            with self.subTest(field=field):
                b = self.copy("one-process-b.json", lambda doc: doc["context"].update({field: value}))
                self.refused((a, b), re.escape(f"{b} is of another build than {a}: its {field} is "
                                               f"'{value}', {a}'s '"))

    def test_torch_reference_files(self):
        a = data("one-process-a.json")  # no framework field: compared only where both have it
        first = self.copy("one-process-a.json", lambda doc: doc["context"].update(torch="2.11.0+cu130"),
                          to="first.json")
        second = self.copy("one-process-b.json", lambda doc: doc["context"].update(torch="2.6.0+cu124"))
        self.refused((first, second), re.escape(f"{second} is of another build than {first}: its torch is "
                                                f"'2.6.0+cu124', {first}'s '2.11.0+cu130'"))
        self.assertEqual(self.merge(a, second).returncode, 0)

    def test_fields_of_the_run_may_differ(self):
        # one-process-a and -b: one build, two runs (another date, load, --cubench_memory_limit,
        # stopping rule, not_run)
        ca, cb = load(data("one-process-a.json"))["context"], load(data("one-process-b.json"))["context"]
        self.assertNotEqual(ca["stopping"], cb["stopping"])
        self.assertIn("memory_limit_bytes", cb)
        r = self.merge(data("one-process-a.json"), data("one-process-b.json"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_spellings_that_name_one_build(self):
        a = self.copy("one-process-a.json", lambda doc: doc["context"].update(
            executable="./build/cuda-13.0/cubench", not_built='{ }'), to="a.json")
        b = self.copy("one-process-b.json", lambda doc: doc["context"].update(not_built="{}"))
        r = self.merge(a, b)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_field_one_file_lacks_is_not_compared(self):
        b = self.copy("one-process-b.json", lambda doc: doc["context"].pop("git_revision"))
        r = self.merge(data("one-process-a.json"), b)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_the_schema_is_still_checked_first(self):
        def other_schema(doc):
            schema = json.loads(doc["context"]["cubench_schema"])
            schema["counters"]["GB_per_J"]["unit"] = "MB/J"
            doc["context"]["cubench_schema"] = json.dumps(schema)
            doc["context"]["cuda_toolkit"] = "12.4"
        b = self.copy("one-process-b.json", other_schema)
        a = data("one-process-a.json")
        self.refused((a, b), re.escape(f"{b} has another cubench_schema than {a}: the processes of one "
                                       "merge must come from one build") + "$")


# --- run-matrix -------------------------------------------------------------------------------

FAKE_CMAKE = """#!/bin/sh
# cmake stood in for: each call recorded; configure makes the folder, build prints ninja's steps
echo "$*" >> "$FAKE_CMAKE_LOG"
case "$1" in
  --preset)
    echo "-- cubench: configuring $2"
    mkdir -p "$4"
    exit 0 ;;
  --build)
    echo "[1/2] Building CXX object main.o"
    if [ -n "${FAKE_CMAKE_SLOW:-}" ]; then  # a long build: says which signal stopped it
      sleep 60 & pid=$!
      trap 'echo "got INT $2" >> "$FAKE_CMAKE_LOG"; kill $pid; exit 130' INT
      trap 'echo "got TERM $2" >> "$FAKE_CMAKE_LOG"; kill $pid; exit 143' TERM
      wait $pid
    fi
    if [ "${FAKE_CMAKE_FAIL:-}" = "${2##*/}" ]; then
      echo "FAILED: main.o"
      echo "main.cu(3): error: identifier \\"boom\\" is undefined"
      echo "ninja: build stopped: subcommand failed."
      exit 1
    fi
    echo "[2/2] Linking CXX executable cubench"
    # the "suite": each call recorded, its --benchmark_out a copy of FAKE_RESULT dated by its path
    cat > "$2/cubench" <<'SUITE'
#!/bin/sh
echo "$0 $*" >> "$FAKE_CMAKE_LOG"
for a in "$@"; do case "$a" in --benchmark_out=*) out="${a#--benchmark_out=}" ;; esac; done
echo "[1/1] launch/empty/manual_time ... 0 min 1 s elapsed, ETA 0 min 0 s" >&2
sed 's|"date": "[^"]*"|"date": "'"$out"'"|' "$FAKE_RESULT" > "$out"
SUITE
    chmod +x "$2/cubench"
    exit 0 ;;
esac
exit 9
"""

GPU = "#!/bin/sh\necho 'GPU 0: NVIDIA Fake GPU (UUID: GPU-00000000-0000-0000-0000-000000000000)'\n"
DRIVER_GONE = ("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the "
               "NVIDIA driver.'\nexit 9\n")
NO_GPU_LISTED = "#!/bin/sh\nexit 0\n"


class RunMatrixTest(unittest.TestCase):
    """A temporary folder with fake toolkits for cuda-11.8 and cuda-12.4, a fake cmake and, where
    asked, a fake nvidia-smi on PATH; --out-dir and --build-dir inside it, not made yet."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.bin = os.path.join(self.dir, "bin")
        os.mkdir(self.bin)
        self.script("cmake", FAKE_CMAKE)
        self.cmake_log = os.path.join(self.dir, "cmake-calls")
        self.roots = {}
        for preset in ("cuda-11.8", "cuda-12.4"):
            root = os.path.join(self.dir, preset)
            os.makedirs(os.path.join(root, "bin"))
            self.script(os.path.join("..", preset, "bin", "nvcc"), "#!/bin/sh\nexit 0\n")
            self.roots[preset] = root
        self.out_dir = os.path.join(self.dir, "results")
        self.build_dir = os.path.join(self.dir, "builds")
        self.default_build_existed = os.path.exists(DEFAULT_BUILD_ROOT)

    def tearDown(self):
        self.tmp.cleanup()

    def script(self, name, text):
        path = os.path.join(self.bin, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
        return path

    def env(self, nvidia_smi=GPU, path_too=True, **extra):
        """The environment of a run: nvidia_smi the fake's script (None: no nvidia-smi at all, and
        PATH is the fakes' folder alone), the toolkits' variables at the fake toolkits."""
        env = dict(os.environ)
        if nvidia_smi is not None:
            self.script("nvidia-smi", nvidia_smi)
        env["PATH"] = self.bin + (os.pathsep + os.environ.get("PATH", "") if path_too else "")
        env["CUBENCH_CUDA118_ROOT"] = self.roots["cuda-11.8"]
        env["CUBENCH_CUDA124_ROOT"] = self.roots["cuda-12.4"]
        env["FAKE_CMAKE_LOG"] = self.cmake_log
        env.pop("NO_COLOR", None)
        env.update(extra)
        return env

    def run_matrix(self, *args, env=None):
        return tool("run_matrix.py", "--out-dir", self.out_dir, "--build-dir", self.build_dir, *args,
                    env=env if env is not None else self.env())

    def cmake_calls(self):
        """Each call of the fake cmake, and of a cubench it built, as a line of its arguments."""
        if not os.path.exists(self.cmake_log):
            return []
        with open(self.cmake_log) as f:
            return f.read().splitlines()

    def assert_nothing_built(self):
        self.assertEqual(self.cmake_calls(), [])
        self.assertFalse(os.path.exists(self.build_dir))
        self.assertFalse(os.path.exists(self.out_dir))
        if not self.default_build_existed:
            self.assertFalse(os.path.exists(DEFAULT_BUILD_ROOT))
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith(".cubench-probe")], [])

    def refused(self, args, pattern, code=2, env=None):
        r = self.run_matrix(*args, env=env)
        assert_one_line(self, r, "^tools/run-matrix: " + pattern, code)
        self.assert_nothing_built()
        return r


class RunMatrixArguments(RunMatrixTest):
    def test_a_bad_filter_is_refused_before_the_builds(self):
        for flag in ("--filter=[", "--filter=-[", "--filter=(gemm"):
            with self.subTest(flag=flag):
                value = flag.split("=", 1)[1]
                self.refused(("--presets", "cuda-11.8,cuda-12.4", flag),
                             re.escape(f"--filter '{value}' is not a regular expression: "))

    def test_a_filter_that_compiles_is_let_be(self):
        for value in (".", "^gemm/", "-^startup/", "^(gemm|svd)/.*/manual_time$"):
            with self.subTest(filter=value):
                self.assertEqual(run_matrix.parse_args([f"--filter={value}"]).filter, value)

    def test_each_bad_input_is_refused_before_the_builds(self):
        a_file = os.path.join(self.dir, "a-file")
        open(a_file, "w").close()
        for args, pattern in (
                (("--presets", "cuda-11.8,cuda-12.4", "--processes", "0"),
                 "--repetitions and --processes want a count of at least 1$"),
                (("--presets", "cuda-11.8,cuda-12.4", "--min-time", "abc"), "--min-time wants a time in seconds"),
                (("--presets", "cuda-11.8,cuda-12.4", "--suite", "fast"), "argument --suite: invalid choice"),
                (("--presets", "cuda-11.8,cuda-9.0"), r"unknown preset\(s\) cuda-9.0; known: "),
                (("--presets", ","), "--presets names no preset$"),
                (("--presets", "cuda-11.8,cuda-12.4,cuda-11.8"),
                 "--presets names cuda-11.8 twice: a preset is built and run once$"),
                (("--presets", "cuda-11.8,cuda-12.4", "--out-dir", a_file),
                 re.escape(f"--out-dir {a_file}: exists and is not a directory") + "$"),
                (("--presets", "cuda-11.8,cuda-12.4", "--build-dir", a_file),
                 re.escape(f"--build-dir {a_file}: exists and is not a directory") + "$"),
                (("--presets", "cuda-11.8,cuda-12.4", "--out-dir", os.path.join(a_file, "x")),
                 re.escape(f"--out-dir {os.path.join(a_file, 'x')}: cannot create it: {a_file} is not a directory")),
                (("--presets", "cuda-11.8,cuda-12.4", "--build-dir", os.path.join(ROOT, "build")),
                 re.escape(f"--build-dir {os.path.join(ROOT, 'build')}: its cuda-11.8 would be build/cuda-11.8, "
                           "the preset's own build folder (yours)"))):
            for gpu in (GPU, DRIVER_GONE):  # input is checked first, a GPU here or not
                with self.subTest(args=args, gpu=gpu is GPU):
                    self.refused(args, pattern, env=self.env(nvidia_smi=gpu))

    def test_an_unwritable_out_dir_is_refused_before_the_builds(self):
        for path in ("/sys/kernel", "/proc/cubench-results"):
            if not os.path.isdir(os.path.dirname(path) if path.startswith("/proc") else path):
                continue
            with self.subTest(path=path):
                self.refused(("--presets", "cuda-11.8,cuda-12.4", "--out-dir", path),
                             re.escape(f"--out-dir {path}: "))

    def test_one_toolkit_is_nothing_to_compare(self):
        self.refused(("--presets", "cuda-11.8",),
                     re.escape("--presets names one toolkit (cuda-11.8): nothing to compare; name two or "
                               "more (--build-only builds one alone)") + "$")

    def test_one_toolkit_here_is_nothing_to_compare(self):
        args = run_matrix.parse_args(["--out-dir", self.out_dir, "--build-dir", self.build_dir])
        known = [("cuda-13.0", "/nowhere/cuda-13.0/bin/nvcc", False),
                 ("cuda-12.4", "/nowhere/cuda-12.4/bin/nvcc", False),
                 ("cuda-11.8", os.path.join(self.roots["cuda-11.8"], "bin", "nvcc"), True)]
        with self.assertRaisesRegex(InputError, r"^only cuda-11.8's toolkit is here, and one toolkit is "
                                                r"nothing to compare; for another: cuda-13.0: no nvcc at "
                                                r"/nowhere/cuda-13.0/bin/nvcc; .*cuda-12.4: no nvcc at "
                                                r"/nowhere/cuda-12.4/bin/nvcc; set CUBENCH_CUDA124_ROOT"):
            run_matrix.chosen_presets(args, known)
        args.build_only = True  # one alone is built
        self.assertEqual(run_matrix.chosen_presets(args, known), ["cuda-11.8"])
        self.assertFalse(os.path.exists(self.out_dir))

    def test_the_default_build_folder_is_run_matrixs_own(self):
        self.assertEqual(run_matrix.parse_args([]).build_dir, DEFAULT_BUILD_ROOT)
        self.assertEqual(os.path.relpath(DEFAULT_BUILD_ROOT, ROOT), os.path.join("build", "run-matrix"))

    def test_help_says_the_exit_statuses_and_the_new_flags(self):
        r = tool("run_matrix.py", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for text in ("--build-only", "--build-dir", "build/run-matrix", "0  done",
                     "1  a build or a run failed", "2  a bad flag", "3  no GPU here"):
            self.assertIn(text, r.stdout)


class RunMatrixToolkits(RunMatrixTest):
    def test_a_missing_toolkit_is_one_line_naming_its_variable(self):
        empty = os.path.join(self.dir, "empty")
        os.mkdir(empty)
        env = self.env(CUBENCH_CUDA124_ROOT=empty)
        self.refused(("--presets", "cuda-11.8,cuda-12.4"), re.escape(
            f"cuda-12.4: no nvcc at {empty}/bin/nvcc (CUBENCH_CUDA124_ROOT={empty}); set "
            "CUBENCH_CUDA124_ROOT to the folder of a CUDA 12.4 (the one holding bin/nvcc), or install one "
            "at /usr/local/cuda-12.4 or /opt/cuda-12.4-debian (tools/install-deps --cuda-12.4)") + "$", env=env)

    def test_two_missing_toolkits_in_one_line(self):
        empty = os.path.join(self.dir, "empty")
        os.mkdir(empty)
        env = self.env(CUBENCH_CUDA124_ROOT=empty, CUBENCH_CUDA118_ROOT=empty)
        r = self.refused(("--presets", "cuda-11.8,cuda-12.4"), "cuda-11.8: no nvcc at .*; cuda-12.4: no nvcc at ",
                         env=env)
        self.assertIn("CUBENCH_CUDA118_ROOT", r.stderr)
        self.assertNotIn("CMake", r.stderr)

    def test_the_hint_of_each_preset(self):
        self.assertRegex(toolkits.missing_toolkit("cuda-11.8", "/opt/cuda-11.8-debian/bin/nvcc"),
                         r"^cuda-11.8: no nvcc at /opt/cuda-11.8-debian/bin/nvcc.*; set CUBENCH_CUDA118_ROOT to "
                         r"the folder of a CUDA 11.8 .*tools/install-deps --cuda-11.8\)$")
        self.assertEqual(toolkits.missing_toolkit("cuda-13.0", "/usr/local/cuda-13.0/bin/nvcc"),
                         "cuda-13.0: no nvcc at /usr/local/cuda-13.0/bin/nvcc; install CUDA 13.0 at "
                         "/usr/local/cuda-13.0 (CMakePresets.json's CUDAToolkit_ROOT for cuda-13.0)")


class RunMatrixWithoutAGpu(RunMatrixTest):
    def test_no_gpu_is_status_3_before_anything_is_built(self):
        for nvidia_smi, why in ((DRIVER_GONE, "nvidia-smi -L exited 9: NVIDIA-SMI has failed because it "
                                              "could not communicate with the NVIDIA driver."),
                                (NO_GPU_LISTED, "nvidia-smi -L lists no GPU"),
                                (None, "no nvidia-smi on PATH")):
            with self.subTest(why=why):
                if nvidia_smi is None and os.path.exists(os.path.join(self.bin, "nvidia-smi")):
                    os.remove(os.path.join(self.bin, "nvidia-smi"))
                env = self.env(nvidia_smi=nvidia_smi, path_too=nvidia_smi is not None)
                self.refused(("--presets", "cuda-11.8,cuda-12.4"),
                             re.escape(f"no GPU here ({why}): the suite runs on a GPU; nothing was built "
                                       "(--build-only builds without running)") + "$", code=3, env=env)

    def test_build_only_builds_without_a_gpu_in_folders_of_its_own(self):
        r = self.run_matrix("--presets", "cuda-12.4,cuda-11.8", "--build-only",
                            env=self.env(nvidia_smi=DRIVER_GONE))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.cmake_calls(), [
            f"--preset cuda-12.4 -B {self.build_dir}/cuda-12.4", f"--build {self.build_dir}/cuda-12.4",
            f"--preset cuda-11.8 -B {self.build_dir}/cuda-11.8", f"--build {self.build_dir}/cuda-11.8"])
        for preset in ("cuda-12.4", "cuda-11.8"):
            self.assertTrue(os.path.isfile(os.path.join(self.build_dir, preset, "cubench")))
            with open(os.path.join(self.build_dir, preset, "run-matrix.log")) as f:
                log = f.read()
            self.assertIn(f"$ cmake --preset {preset} -B {self.build_dir}/{preset}\n", log)
            self.assertIn("[2/2] Linking CXX executable cubench\n", log)
        self.assertFalse(os.path.exists(self.out_dir))  # nothing run: no results
        said = [line for line in r.stderr.splitlines() if "cuda-12.4" in line]
        self.assertEqual([re.sub(r"\(\d+ s\)", "(N s)", line) for line in said], [
            "[run-matrix] configuring cuda-12.4 ...",
            "[run-matrix] cuda-12.4: configured (N s)",
            "[run-matrix] building cuda-12.4 ...",
            "[run-matrix] cuda-12.4: built (N s)",
            f"[run-matrix] cuda-12.4: {self.build_dir}/cuda-12.4/cubench"])
        self.assertRegex(r.stderr.splitlines()[-1], r"^\[run-matrix\] \d+ s in all \(build \d+ s, runs 0 s\)$")

    def test_build_only_builds_one_alone(self):
        r = self.run_matrix("--presets", "cuda-11.8", "--build-only", env=self.env(nvidia_smi=None))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.cmake_calls()), 2)

class RunMatrixStops(RunMatrixTest):
    """SIGINT (Ctrl-C) or SIGTERM to run-matrix alone, mid-build: the running cmake gets the
    signal, no further build starts, no result file is written, and the status says which."""

    def stopped_by(self, signum):
        import signal
        import time
        proc = subprocess.Popen([sys.executable, os.path.join(TOOLS, "run_matrix.py"), "--out-dir",
                                 self.out_dir, "--build-dir", self.build_dir, "--presets",
                                 "cuda-11.8,cuda-12.4", "--processes", "2"],
                                env=self.env(FAKE_CMAKE_SLOW="1", FAKE_RESULT=data("one-process-a.json")),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while not any(c.startswith("--build") for c in self.cmake_calls()) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # the fake cmake is in its sleep, its traps set
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
        return proc.returncode, err

    def check(self, signum, name, status):
        code, err = self.stopped_by(signum)
        self.assertEqual(code, status, err)
        self.assertIn(f"got {name} {self.build_dir}/cuda-11.8", self.cmake_calls())  # passed on
        self.assertFalse([c for c in self.cmake_calls() if "cuda-12.4" in c], self.cmake_calls())
        self.assertIn(f"[run-matrix] stopped by SIG{name}: the running step was given SIG{name}; no further "
                      "build or run was started", err)
        self.assertNotIn("failed", err)
        self.assertEqual(os.listdir(self.out_dir), [])  # no result, no temporary file

    def test_sigint(self):
        import signal
        self.check(signal.SIGINT, "INT", 130)

    def test_sigterm(self):
        import signal
        self.check(signal.SIGTERM, "TERM", 143)


class RunMatrixBuilds(RunMatrixTest):
    def test_with_a_gpu_it_builds_then_runs_its_own_builds(self):
        r = self.run_matrix("--presets", "cuda-11.8,cuda-12.4", "--processes", "2",
                            env=self.env(FAKE_RESULT=data("one-process-a.json")))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("[run-matrix] on GPU 0: NVIDIA Fake GPU (UUID: ", r.stderr)
        runs = [call for call in self.cmake_calls() if not call.startswith("--")]
        self.assertEqual([call.split()[0] for call in runs],
                         [os.path.join(self.build_dir, p, "cubench") for p in ("cuda-11.8", "cuda-12.4") * 2])
        self.assertIn("[run-matrix] cuda-12.4 process 2/2: [1/1] launch/empty/manual_time ...", r.stderr)
        for preset in ("cuda-11.8", "cuda-12.4"):
            context = load(os.path.join(self.out_dir, f"{preset}.json"))["context"]
            self.assertEqual(context["processes"], "2")
            self.assertTrue(context["command_line"].startswith(os.path.join(self.build_dir, preset, "cubench")))
        self.assertTrue(os.path.isfile(os.path.join(self.out_dir, "report.html")))
        if not self.default_build_existed:
            self.assertFalse(os.path.exists(DEFAULT_BUILD_ROOT))

    def test_a_failed_build_says_its_error_and_is_status_1(self):
        r = self.run_matrix("--presets", "cuda-11.8,cuda-12.4", "--build-only",
                            env=self.env(FAKE_CMAKE_FAIL="cuda-11.8"))
        self.assertEqual(r.returncode, 1, r.stderr)
        log = os.path.join(self.build_dir, "cuda-11.8", "run-matrix.log")
        self.assertIn(f"[run-matrix] cuda-11.8: cmake --build {self.build_dir}/cuda-11.8 failed (exit 1) after ",
                      r.stderr)
        self.assertIn(f"; its whole output: {log}\n", r.stderr)
        self.assertIn("[run-matrix] cuda-11.8:   FAILED: main.o\n"
                      "[run-matrix] cuda-11.8:   main.cu(3): error: identifier \"boom\" is undefined\n", r.stderr)
        self.assertIn("[run-matrix] cuda-12.4: built", r.stderr)  # the others still build


# --- run-matrix --torch -----------------------------------------------------------------------

# A stand-in for `import torch` in a python: a package torch whose attributes are those run-matrix
# asks for (its -c script runs for real), with the TorchConfig.cmake of a wheel beside it.
FAKE_TORCH = """import os, types
__version__ = {version!r}
version = types.SimpleNamespace(cuda={cuda!r}, git_version={git!r}, hip={hip!r})
utils = types.SimpleNamespace(cmake_prefix_path=os.path.join(os.path.dirname(os.path.abspath(__file__)), "share", "cmake"))
_C = types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI={abi!r})
print("a warning torch prints on import")
"""

TORCH_CONFIG = """# Assume we are in <install-prefix>/share/cmake/Torch/TorchConfig.cmake
get_filename_component(TORCH_INSTALL_PREFIX "${{CMAKE_CURRENT_LIST_DIR}}/../../../" ABSOLUTE)
# When we build libtorch with the old libstdc++ ABI, dependent libraries must too.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI={abi}")
endif()
"""

GIT = "e2d141dbde55c2a4370fac5165b0561b6af4798b"
PY = "python%d.%d" % sys.version_info[:2]


def write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def debian_torch_dirs():
    """The folders of the system's TorchConfig.cmake (Debian's libtorch-dev puts it in
    /usr/lib/<triplet>/cmake/Torch)."""
    import glob
    return sorted(os.path.dirname(p) for pattern in ("/usr/lib/*/cmake/Torch/TorchConfig.cmake",
                                                      "/usr/lib/cmake/Torch/TorchConfig.cmake",
                                                      "/usr/share/cmake/Torch/TorchConfig.cmake")
                  for p in glob.glob(pattern))


CUDA130_NVCC = "/usr/local/cuda-13.0/bin/nvcc"  # the cuda-13.0 preset's, fixed in CMakePresets.json


class RunMatrixTorch(RunMatrixTest):
    """--torch LABEL=PATH: fake pythons (a fake torch package on their path), fake LibTorch
    folders, the fake toolkits of cuda-11.8 and cuda-12.4, the fake cmake."""

    def fake_python(self, name, version="2.7.1+cu118", cuda="11.8", abi=True, wheels=("cudnn", "cublas"),
                    cudnn_headers=True, torch=True, hip=None, config=True):
        """A python (a wrapper of this one, without site-packages) whose `import torch` gives a
        fake torch of this version and CUDA; the nvidia.* wheels named; its path."""
        site = os.path.join(self.dir, name, "site-packages")
        os.makedirs(site)
        if torch:
            write(os.path.join(site, "torch", "__init__.py"),
                  FAKE_TORCH.format(version=version, cuda=cuda, git=GIT, abi=abi, hip=hip))
            if config:
                write(os.path.join(site, "torch", "share", "cmake", "Torch", "TorchConfig.cmake"),
                      TORCH_CONFIG.format(abi=int(bool(abi))))
        for wheel in wheels:
            write(os.path.join(site, "nvidia", wheel, "__init__.py"))
            write(os.path.join(site, "nvidia", wheel, "lib", f"lib{wheel}.so.9"))
        if cudnn_headers and "cudnn" in wheels:
            write(os.path.join(site, "nvidia", "cudnn", "include", "cudnn_version.h"), "#define CUDNN_MAJOR 9\n")
        return self.wrapper(name, f'PYTHONPATH={shlex_quote(site)} exec {shlex_quote(sys.executable)} -S "$@"')

    def wrapper(self, name, line):
        path = write(os.path.join(self.dir, name, "bin", "python"), f"#!/bin/sh\n{line}\n")
        os.chmod(path, 0o755)
        return path

    def site(self, name):
        return os.path.join(self.dir, name, "site-packages")

    def fake_libtorch(self, name, version="2.6.0+cu124", abi=1, cuda_lib=True, build_version=True):
        """An unpacked LibTorch archive: share/cmake/Torch/TorchConfig.cmake, build-version,
        build-hash, include/.../version.h, lib/libtorch_cuda.so where cuda_lib."""
        root = os.path.join(self.dir, name)
        write(os.path.join(root, "share", "cmake", "Torch", "TorchConfig.cmake"), TORCH_CONFIG.format(abi=abi))
        if build_version:
            write(os.path.join(root, "build-version"), version + "\n")
        write(os.path.join(root, "build-hash"), GIT + "\n")
        base = version.split("+")[0]
        write(os.path.join(root, "include", "torch", "csrc", "api", "include", "torch", "version.h"),
              f'#define TORCH_VERSION \\\n  "{base}"\n')
        write(os.path.join(root, "lib", "libtorch.so"))
        if cuda_lib:
            write(os.path.join(root, "lib", "libtorch_cuda.so"))
        return root

    def configure_calls(self):
        return [call for call in self.cmake_calls() if call.startswith("--preset")]


class RunMatrixTorchBuilds(RunMatrixTorch):
    def test_each_install_is_built_with_its_toolkit_and_their_processes_take_turns(self):
        old = self.fake_python("venv-a", "2.7.1+cu118", "11.8")
        new = self.fake_libtorch("libtorch-b", "2.6.0+cu124")
        r = self.run_matrix("--torch", f"old={old}", "--torch", f"new={new}", "--processes", "2",
                            env=self.env(FAKE_RESULT=data("one-process-a.json")))
        self.assertEqual(r.returncode, 0, r.stderr)
        site = self.site("venv-a")
        self.assertEqual(self.configure_calls(), [
            f"--preset cuda-11.8 -B {self.build_dir}/torch-old -DCUBENCH_WITH_TORCH=ON "
            f"-DTorch_DIR={site}/torch/share/cmake/Torch -DCMAKE_POLICY_VERSION_MINIMUM=3.5 "
            f"-DCUDA_TOOLKIT_ROOT_DIR={self.roots['cuda-11.8']} -DCUDNN_ROOT={site}/nvidia/cudnn",
            f"--preset cuda-12.4 -B {self.build_dir}/torch-new -DCUBENCH_WITH_TORCH=ON "
            f"-DTorch_DIR={new}/share/cmake/Torch -DCMAKE_POLICY_VERSION_MINIMUM=3.5 "
            f"-DCUDA_TOOLKIT_ROOT_DIR={self.roots['cuda-12.4']}"])
        self.assertIn(f"--build {self.build_dir}/torch-old", self.cmake_calls())
        # every build first, then process 1 of each label, then process 2
        runs = [call.split()[0] for call in self.cmake_calls() if not call.startswith("--")]
        self.assertEqual(runs, [os.path.join(self.build_dir, f"torch-{label}", "cubench")
                                for label in ("old", "new") * 2])
        self.assertIn("[run-matrix] new process 2/2: [1/1] launch/empty/manual_time ...", r.stderr)
        self.assertIn(f"[run-matrix] old: torch 2.7.1+cu118 (CUDA 11.8), {PY} at {old}, Torch_DIR "
                      f"{site}/torch/share/cmake/Torch; built with preset cuda-11.8\n", r.stderr)
        for label, what in (("old", f"{PY} at {old}: torch 2.7.1+cu118 (git e2d141dbde55), CUDA 11.8"),
                            ("new", f"the LibTorch at {new}: torch 2.6.0+cu124 (git e2d141dbde55), CUDA 12.4")):
            context = load(os.path.join(self.out_dir, f"{label}.json"))["context"]
            self.assertEqual(context["processes"], "2")
            self.assertTrue(context["command_line"].startswith(
                os.path.join(self.build_dir, f"torch-{label}", "cubench") + " "))
            self.assertTrue(context["torch_install"].startswith(f"{label}: {what}; Torch_DIR "), context["torch_install"])
        self.assertIn(f"; its wheel's cuDNN {site}/nvidia/cudnn, cuBLAS {site}/nvidia/cublas",
                      load(os.path.join(self.out_dir, "old.json"))["context"]["torch_install"])
        self.assertEqual(sorted(n for n in os.listdir(self.out_dir) if n.endswith(".json")),
                         ["new.json", "new.process-1.json", "new.process-2.json",
                          "old.json", "old.process-1.json", "old.process-2.json"])
        with open(os.path.join(self.out_dir, "report.md")) as f:
            report = f.read()
        self.assertIn("# cubench report: old, new", report)  # each file labelled by its LABEL, the first the base
        self.assertIn("**new** against old", report)
        self.assertNotIn("warning", r.stderr)  # two installs: no A/A said
        self.assertNotIn("Warning:", report)
        # each build labelled by its PyTorch (its version and CUDA as run-matrix found them; cuDNN
        # and cuBLAS as the run loaded them: the fake run's file says 91900 and 13.1.0), on the
        # page and in the table's header, never by the toolkit cubench's file names (CUDA 13.0)
        context = load(os.path.join(self.out_dir, "new.json"))["context"]
        self.assertEqual((context["torch_version"], context["torch_cuda"], context["torch_dir"]),
                         ("2.6.0+cu124", "12.4", os.path.realpath(f"{new}/share/cmake/Torch")))
        stacks = {"old": "LibTorch 2.7.1+cu118 (CUDA 11.8, cuDNN 9.19.0, cuBLAS 13.1.0)",
                  "new": "LibTorch 2.6.0+cu124 (CUDA 12.4, cuDNN 9.19.0, cuBLAS 13.1.0)"}
        for label, stack in stacks.items():
            self.assertIn(f"**{label}**", report)
            self.assertIn(f": {stack}; 2 processes, one sample each", report)
        with open(os.path.join(self.out_dir, "table.md")) as f:
            header = f.readline()
        self.assertIn(f"| {stacks['old']}, 2 processes: time |", header)
        self.assertIn(f"| {stacks['new']}, 2 processes: time |", header)
        self.assertNotIn("CUDA 13.0 (cuBLAS", header + report)

    def test_two_labels_of_one_install_run_as_an_aa_with_a_warning(self):
        # one LibTorch, named by its folder and by its Torch_DIR: one install, run under both labels
        root = self.fake_libtorch("libtorch-a", "2.5.1+cu124")
        torch_dir = os.path.join(root, "share", "cmake", "Torch")
        r = self.run_matrix("--torch", f"a={root}", "--torch", f"b={torch_dir}", "--processes", "2",
                            env=self.env(FAKE_RESULT=data("one-process-a.json")))
        self.assertEqual(r.returncode, 0, r.stderr)
        warning = (f"[run-matrix] warning: --torch a and b are one install (torch 2.5.1+cu124, Torch_DIR "
                   f"{os.path.realpath(torch_dir)}): the comparison is an A/A, the install against "
                   "itself, not two PyTorch builds")
        self.assertEqual([line for line in r.stderr.splitlines() if "warning" in line], [warning])
        runs = [call.split()[0] for call in self.cmake_calls() if not call.startswith("--")]
        self.assertEqual(runs, [os.path.join(self.build_dir, f"torch-{label}", "cubench")
                                for label in "ab" * 2])  # still built and run under both labels
        with open(os.path.join(self.out_dir, "report.md")) as f:
            report = f.read()
        self.assertIn(f"\n\n**Warning:** a and b are one PyTorch install (torch 2.5.1+cu124, Torch_DIR "
                      f"{os.path.realpath(torch_dir)}): this comparison is an A/A, the install against "
                      "itself, not two PyTorch builds; a difference between them is noise.\n\n", report)

    def test_a_wheels_cudnn_without_headers_is_not_passed(self):
        a = self.fake_python("venv-a", "2.7.1+cu126", "12.6", cudnn_headers=False)
        b = self.fake_python("venv-b", "2.8.0+cu128", "12.8", wheels=())
        r = self.run_matrix("--torch", f"a={a}", "--torch", f"b={b}", "--build-only",
                            env=self.env(nvidia_smi=DRIVER_GONE))
        self.assertEqual(r.returncode, 0, r.stderr)
        calls = self.configure_calls()
        self.assertEqual([c.split()[1] for c in calls], ["cuda-12.4", "cuda-12.4"])  # 12.6, 12.8: 12.4's
        self.assertTrue(all("CUDNN_ROOT" not in c for c in calls), calls)
        self.assertIn(f"[run-matrix] b: {self.build_dir}/torch-b/cubench", r.stderr)

    def test_build_only_builds_one_install_alone_without_a_gpu(self):
        a = self.fake_libtorch("libtorch-a", "2.5.1+cu124")
        r = self.run_matrix("--torch", f"a={a}", "--build-only", env=self.env(nvidia_smi=None, path_too=True))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.cmake_calls()[1:], [f"--build {self.build_dir}/torch-a"])
        self.assertTrue(os.path.isfile(os.path.join(self.build_dir, "torch-a", "cubench")))
        self.assertFalse(os.path.exists(self.out_dir))

    def test_one_failed_build_is_status_1_and_the_other_still_builds(self):
        a, b = self.fake_libtorch("lt-a", "2.5.1+cu124"), self.fake_libtorch("lt-b", "2.4.1+cu118")
        r = self.run_matrix("--torch", f"a={a}", "--torch", f"b={b}", "--build-only",
                            env=self.env(FAKE_CMAKE_FAIL="torch-a"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"[run-matrix] a: cmake --build {self.build_dir}/torch-a failed (exit 1)", r.stderr)
        self.assertIn("[run-matrix] b: built", r.stderr)

    def test_no_gpu_is_status_3_before_anything_is_built(self):
        a, b = self.fake_libtorch("lt-a", "2.5.1+cu124"), self.fake_libtorch("lt-b", "2.4.1+cu118")
        for extra in ((), ("--suite", "cpu")):  # CUDA installs: the CPU suite still wants the GPU check
            with self.subTest(extra=extra):
                self.refused(("--torch", f"a={a}", "--torch", f"b={b}", *extra),
                             re.escape("no GPU here (nvidia-smi -L exited 9: NVIDIA-SMI has failed ")
                             + ".*nothing was built", code=3, env=self.env(nvidia_smi=DRIVER_GONE))

    def test_cpu_only_installs_need_no_gpu_only_for_the_cpu_suite(self):
        a = self.fake_libtorch("lt-a", "2.5.1+cpu", cuda_lib=False)
        b = self.fake_libtorch("lt-b", "2.6.0+cpu", cuda_lib=False)
        args = run_matrix.parse_args(["--torch", f"a={a}", "--torch", f"b={b}", "--suite", "cpu"])
        installs = [torch_installs.inspect_torch("a", a), torch_installs.inspect_torch("b", b)]
        self.assertEqual([i.cuda for i in installs], [None, None])
        self.assertFalse(run_matrix.gpu_needed(args, installs))
        args.suite = "default"
        self.assertTrue(run_matrix.gpu_needed(args, installs))
        args.suite = "cpu"
        self.assertTrue(run_matrix.gpu_needed(args, installs + [torch_installs.inspect_torch(
            "c", self.fake_libtorch("lt-c", "2.5.1+cu124"))]))
        self.assertTrue(run_matrix.gpu_needed(run_matrix.parse_args(["--suite", "cpu"])))  # toolkits: as before

    @unittest.skipUnless(os.path.exists(CUDA130_NVCC), f"no {CUDA130_NVCC}: the cuda-13.0 preset, which "
                         "CPU-only installs build with, names that toolkit alone")
    def test_a_cpu_aa_of_the_cpu_suite_runs_without_a_gpu(self):
        a = self.fake_libtorch("lt-a", "2.5.1+cpu", cuda_lib=False)
        r = self.run_matrix("--torch", f"a={a}", "--torch", f"b={a}", "--suite", "cpu", "--processes", "2",
                            env=self.env(nvidia_smi=DRIVER_GONE, FAKE_RESULT=data("one-process-a.json")))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("[run-matrix] no GPU needed: every install's torch is CPU only and --suite cpu", r.stderr)
        self.assertIn("[run-matrix] warning: --torch a and b are one install (torch 2.5.1+cpu, ", r.stderr)
        self.assertEqual(self.configure_calls(), [
            f"--preset cuda-13.0 -B {self.build_dir}/torch-{label} -DCUBENCH_WITH_TORCH=ON "
            f"-DTorch_DIR={a}/share/cmake/Torch -DCMAKE_POLICY_VERSION_MINIMUM=3.5" for label in "ab"])
        runs = [call for call in self.cmake_calls() if not call.startswith("--")]
        self.assertEqual(len(runs), 4)
        self.assertTrue(all("--cubench_suite=cpu" in call for call in runs), runs)
        self.assertTrue(os.path.isfile(os.path.join(self.out_dir, "report.html")))


class RunMatrixTorchRefusals(RunMatrixTorch):
    def refused_either_way(self, args, pattern, **env):
        """Refused with status 2 and one line, before anything is built, a GPU here or not."""
        for gpu in (GPU, DRIVER_GONE):
            with self.subTest(args=args, gpu=gpu is GPU):
                self.refused(args, pattern, env=self.env(nvidia_smi=gpu, **env))

    def test_bad_label_path_pairs(self):
        a = self.fake_libtorch("lt-a")
        for args, pattern in (
                (("--torch", a, "--torch", f"b={a}"),
                 re.escape(f"--torch '{a}': want LABEL=PATH (a label, '=', a python")),
                (("--torch", f"a={a}", "--torch", f"a={a}"),
                 "--torch names the label a twice: each install is built and run once, under a label "
                 "of its own$"),
                (("--torch", f"../x={a}", "--torch", f"b={a}"),
                 re.escape(f"--torch '../x={a}': the label '../x' names its result files")),
                (("--torch", f"={a}", "--torch", f"b={a}"), re.escape(f"--torch '={a}': the label ''")),
                (("--torch", "a=", "--torch", f"b={a}"), re.escape("--torch 'a=': no path after '='") + "$"),
                (("--torch", f"a={a}", "--torch", f"b={a}", "--presets", "cuda-11.8,cuda-12.4"),
                 "--torch and --presets are exclusive: "),
                (("--torch", f"a={a}"),
                 re.escape("one --torch (a) is nothing to compare: give two or more (--build-only "
                           "builds one alone)") + "$"),
                (("--torch", f"a={a}", "--torch", f"b={a}", "--out-dir", os.path.join(a, "build-version", "x")),
                 "--out-dir .*: cannot create it")):
            self.refused_either_way(args, pattern)

    def test_a_python_without_torch(self):
        bare = self.fake_python("venv-bare", torch=False)
        a = self.fake_libtorch("lt-a")
        self.refused_either_way(("--torch", f"a={a}", "--torch", f"b={bare}"), re.escape(
            f"--torch b: {PY} at {bare}: no torch (ModuleNotFoundError: No module named 'torch')") + "$")

    def test_paths_that_are_no_install(self):
        a = self.fake_libtorch("lt-a")
        empty = os.path.join(self.dir, "empty")
        os.mkdir(empty)
        nowhere = os.path.join(self.dir, "nowhere")
        text = write(os.path.join(self.dir, "notes.txt"), "hello\n")
        failing = self.wrapper("failing", "echo 'Segmentation fault' >&2; exit 139")
        no_config = self.fake_python("venv-noconfig", config=False)
        for path, pattern in (
                (empty, re.escape(f"--torch b={empty}: not a LibTorch (no share/cmake/Torch/TorchConfig.cmake "
                                  "in it, nor a TorchConfig.cmake)")),
                (nowhere, re.escape(f"--torch b={nowhere}: no such file or folder")),
                (text, re.escape(f"--torch b={text}: cannot run it as a python (Permission denied)") + "$"),
                (failing, re.escape(f"--torch b={failing}: not a python that answers `-c` (exit 139: "
                                    "Segmentation fault)") + "$"),
                (no_config, re.escape(f"--torch b: {PY} at {no_config}: torch 2.7.1+cu118 has no "
                                      f"TorchConfig.cmake at {self.site('venv-noconfig')}/torch/share/cmake/Torch"))):
            with self.subTest(path=path):
                self.refused_either_way(("--torch", f"a={a}", "--torch", f"b={path}"), pattern)

    def test_a_torch_of_the_old_abi(self):
        a = self.fake_libtorch("lt-a")
        wheel = self.fake_python("venv-old", "2.1.0", "12.1", abi=False)
        archive = self.fake_libtorch("libtorch-old", "2.0.1+cu118", abi=0)
        for path, what, version, zip_name in (
                (wheel, f"{PY} at {wheel}", "2.1.0", "2.1.0+cu121"),
                (archive, f"the LibTorch at {archive}", "2.0.1+cu118", "2.0.1+cu118")):
            with self.subTest(path=path):
                self.refused_either_way(("--torch", f"a={a}", "--torch", f"b={path}"), re.escape(
                    f"--torch b: {what}: torch {version} is built with the pre-C++11 ABI "
                    "(_GLIBCXX_USE_CXX11_ABI=0, as PyTorch's pip wheels before 2.7 are)") + ".*" + re.escape(
                    f"(libtorch-cxx11-abi-shared-with-deps-{zip_name}.zip)") + "$")

    def test_a_missing_toolkit_is_one_line_naming_its_variable(self):
        a = self.fake_libtorch("lt-a", "2.4.1+cu118")
        b = self.fake_python("venv-b", "2.5.1+cu124", "12.4")
        c = self.fake_python("venv-c", "2.5.1+cu121", "12.1")
        empty = os.path.join(self.dir, "empty")
        os.mkdir(empty)
        self.refused_either_way(("--torch", f"a={a}", "--torch", f"b={b}"), re.escape(
            f"torch 2.5.1+cu124 (b) needs a CUDA 12.4 toolkit: no nvcc at {empty}/bin/nvcc "
            f"(CUBENCH_CUDA124_ROOT={empty}); set CUBENCH_CUDA124_ROOT to the folder of a CUDA 12.4 "
            "(the one holding bin/nvcc)") + ".*$", CUBENCH_CUDA124_ROOT=empty)
        r = self.refused(("--torch", f"a={a}", "--torch", f"c={c}"),
                         re.escape("torch 2.4.1+cu118 (a) needs a CUDA 11.8 toolkit: no nvcc at ") + ".*"
                         + re.escape("; torch 2.5.1+cu121 (c) (CUDA 12.1) needs a CUDA 12.4 toolkit, its "
                                     "preset's (cuda-12.4): no nvcc at "),
                         env=self.env(CUBENCH_CUDA124_ROOT=empty, CUBENCH_CUDA118_ROOT=empty))
        self.assertIn("set CUBENCH_CUDA118_ROOT", r.stderr)

    def test_a_cuda_libtorch_that_says_not_which_cuda_and_a_rocm_torch(self):
        a = self.fake_libtorch("lt-a")
        unsaid = self.fake_libtorch("lt-unsaid", "2.6.0", build_version=False)
        rocm = self.fake_python("venv-rocm", "2.5.1+rocm6.2", None, hip="6.2.41133")
        self.refused_either_way(("--torch", f"a={a}", "--torch", f"b={unsaid}"), re.escape(
            f"--torch b={unsaid}: LibTorch 2.6.0 is built with CUDA (libtorch_cuda.so) but says not which"))
        self.refused_either_way(("--torch", f"a={a}", "--torch", f"b={rocm}"), re.escape(
            f"--torch b: {PY} at {rocm}: torch 2.5.1+rocm6.2 is a ROCm build (HIP 6.2.41133): cubench "
            "builds for CUDA") + "$")


class RunMatrixTorchParts(RunMatrixTorch):
    def test_the_preset_of_each_cuda(self):
        known = [("cuda-13.0", "/x/13.0/bin/nvcc", True), ("cuda-12.4", "/x/12.4/bin/nvcc", True),
                 ("cuda-11.8", "/x/11.8/bin/nvcc", True)]
        for cuda, preset in (("11.8", "cuda-11.8"), ("11.7", "cuda-11.8"), ("12.1", "cuda-12.4"),
                             ("12.4", "cuda-12.4"), ("12.6", "cuda-12.4"), ("13.0", "cuda-13.0"),
                             ("13.2", "cuda-13.0"), (None, "cuda-13.0"), ("10.2", None)):
            with self.subTest(cuda=cuda):
                self.assertEqual(torch_installs.preset_for_cuda(cuda, known), preset)

    def test_the_cuda_a_version_names(self):
        for version, cuda in (("2.5.1+cu124", "12.4"), ("2.0.1+cu118", "11.8"), ("2.9.0+cu130", "13.0"),
                              ("2.5.1+cpu", ""), ("2.5.1", None), ("1.13.0", None)):
            with self.subTest(version=version):
                self.assertEqual(torch_installs.cuda_of_version(version), cuda)

    def test_a_cpu_only_torch_wants_the_newest_preset(self):
        a = self.fake_libtorch("lt-a", "2.5.1+cpu", cuda_lib=False)
        install = torch_installs.inspect_torch("a", a)
        known = [("cuda-13.0", "/nowhere/cuda-13.0/bin/nvcc", False), ("cuda-12.4", "/x/bin/nvcc", True)]
        with self.assertRaisesRegex(InputError, "^" + re.escape(
                "torch 2.5.1+cpu (a) is CPU only and builds with the newest toolkit preset, cuda-13.0: a CUDA "
                "13.0: no nvcc at /nowhere/cuda-13.0/bin/nvcc; ")):
            torch_installs.torch_toolkits([install], known)

    def test_a_libtorch_folder_given_by_its_torch_dir_or_prefix(self):
        root = self.fake_libtorch("lt-a", "2.5.1+cu124")
        for path in (root, os.path.join(root, "share", "cmake", "Torch")):
            with self.subTest(path=path):
                install = torch_installs.inspect_torch("a", path)
                self.assertEqual((install.kind, install.version, install.cuda, install.git, install.cxx11_abi),
                                 ("libtorch", "2.5.1+cu124", "12.4", GIT, True))
                self.assertEqual(install.torch_dir, os.path.join(root, "share", "cmake", "Torch"))
        os.remove(os.path.join(root, "build-version"))
        os.remove(os.path.join(root, "lib", "libtorch_cuda.so"))
        install = torch_installs.inspect_torch("a", root)  # version.h's version; CPU only
        self.assertEqual((install.version, install.cuda), ("2.5.1", None))

    def test_a_python_named_on_path(self):
        venv = self.fake_python("venv-a", "2.7.1+cu118", "11.8")
        pairs = torch_installs.torch_pairs([f"a={venv}", "b=python3-on-path"])
        self.assertEqual(pairs, [("a", venv), ("b", "python3-on-path")])
        os.environ["PATH"], saved = os.path.dirname(venv) + os.pathsep + os.environ["PATH"], os.environ["PATH"]
        try:
            install = torch_installs.inspect_torch("a", "python")  # found on PATH
        finally:
            os.environ["PATH"] = saved
        self.assertEqual((install.kind, install.version, install.cuda, install.python),
                         ("python", "2.7.1+cu118", "11.8", PY[len("python"):]))

    def test_one_install_is_one_torch_dir_not_one_python(self):
        # two venvs share one python (a venv's bin/python links to the system's), not their torch
        a, b = (os.path.join(self.dir, f"venv-{x}", "torch", "share", "cmake", "Torch") for x in "ab")
        for d in (a, b):
            os.makedirs(d)
        link = os.path.join(self.dir, "link-to-a")
        os.symlink(a, link)
        install = lambda label, torch_dir, version="2.5.1+cu124": torch_installs.TorchInstall(  # noqa: E731
            label, "/usr/bin/python3", "python", version, "12.4", torch_dir)
        self.assertEqual(torch_installs.one_install_warnings([install("a", a), install("b", b)]), [])
        self.assertEqual(torch_installs.one_install_warnings([install("a", a), install("b", b),
                                                              install("c", link)]),
                         [f"warning: --torch a and c are one install (torch 2.5.1+cu124, Torch_DIR "
                          f"{os.path.realpath(a)}): "
                          "the comparison is an A/A, the install against itself, not two PyTorch builds"])

    def test_help_names_torch(self):
        r = tool("run_matrix.py", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for text in ("--torch LABEL=PATH", "pre-C++11 ABI", "torch-<LABEL>", "--suite default|full|cpu"):
            self.assertIn(text, r.stdout)


class RunMatrixDebianLibTorch(unittest.TestCase):
    def test_debians_libtorch_is_recognised_with_its_version(self):
        dirs = debian_torch_dirs()
        if not dirs:
            self.skipTest("no system LibTorch here (Debian's libtorch-dev puts TorchConfig.cmake in "
                          "/usr/lib/<triplet>/cmake/Torch; tools/install-deps --torch installs it)")
        torch_dir = dirs[0]
        version_h = "/usr/include/torch/csrc/api/include/torch/version.h"
        m = None
        if os.path.exists(version_h):
            with open(version_h) as f:
                m = re.search(r'TORCH_VERSION\s+(?:\\\s*)?"([^"]+)"', f.read())
        for path in (torch_dir, "/usr"):
            with self.subTest(path=path):
                install = torch_installs.inspect_torch("debian", path)
                self.assertEqual((install.kind, install.torch_dir), ("libtorch", torch_dir))
                self.assertRegex(install.version, r"^\d+\.\d+\.\d+")
                if m:
                    self.assertEqual(install.version, m.group(1))
                self.assertIsNone(install.cuda)  # Debian 12's is CPU only
                self.assertNotEqual(install.cxx11_abi, False)


class BuildProgress(unittest.TestCase):
    def test_a_line_at_most_every_interval_with_the_latest_step(self):
        p = matrix_progress.StepProgress("building cuda-12.4", start=100.0, every=10.0)
        self.assertIsNone(p.due(105.0))
        self.assertEqual(p.due(112.0), "building cuda-12.4 ... (12 s)")
        p.seen("[36/95] Building CUDA object families/gemm.cu.o\n")
        p.seen("-- not a step\n")
        p.seen("[37/95] Building CUDA object families/svd.cu.o\n")
        self.assertIsNone(p.due(121.9))
        self.assertEqual(p.due(165.0), "building cuda-12.4: [37/95] (1 min 5 s)")
        p.seen("[ 42%] Building CXX object x.o\n")  # make's steps
        self.assertEqual(p.due(175.0), "building cuda-12.4: [42%] (1 min 15 s)")
        self.assertEqual(matrix_progress.StepProgress("configuring cuda-12.4", 0.0).text(12.4),
                         "configuring cuda-12.4 ... (12 s)")

    def test_a_step_speaks_while_it_prints_nothing(self):
        err = io.StringIO()
        script = "echo '[1/3] a'; echo '[2/3] b'; sleep 1.5; echo '[3/3] c'"
        with tempfile.TemporaryFile("w+") as log, contextlib.redirect_stderr(err):
            progress = matrix_progress.StepProgress("building x", time.monotonic(), every=0.3)
            code, tail = matrix_builds.run_step(["sh", "-c", script], progress, log)
            log.seek(0)
            self.assertEqual(log.read(), "[1/3] a\n[2/3] b\n[3/3] c\n")
        self.assertEqual((code, tail), (0, ["[1/3] a", "[2/3] b", "[3/3] c"]))
        said = err.getvalue().splitlines()
        # in the 1.5 s of silence, a line every 0.3 s or so, each with the latest step
        self.assertGreaterEqual(len([s for s in said if s.startswith("[run-matrix] building x: [2/3] (")]), 2, said)
        self.assertTrue(all(re.match(r"^\[run-matrix\] building x: \[\d/3\] \(\d+ s\)$", s) for s in said), said)

    def test_the_error_lines_of_a_failed_step(self):
        tail = ["[1/9] ok", "[2/9] ok", "FAILED: a.o", "nvcc -c a.cu", "a.cu(3): error: boom", "",
                "ninja: build stopped: subcommand failed."]
        self.assertEqual(matrix_builds.error_lines(tail), tail[2:5] + tail[6:])
        configure = ["-- The CXX compiler identification is GNU 12.2.0",
                     "CMake Error at CMakeLists.txt:32 (message):", "  cubench: no nvcc at /x/bin/nvcc"]
        self.assertEqual(matrix_builds.error_lines(configure), configure[1:])
        self.assertEqual(matrix_builds.error_lines([str(i) for i in range(20)], most=3), ["17", "18", "19"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
