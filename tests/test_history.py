"""ctest: tools/history on result files made here from a committed one (tests/data/cuda-13.0.json):
a series of runs with a step planted where a library changes, A/A noise around it, and the
change points found, explained and gated on; adding twice, a file cut mid-write, the schema's
version and upgrade, two writers at once, bad input (one line, exit 2), and version-3 files
(tests/data/v3): each row's status, reason, family and kernels from its "cubench" object."""
import copy
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "tools")
sys.path.insert(0, TOOLS)
from cubench_tools import change_points  # noqa: E402
from cubench_tools import history_store  # noqa: E402

with open(os.path.join(HERE, "data", "cuda-13.0.json")) as f:
    TEMPLATE = json.load(f)
ROW = "gemm/bf16/4096/4096/4096/manual_time"


def history(*args):
    return subprocess.run([sys.executable, os.path.join(TOOLS, "history.py"), *args],
                          capture_output=True, text=True)


def assert_one_line_error(test, r, pattern):
    test.assertEqual(r.returncode, 2, r.stdout + r.stderr)
    test.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
    test.assertRegex(r.stderr, pattern)


def run_file(folder, index, scale, cublas="13.1.0", noise=0.004, seed=0):
    """A result file: the template's rows at `scale` x their times (each with its own noise), its
    context naming the run's date, cuBLAS and revision."""
    data = copy.deepcopy(TEMPLATE)
    rng = random.Random(seed * 1000 + index)
    data["context"].update(date=f"2026-11-{index + 1:02d}T10:00:00+00:00", cublas=cublas,
                           git_revision=f"rev{index:02d}")
    for row in data["benchmarks"]:
        if "real_time" in row:
            row["real_time"] *= scale * (1 + rng.gauss(0, noise))
    path = os.path.join(folder, f"run-{index:02d}.json")
    with open(path, "w") as f:
        json.dump(data, f)
    return path


class Folder(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.db = os.path.join(self.dir, "history.sqlite")

    def tearDown(self):
        self.tmp.cleanup()


class AddAndShow(Folder):
    def test_every_row_goes_in_once(self):
        path = run_file(self.dir, 0, 1.0)
        r = history("add", "--db", self.db, path)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = sum(1 for b in TEMPLATE["benchmarks"] if b.get("run_type", "iteration") == "iteration")
        names = {b["name"] for b in TEMPLATE["benchmarks"] if b.get("run_type", "iteration") == "iteration"}
        self.assertIn(f"{len(names)} rows added", r.stdout)
        again = history("add", "--db", self.db, path)
        self.assertIn("already in the history", again.stdout)
        db = sqlite3.connect(self.db)
        self.assertEqual(db.execute("SELECT COUNT(*) FROM runs").fetchone()[0], 1)
        self.assertEqual(db.execute("SELECT COUNT(*) FROM rows").fetchone()[0], len(names))
        self.assertLessEqual(len(names), rows)
        fields = json.loads(db.execute("SELECT fields FROM runs").fetchone()[0])
        self.assertEqual(fields["cublas"], "13.1.0")
        self.assertEqual(fields["gpu"], TEMPLATE["context"]["gpu"])

    def test_a_file_cut_mid_write_adds_its_complete_rows_and_says_so(self):
        path = run_file(self.dir, 0, 1.0)
        with open(path) as f:
            text = f.read()
        cut = os.path.join(self.dir, "cut.json")
        with open(cut, "w") as f:
            f.write(text[: text.index(ROW) + 10])  # inside the bf16 4096 row
        r = history("add", "--db", self.db, cut)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("cut mid-write", r.stdout)
        db = sqlite3.connect(self.db)
        self.assertEqual(db.execute("SELECT complete FROM runs").fetchone()[0], 0)
        self.assertEqual(db.execute("SELECT COUNT(*) FROM rows WHERE name = ?", (ROW,)).fetchone()[0], 0)

    def test_show_lists_each_run_and_writes_a_chart_per_family(self):
        for i in range(4):
            history("add", "--db", self.db, run_file(self.dir, i, 1.0))
        out = os.path.join(self.dir, "charts")
        r = history("show", "--db", self.db, "--filter", "^gemm/bf16/4096/", "--out-dir", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"### {ROW}", r.stdout)
        self.assertEqual(r.stdout.count("| rev0"), 4)
        # The template predates the schema: its family is the name less its numbers (the tools'
        # rule for such files), so the chart is gemm/bf16's.
        self.assertTrue(os.path.exists(os.path.join(out, "gemm_bf16.png")), os.listdir(out))


class VersionThree(Folder):
    """Version-3 files (tests/data/v3): each row goes in with its status, reason, family and
    kernels from its "cubench" object, not from its name or label."""

    def test_rows_go_in_with_their_cubench_object(self):
        for name in ("run-a.json", "run-b.json"):
            r = history("add", "--db", self.db, os.path.join(HERE, "data", "v3", name))
            self.assertEqual(r.returncode, 0, r.stderr)
        db = sqlite3.connect(self.db)

        def row(path, name, *columns):
            return db.execute(f"SELECT {', '.join(columns)} FROM rows JOIN runs ON rows.run = runs.id "
                              "WHERE runs.path LIKE ? AND name = ?", ("%" + path, name)).fetchone()
        self.assertEqual(row("run-b.json", "gemm/bf16/16384/16384/16384/manual_time", "status", "reason"),
                         ("not_run", "needs 3.0 GiB of device memory; 1.2 GiB free of 80.0 GiB"))
        self.assertEqual(row("run-a.json", "svd/gesvd/fp32/1024/manual_time", "status"), ("wrong_result",))
        splitk = "gemm/bf16/2048/2048/2048/splitk/manual_time"
        self.assertEqual(row("run-b.json", splitk, "status", "family", "kernels"),
                         ("measured", "gemm", "kernel: splitk_gemm_kernel"))  # not its label's decoy
        self.assertEqual(row("run-a.json", "gemm/fp8/4096/4096/4096/manual_time", "family"), ("gemm_autotune",))
        series = history_store.series(history_store.connect(self.db, create=False))
        self.assertEqual([p["path"][-10:] for p in series["gemm/bf16/16384/16384/16384/manual_time"]],
                         ["run-a.json"])  # a series holds the runs that measured the row


class ChangePointsFound(Folder):
    """Twelve runs, a 10% step planted at run 7 with cuBLAS's version; and A/A noise alone."""

    def _series(self, step_at=None):
        for i in range(12):
            later = step_at is not None and i >= step_at
            path = run_file(self.dir, i, 1.10 if later else 1.0,
                            cublas="13.2.0" if later else "13.1.0", noise=0.01, seed=1)
            r = history("add", "--db", self.db, path)
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_the_planted_step_is_found_and_explained(self):
        self._series(step_at=6)
        r = history("show", "--db", self.db, "--filter", "^gemm/bf16/4096/")
        self.assertEqual(r.returncode, 0, r.stderr)
        change = [line for line in r.stdout.splitlines() if "x slower:" in line]
        self.assertEqual(len(change), 1, r.stdout)
        self.assertTrue(change[0].startswith("| 7 |"), change[0])
        self.assertIn("cuBLAS 13.1.0 -> 13.2.0", change[0])

    def test_a_a_noise_has_no_change_point(self):
        self._series(step_at=None)
        r = history("show", "--db", self.db)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"; 0 change points")

    def test_the_fit_alone(self):
        steady = [{"median_us": 100 * (1 + 0.01 * ((-1) ** k))} for k in range(10)]
        self.assertEqual(change_points.find(steady), [])
        stepped = steady[:5] + [{"median_us": p["median_us"] * 0.8} for p in steady[5:]]
        (found,) = change_points.find(stepped)
        self.assertEqual(found[0], 5)
        self.assertAlmostEqual(found[1], 0.8, places=2)
        outlier = steady[:5] + [{"median_us": 140}] + steady[6:]
        self.assertEqual(change_points.find(outlier), [])
        self.assertEqual(change_points.find([{"median_us": 90}] + steady[1:]), [])  # the oldest alone
        # A 2x step with one run caught midway: found, from the first run at the new level.
        midway = [{"median_us": 100}] * 5 + [{"median_us": 130}] + [{"median_us": 200}] * 5
        (found,) = change_points.find(midway)
        self.assertEqual(found[0], 6)
        self.assertAlmostEqual(found[1], 2.0, places=2)


class Regressions(Folder):
    def test_a_ci_gate(self):
        for i in range(10):
            later = i >= 5
            history("add", "--db", self.db, run_file(self.dir, i, 1.2 if later else 1.0,
                                                      cublas="13.2.0" if later else "13.1.0",
                                                      noise=0.005, seed=2))
        slower = history("regressions", "--db", self.db, "--since", "2026-11-04",
                         "--filter", "^gemm/")
        self.assertEqual(slower.returncode, 1, slower.stderr)
        # the newest run against the last one before --since, by compare's rule
        self.assertIn("1.2x slower in run 10", slower.stdout)
        self.assertIn("than in run 3", slower.stdout)  # run 4 is dated 2026-11-04
        self.assertIn("cuBLAS 13.1.0 -> 13.2.0", slower.stdout)
        by_revision = history("regressions", "--db", self.db, "--since", "rev05", "--filter", "^gemm/")
        self.assertEqual(by_revision.returncode, 1, by_revision.stdout)
        after = history("regressions", "--db", self.db, "--since", "2026-11-08", "--filter", "^gemm/")
        self.assertEqual(after.returncode, 0, after.stdout)
        self.assertIn("0 row(s) slower", after.stdout)


class Store(Folder):
    def test_an_older_schema_is_upgraded_in_place(self):
        db = sqlite3.connect(self.db, isolation_level=None)
        history_store.upgrade(db, 0)  # as a version-0 file would become...
        db.execute("DROP INDEX rows_by_name")  # ...and back to version 1, by hand
        db.close()
        old = sqlite3.connect(self.db)
        old.execute("CREATE TABLE rows_v1 AS SELECT run, name, status, reason, median_us, samples, "
                    "spread, counters, label FROM rows")
        old.execute("DROP TABLE rows")
        old.execute("ALTER TABLE rows_v1 RENAME TO rows")
        old.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        old.commit()
        old.close()
        r = history("add", "--db", self.db, run_file(self.dir, 0, 1.0))
        self.assertEqual(r.returncode, 0, r.stderr)
        db = sqlite3.connect(self.db)
        self.assertEqual(db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0],
                         str(history_store.SCHEMA_VERSION))
        self.assertIsNotNone(db.execute("SELECT sm_clock_MHz FROM rows LIMIT 1").fetchone())

    def test_two_writers_at_once_both_land(self):
        paths = [run_file(self.dir, i, 1.0) for i in range(6)]
        procs = [subprocess.Popen([sys.executable, os.path.join(TOOLS, "history.py"), "add",
                                   "--db", self.db, *paths[k::2]],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for k in range(2)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
        db = sqlite3.connect(self.db)
        self.assertEqual(db.execute("SELECT COUNT(*) FROM runs").fetchone()[0], 6)
        self.assertEqual(db.execute("PRAGMA journal_mode").fetchone()[0], "wal")

    def test_a_refused_file_adds_nothing_and_leaves_no_new_history(self):
        good = run_file(self.dir, 0, 1.0)
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            f.write("not json")
        # every file is checked before the history is opened: none is added, none is made
        assert_one_line_error(self, history("add", "--db", self.db, good, bad), "bad.json: not JSON")
        self.assertFalse(os.path.exists(self.db))
        self.assertEqual(sorted(os.listdir(self.dir)), ["bad.json", "run-00.json"])
        # an existing history keeps what it held
        history("add", "--db", self.db, good)
        assert_one_line_error(self, history("add", "--db", self.db, run_file(self.dir, 1, 1.0), bad), "bad.json")
        self.assertEqual(sqlite3.connect(self.db).execute("SELECT COUNT(*) FROM runs").fetchone()[0], 1)


def as_nobody():
    """Drops to user nobody in a child (the tests run as root in CI, and root reads and writes
    any file whatever its mode)."""
    if os.getuid() == 0:
        os.setgid(65534)
        os.setuid(65534)


def history_as_nobody(*args):
    return subprocess.run([sys.executable, os.path.join(TOOLS, "history.py"), *args],
                          capture_output=True, text=True, preexec_fn=as_nobody)


class BadInput(Folder):
    def test_a_run_without_a_valid_date_is_refused(self):
        for date in (None, "", "yesterday", "2026-13-45T10:00:00", 2026.5):
            with self.subTest(date=date):
                path = run_file(self.dir, 0, 1.0)
                with open(path) as f:
                    data = json.load(f)
                if date is None:
                    del data["context"]["date"]
                else:
                    data["context"]["date"] = date
                with open(path, "w") as f:
                    json.dump(data, f)
                r = history("add", "--db", self.db, path)
                assert_one_line_error(self, r, r"run-00.json: (no run date|context \"date\" .* is not a date)")
                self.assertFalse(os.path.exists(self.db))

    def test_a_database_it_cannot_read_or_write(self):
        history("add", "--db", self.db, run_file(self.dir, 0, 1.0))
        os.chmod(self.dir, 0o755)
        os.chmod(self.db, 0o444)  # others may read it, no one may write it
        r = history_as_nobody("add", "--db", self.db, run_file(self.dir, 1, 1.0))
        assert_one_line_error(self, r, r"history.sqlite: cannot write (it|in its directory)")
        self.assertNotIn("internal error", r.stderr)
        os.chmod(self.db, 0o600 if os.getuid() == 0 else 0o000)  # root's alone (nobody reads it as nobody)
        r = history_as_nobody("show", "--db", self.db)
        assert_one_line_error(self, r, r"history.sqlite: cannot read it: Permission denied")
        self.assertNotIn("SQLite database", r.stderr)


    def test_each_is_one_line_and_exit_2(self):
        foreign = os.path.join(self.dir, "foreign.sqlite")
        sqlite3.connect(foreign).execute("CREATE TABLE t (x)")
        assert_one_line_error(self, history("show", "--db", foreign), "not a cubench history")
        junk = os.path.join(self.dir, "junk.sqlite")
        with open(junk, "w") as f:
            f.write("x" * 4096)
        assert_one_line_error(self, history("add", "--db", junk, run_file(self.dir, 0, 1.0)),
                              "not (an|a usable) SQLite database")
        newer = os.path.join(self.dir, "newer.sqlite")
        db = sqlite3.connect(newer, isolation_level=None)
        history_store.upgrade(db, 0)
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
        db.close()
        assert_one_line_error(self, history("show", "--db", newer), "newer cubench")
        assert_one_line_error(self, history("show", "--db", os.path.join(self.dir, "none.sqlite")),
                              "no such history")
        empty = os.path.join(self.dir, "empty.sqlite")
        open(empty, "w").close()
        assert_one_line_error(self, history("show", "--db", empty), "empty, not a cubench history")
        self.assertEqual(os.path.getsize(empty), 0)  # a reader writes nothing
        assert_one_line_error(self, history("add", "--db", self.db, os.path.join(self.dir, "x.json")),
                              "x.json")
        history("add", "--db", self.db, run_file(self.dir, 0, 1.0))
        assert_one_line_error(self, history("regressions", "--db", self.db, "--since", "2030-01-01"),
                              "no run of the history")
        assert_one_line_error(self, history("show", "--db", self.db, "--filter", "("), "not a valid regex")
        assert_one_line_error(self, history("show", "--db", self.db, "--min-effect", "2"), "--min-effect")
        assert_one_line_error(self, history("frobnicate"), "invalid choice")


if __name__ == "__main__":
    unittest.main()
