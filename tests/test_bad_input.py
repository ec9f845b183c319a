"""ctest: bad input that check_tool_error.cmake cannot pass or check (an empty argument, a file
the tool must not leave in its working folder, a history to query): each is one line on stderr,
exit status 2, and nothing written. Also the output check itself (cli.check_output_file,
cli.output_dir): it finds out by writing, as root too, and leaves nothing behind."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "tools")
DATA = os.path.join(HERE, "data")
sys.path.insert(0, TOOLS)
from cubench_tools import cli  # noqa: E402
from cubench_tools.input_error import InputError  # noqa: E402

A = os.path.join(DATA, "cuda-13.0.json")
B = os.path.join(DATA, "cuda-11.8.json")


def tool(name, *args, cwd=None):
    return subprocess.run([sys.executable, os.path.join(TOOLS, name + ".py"), *args],
                          capture_output=True, text=True, cwd=cwd)


class InFolder(unittest.TestCase):
    """Each test in an empty folder of its own, its working folder: what a tool leaves is seen."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def assert_refused(self, r, pattern):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertRegex(r.stderr, pattern)
        self.assertNotIn("Traceback", r.stderr)

    def assert_nothing_left(self, *keep):
        self.assertEqual(sorted(set(os.listdir(self.dir)) - set(keep)), [])


class ReportOutNamesNoFile(InFolder):
    def test_an_empty_or_nameless_out_is_refused_and_writes_nothing(self):
        for out in ("", ".md", ".html", "sub/", ".", os.path.join(self.dir, "")):
            with self.subTest(out=out):
                r = tool("report", "--out", out, A, B, cwd=self.dir)
                self.assert_refused(r, r"^tools/report: --out '.*': names no file")
                self.assert_nothing_left()


class HistoryDbKeepsNothing(InFolder):
    def test_an_empty_or_in_memory_db_is_refused(self):
        for db in ("", ":memory:"):
            for command in (["add", A], ["show"], ["regressions", "--since", "2026-01-01"]):
                with self.subTest(db=db, command=command[0]):
                    r = tool("history", command[0], "--db", db, *command[1:], cwd=self.dir)
                    self.assert_refused(r, rf"^tools/history: --db '{db}': SQLite's .* keeps nothing")
                    self.assertNotIn("rows added", r.stdout)
                    self.assert_nothing_left()


class HistorySinceNotADate(InFolder):
    def setUp(self):
        super().setUp()
        self.db = os.path.join(self.dir, "h.sqlite")
        r = tool("history", "add", "--db", self.db, A)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_since_that_is_neither_a_date_nor_a_revision_is_refused(self):
        r = tool("history", "regressions", "--db", self.db, "--since", "yesterday")
        self.assert_refused(r, r"^tools/history: --since yesterday: not a date \(YYYY-MM-DD, or an "
                               r"ISO date-time .*\) nor the cubench revision of any run in ")
        for since in ("2026-13-45", "2026-12-01junk", "2026-02-30"):
            with self.subTest(since=since):
                r = tool("history", "regressions", "--db", self.db, "--since", since)
                self.assert_refused(r, rf"^tools/history: --since {since}: not a date \(YYYY-MM-DD")

    def test_dates_and_revisions_still_work(self):
        for since in ("2020-01-01", "2020-01-01T09:30", "2020-01-01T09:30:00+00:00"):
            with self.subTest(since=since):
                r = tool("history", "regressions", "--db", self.db, "--since", since)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(f"since {since}", r.stdout)
        r = tool("history", "regressions", "--db", self.db, "--since", "2099-01-01")
        self.assert_refused(r, r"--since 2099-01-01: no run of the history is on or after it$")


class WhereRowsUnderOne(InFolder):
    def test_a_count_under_one_is_refused(self):
        for rows in ("-3", "0"):
            with self.subTest(rows=rows):
                r = tool("where_the_time_went", "--rows", rows, A)
                self.assert_refused(r, rf"^tools/where-the-time-went: --rows wants a count of at "
                                       rf"least 1, got {rows}$")
                self.assertEqual(r.stdout, "")

    def test_one_lists_one(self):
        r = tool("where_the_time_went", "--rows", "1", A)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("The 1 costliest rows", r.stdout)
        table = r.stdout.split("The 1 costliest rows")[1]
        self.assertEqual(len([l for l in table.splitlines() if l.startswith("| ") and "/" in l]), 1)


class OutputCheckWrites(InFolder):
    """The check opens or creates what it checks (os.access says yes to root for /proc and
    read-only places) and leaves the folder as it found it."""

    def test_a_new_file_is_probed_and_removed(self):
        path = os.path.join(self.dir, "out.json")
        cli.check_output_file(path, "--out")
        self.assert_nothing_left()

    def test_an_existing_file_is_left_as_it_was(self):
        path = os.path.join(self.dir, "out.json")
        with open(path, "w") as f:
            f.write("kept")
        cli.check_output_file(path, "--out")
        with open(path) as f:
            self.assertEqual(f.read(), "kept")
        self.assert_nothing_left("out.json")

    def test_unwritable_places_are_refused_as_root_too(self):
        for path in ("/proc/x.json", "/proc/self/x.json", "/sys/x.json", "/sys/kernel/x.json"):
            if not os.path.isdir(os.path.dirname(path)):
                continue
            with self.subTest(path=path):
                with self.assertRaisesRegex(InputError, rf"^--out {path}: cannot write: "):
                    cli.check_output_file(path, "--out")
                self.assertFalse(os.path.exists(path))

    def test_an_unwritable_folder_is_refused_and_none_is_left(self):
        for path in ("/sys/kernel", "/proc/self"):
            if not os.path.isdir(path):
                continue
            with self.subTest(path=path):
                with self.assertRaisesRegex(InputError, rf"^--out-dir {path}: not writable: "):
                    cli.output_dir(path)
        made = os.path.join(self.dir, "a", "b")
        self.assertEqual(cli.output_dir(made), made)
        self.assertEqual(os.listdir(made), [])
        shutil.rmtree(os.path.join(self.dir, "a"))

    def test_each_tool_refuses_before_its_work(self):
        for name, args in (("merge_processes", ["/proc/x.json", A, A]),
                           ("report", ["--out", "/proc/x", A, B]),
                           ("report", ["--out", "/sys/kernel/x", A, B]),
                           ("plot", ["--out-dir", "/sys/kernel", A])):
            with self.subTest(tool=name, args=args):
                r = tool(name, *args, cwd=self.dir)
                self.assert_refused(r, r"(cannot write|not writable): ")
                self.assertEqual(r.stdout, "")  # refused before any work was printed
                self.assert_nothing_left()



def variant(folder, name, change, source=os.path.join(DATA, "one-process-a.json")):
    """A copy of a committed result file, changed by change(document), written as folder/name."""
    import copy
    import json
    with open(source) as f:
        doc = json.load(f)
    doc = copy.deepcopy(doc)
    change(doc)
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


class ValuesNoRunHas(InFolder):
    """A file whose figures no run can have, or whose rows every tool would misread, is refused
    by every tool in one line (results.read checks it once for all)."""

    def first(self, **fields):
        return lambda doc: doc["benchmarks"][0].update(fields)

    def check(self, name, change, pattern):
        bad = variant(self.dir, name, change)
        b = os.path.join(DATA, "one-process-b.json")
        for command in (["compare", bad, b], ["merge_processes", os.path.join(self.dir, "m.json"), bad, b],
                        ["history", "add", "--db", os.path.join(self.dir, "h.sqlite"), bad],
                        ["where_the_time_went", bad]):
            with self.subTest(tool=command[0]):
                self.assert_refused(tool(*command), pattern)
                self.assert_nothing_left(*[f for f in os.listdir(self.dir) if f.endswith(".json")
                                           and f != "m.json"])

    def test_a_time_of_1e308(self):
        # 309-digit cells and infinite cycles before
        self.check("big.json", self.first(real_time=1e308), r"real_time is 1e\+308 us, over 11\.6 days")

    def test_every_row_twice(self):
        # compare said exit 0; merge counted 8 samples for 4 processes
        self.check("twice.json", lambda doc: doc["benchmarks"].extend([dict(r) for r in doc["benchmarks"]]),
                   r"allreduce/bf16/8/outofplace/manual_time: repetition 0 is in the file twice")

    def test_a_bar_or_a_line_break_in_a_name(self):
        for mark, label in (("|", "bar"), ("\n", "newline"), ("\t", "tab")):
            with self.subTest(mark=label):
                name = f"gemm/bf16{mark}x/1024/manual_time"
                self.check(f"{label}.json", self.first(name=name, run_name=name),
                           r"benchmark row 1: its name .* holds '\|' or a control character")

    def test_a_spread_that_is_not_a_number(self):
        self.check("nan.json", self.first(sample_cv=float("nan")),
                   r"allreduce/bf16/8/outofplace/manual_time: sample_cv is nan, not a finite share")

    def test_a_negative_clock(self):
        self.check("clock.json", self.first(sm_clock_MHz=-1980.0),
                   r"allreduce/bf16/8/outofplace/manual_time: sm_clock_MHz is -1980.0, not a clock above 0 MHz")


class AnotherProjectsFile(InFolder):
    def test_where_the_time_went_says_it_is_not_cubench_s(self):
        def foreign(doc):
            doc["context"] = {"date": "2026-01-01T00:00:00+00:00", "executable": "./bm_strings"}
            doc["benchmarks"] = [{"name": "BM_StringCopy/8", "run_name": "BM_StringCopy/8", "run_type": "iteration",
                                  "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 1000,
                                  "real_time": 12.5, "cpu_time": 12.4, "time_unit": "ns"}]
        path = variant(self.dir, "strings.json", foreign)
        r = tool("where_the_time_went", path)
        self.assert_refused(r, r"strings.json: a Google Benchmark file, but not cubench's \(no cubench_schema, "
                               r"no row with cubench's samples, sample_cv or a part of its time, executable \"./bm_strings\"\)")
        self.assertNotIn("older", r.stderr)
        # an older cubench's file (no schema, its rows' counters) is still read
        self.assertEqual(tool("where_the_time_went", os.path.join(DATA, "older-cubench.json")).returncode, 0)


class PlotAsAnotherUser(InFolder):
    @unittest.skipUnless(os.getuid() == 0, "needs to become another user (nobody)")
    def test_no_matplotlib_warning_where_the_home_is_not_writable(self):
        os.chmod(self.dir, 0o777)
        def nobody():
            os.setgid(65534)
            os.setuid(65534)
        env = dict(os.environ, HOME="/root")  # a home nobody cannot write: matplotlib's folder
        env.pop("MPLCONFIGDIR", None)
        env.pop("XDG_CONFIG_HOME", None)
        r = subprocess.run([sys.executable, os.path.join(TOOLS, "plot.py"), "--out-dir",
                            os.path.join(self.dir, "charts"), A], capture_output=True, text=True,
                           cwd=self.dir, env=env, preexec_fn=nobody)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("Matplotlib", r.stderr)
        self.assertTrue(r.stderr == "" or r.stderr.startswith("tools/plot: "), r.stderr)
        self.assertTrue(os.listdir(os.path.join(self.dir, "charts")))

if __name__ == "__main__":
    unittest.main()
