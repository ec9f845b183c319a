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
from cubench_tools.results import InputError  # noqa: E402

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


if __name__ == "__main__":
    unittest.main()
