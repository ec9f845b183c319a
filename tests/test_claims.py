"""ctest: docs/results/h200/articles-claims-table.py, the seed articles' toolkit claims beside
cubench's rows, on the report's fixtures (tests/data/report: three builds of one source, four
processes each; 11.8 built without NCCL and with fp8 GEMMs not run). The committed claims: each
named, on a row of its own, with its rows; "holds here?" read from compare's verdicts on claims
made up for the purpose: yes, no, partly, not comparable (too noisy, no direction, nothing
measured), on the time and on a memory counter; a row a file lacks said as not built, not run or
missing; bad input one line on stderr and exit status 2.

Run one class as ctest does: tools/pyrun ../tests/test_claims.py <class>."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DATA = os.path.join(HERE, "data")
FIXTURES = os.path.join(DATA, "report")
RESULTS = os.path.join(ROOT, "docs", "results", "h200")
SCRIPT = os.path.join(RESULTS, "articles-claims-table.py")
CLAIMS = os.path.join(RESULTS, "articles-claims.json")
SEEDS = ("000_371fba890950c20d.txt", "001_5a16c919f99525fd.txt", "002_c076df02f1d4ed76.txt",
         "003_e4ac1beec2a3f3c1.txt")
TOOLKITS = ("11.8", "12.4", "13.0")
VERDICT_WORDS = ("faster", "slower", "same", "too noisy to tell")


def labelled(paths=None):
    paths = paths or {t: os.path.join(FIXTURES, f"cuda-{t}.json") for t in TOOLKITS}
    return [f"{t}={paths[t]}" for t in TOOLKITS]


def run_table(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def claim(claim_id, claimed, rows, step=("11.8", "12.4")):
    """A made-up claim on fixture rows: rows are names, or (name, measure)."""
    return {"id": claim_id, "article": "made-up.txt", "claim": f"the claim {claim_id}",
            "claimed": claimed, "step": list(step),
            "rows": [{"name": r} if isinstance(r, str) else {"name": r[0], "measure": r[1]} for r in rows]}


def documented_names():
    """docs/benchmarks.md's name forms as regexes: `svd/<gesvd\\|gesvdj>/<n>` takes gesvd or gesvdj,
    then any value; `torch/gemm\\|svd/...` either operation, then anything."""
    with open(os.path.join(ROOT, "docs", "benchmarks.md"), encoding="utf-8") as f:
        forms = re.findall(r"^\| `([a-z_0-9]+/[^`]*)`", f.read(), re.M)

    def segment(s):
        if s == "...":
            return ".+"
        if s.startswith("<") and "|" not in s:
            return "[^/]+"
        return "(" + "|".join(re.escape(a) for a in s.strip("<>").split("|")) + ")"
    return [re.compile("/".join(segment(s) for s in form.replace("\\|", "|").split("/"))) for form in forms]


def table_lines(stdout):
    """{claim id: its table line's cells}."""
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"^\| \*\*([^*]+)\*\* \|", line)
        if m:
            out[m.group(1)] = [c.strip() for c in line.strip().strip("|").split(" | ")]
    return out


class TableOf(unittest.TestCase):
    """Runs the table over claims (the committed ones, or made-up ones written to a folder)."""

    def table(self, claims=None):
        with tempfile.TemporaryDirectory() as d:
            path = CLAIMS
            if claims is not None:
                path = os.path.join(d, "claims.json")
                with open(path, "w") as f:
                    json.dump(claims, f)
            r = run_table("--claims", path, *labelled())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        return r.stdout

    def holds(self, cells):
        return cells[-1]


class CommittedClaims(TableOf):
    @classmethod
    def setUpClass(cls):
        with open(CLAIMS, encoding="utf-8") as f:
            cls.claims = json.load(f)

    def test_the_claims_cite_the_four_articles_and_name_the_rows_cubench_has(self):
        names = documented_names()
        self.assertEqual({c["article"] for c in self.claims}, set(SEEDS))
        for c in self.claims:
            with self.subTest(claim=c["id"]):
                self.assertIn(c["operation"], ("gemm", "svd", "sigmoid", "startup", "memory"))
                # a number, or a word on why there is none
                self.assertTrue(c["figures"] or c["vague"], c)
                for row in c["rows"]:
                    self.assertTrue(any(n.fullmatch(row["name"]) for n in names), row["name"])

    def test_each_claim_has_its_line_with_its_rows(self):
        out = self.table()
        lines = table_lines(out)
        self.assertEqual(list(lines), [c["id"] for c in self.claims])
        for c in self.claims:
            with self.subTest(claim=c["id"]):
                cells = lines[c["id"]]
                self.assertIn(c["claim"], cells[2])
                self.assertIn(c["article"], cells[1])
                for row in c["rows"]:
                    self.assertIn(f"`{row['name']}`", cells[3])
                self.assertRegex(self.holds(cells), r"^\*\*(yes|partly|no|not comparable)\*\*: ")
        self.assertIn("| claim | article (versions; GPU) | the article says | cubench row (measure) | "
                      "11.8 median | 12.4 median | 13.0 median |", out)

    def test_verdict_words_and_medians_where_the_fixtures_have_the_row(self):
        cells = table_lines(self.table())["003-svd-2048"]
        gesvd = cells[3].split("<br>").index("`svd/gesvd/fp32/2048`")
        self.assertEqual([cells[i].split("<br>")[gesvd] for i in range(4, 9)],
                         ["1.011 s", "1.012 s", "305.8 ms", "1.00x, same", "0.302x, faster"])
        # the article says faster at the step 11.8 -> 12.4, where the one row measured says same
        self.assertEqual(self.holds(cells), "**no**: same in 1 of 1 row measured at 11.8 → 12.4, none "
                                            "faster; 3 rows not measured in both (3 missing)")

    def test_rows_no_file_has_are_said_missing(self):
        cells = table_lines(self.table())["002-transformer-peak-memory"]
        for column in cells[4:7]:
            self.assertEqual(column, "missing<br>missing<br>missing")
        self.assertEqual(self.holds(cells), "**not comparable**: no row measured in both 11.8 and 12.4 (3 missing)")

    def test_the_notes_say_the_rule_the_files_and_each_claims_method(self):
        out = self.table()
        self.assertIn("Verdicts: tools/compare's rule on each row's samples (U test p < 0.05 and a median "
                      "change of at least 2%", out)
        self.assertIn(f"12.4 {os.path.join(FIXTURES, 'cuda-12.4.json')} (NVIDIA H200, 4 processes, "
                      "one sample each)", out)
        for c in self.claims:
            self.assertIn(f"- **{c['id']}** (", out)


class HoldsHere(TableOf):
    """'holds here?' read from the verdicts of the claim's step."""

    def answers(self, *claims):
        lines = table_lines(self.table(list(claims)))
        return {i: self.holds(cells) for i, cells in lines.items()}

    def test_yes_where_every_row_agrees(self):
        # start-up: 12.4 2.2-2.4x faster than 11.8 in the fixtures
        answers = self.answers(claim("startup", "faster", ["startup/cuda/first_kernel/default",
                                                            "startup/cuda/cublas_handle/default"]))
        self.assertEqual(answers["startup"], "**yes**: faster in 2 of 2 rows measured at 11.8 → 12.4")

    def test_no_where_the_article_says_faster_and_the_step_says_same_or_slower(self):
        answers = self.answers(
            claim("same", "faster", ["svd/gesvd/fp32/1024", "svd/gesvd/fp32/2048"]),
            claim("slower", "faster", ["gemm/bf16/4096/4096/4096"]))  # 12.4 slower, power-capped
        self.assertEqual(answers["same"], "**no**: same in 2 of 2 rows measured at 11.8 → 12.4, none faster")
        self.assertEqual(answers["slower"], "**no**: slower in 1 of 1 row measured at 11.8 → 12.4, none faster")

    def test_partly_and_the_step_the_claim_names(self):
        answers = self.answers(claim("partly", "faster", ["gemm/bf16/4096/4096/4096", "svd/gesvdj/fp32/1024"],
                                     step=("11.8", "13.0")))
        self.assertEqual(answers["partly"], "**partly**: faster in 1 of 2 rows measured at 11.8 → 13.0, same in 1")

    def test_not_comparable(self):
        answers = self.answers(
            claim("noisy", "faster", ["sigmoid/vectorized/fp32/10000000/cold"]),  # 12.4's spread
            claim("vague", None, ["svd/gesvdj/fp32/1024"]))
        self.assertEqual(answers["noisy"], "**not comparable**: too noisy to tell in 1 of 1 row measured at "
                                           "11.8 → 12.4")
        self.assertEqual(answers["vague"], "**not comparable**: the article names no direction of change")

    def test_a_memory_counter_reads_less_and_more(self):
        out = self.table([claim("memory", "less", [("svd/gesvd/fp32/2048", "peak_mem_bytes")], step=("12.4", "13.0"))])
        cells = table_lines(out)["memory"]
        self.assertEqual(cells[4:9], ["288 MiB", "288 MiB", "256 MiB", "1.00x, same", "0.889x, less"])
        self.assertEqual(self.holds(cells), "**yes**: less in 1 of 1 row measured at 12.4 → 13.0")

    def test_the_verdict_words_are_compares(self):
        out = self.table([claim("all", "faster", ["startup/cuda/first_kernel/default", "gemm/bf16/4096/4096/4096",
                                                  "svd/gesvd/fp32/512", "sigmoid/vectorized/fp32/10000000/cold"])])
        steps = table_lines(out)["all"][7].split("<br>")
        self.assertEqual([s.split(", ", 1)[1] for s in steps], ["faster", "slower", "same", "too noisy to tell"])
        self.assertEqual(sorted(set(VERDICT_WORDS)), sorted({s.split(", ", 1)[1] for s in steps}))


class RowsAFileLacks(TableOf):
    def test_not_built_not_run_and_missing_are_said(self):
        out = self.table([claim("absent", "faster", ["gemm/fp8/4096/4096/4096", "allreduce/fp32/1048576/outofplace",
                                                     "gemm/fp32/4096/4096/4096"])])
        cells = table_lines(out)["absent"]
        self.assertEqual(cells[4].split("<br>"), ["not run (fp8 needs CUDA 12.1 or later)",
                                                  "not built (no NCCL for CUDA 11.8)", "missing"])
        self.assertEqual(cells[5].split("<br>"), ["missing", "25.15 us", "missing"])
        # no step from a row a side lacks; 12.4 -> 13.0 has allreduce on both sides
        self.assertEqual(cells[7].split("<br>"), ["—", "—", "—"])
        self.assertEqual(cells[8].split("<br>"), ["—", "0.992x, same", "—"])
        self.assertEqual(self.holds(cells), "**not comparable**: no row measured in both 11.8 and 12.4 "
                                            "(missing, not built, not run)")

    def test_a_row_without_the_counter_says_so(self):
        cells = table_lines(self.table([claim("counter", "less", [("svd/gesvd/fp32/512", "peak_allocated_bytes")])]))
        self.assertEqual(cells["counter"][4], "no peak_allocated_bytes")

    def test_rows_left_out_of_a_yes_are_counted(self):
        some = claim("some", "faster", ["startup/cuda/first_kernel/default", "nothing/here"])
        cells = table_lines(self.table([some]))
        self.assertEqual(self.holds(cells["some"]), "**yes**: faster in 1 of 1 row measured at 11.8 → 12.4; "
                                                    "1 row not measured in both (missing)")


class BadInput(unittest.TestCase):
    """One line on stderr, naming the fault, and exit status 2."""

    def check(self, args, pattern):
        r = run_table(*args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "")
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertRegex(lines[0], "^docs/results/h200/articles-claims-table.py: " + pattern)

    def claims_file(self, d, content):
        path = os.path.join(d, "claims.json")
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def test_result_files(self):
        fixtures = {t: os.path.join(FIXTURES, f"cuda-{t}.json") for t in TOOLKITS}
        cases = (
            (labelled(dict(fixtures, **{"12.4": "no-such.json"})),
             "no-such.json: cannot read: No such file or directory$"),
            (labelled(dict(fixtures, **{"13.0": os.path.join(DATA, "not-gbench.json")})),
             ".*not-gbench.json: not Google Benchmark output"),
            (labelled(dict(fixtures, **{"11.8": os.path.join(DATA, "bad", "not-json.json")})),
             ".*not-json.json: not JSON"),
            (labelled()[:2], r"no file for 13.0: want 11.8=RESULT.json 12.4=RESULT.json 13.0=RESULT.json$"),
            (labelled()[:2] + [f"12.1={fixtures['13.0']}"], "'12.1=.*': want 11.8=RESULT.json"),
            (labelled() + [f"13.0={fixtures['13.0']}"], "two files are labelled '13.0'"),
            (labelled() + ["--alpha", "2"], "--alpha wants a significance level between 0 and 1"),
        )
        for args, pattern in cases:
            with self.subTest(args=args):
                self.check(args, pattern)

    def test_claims_files(self):
        good = claim("ok", "faster", ["svd/gesvd/fp32/512"])
        cases = (
            ("{\"id\": 1}", "claims.json: not a list of claims"),
            ("[]", "claims.json: not a list of claims"),
            ("[", "claims.json: not JSON"),
            ([3], "claims.json: claim 1 is not an object"),
            ([dict(good, claim="")], "claims.json: claim 1 has no \"claim\" text"),
            ([dict(good, claimed="better")], "claims.json: claim ok: \"claimed\" is not one of faster, less or null"),
            ([dict(good, step=["12.4", "11.8"])], "claims.json: claim ok: \"step\" is not two of 11.8, 12.4, 13.0"),
            ([dict(good, rows=[])], "claims.json: claim ok: \"rows\" is not a list"),
            ([dict(good, rows=[{"name": "svd/gesvd/fp32/512", "measure": "peak_mem_bytes"}])],
             "claims.json: claim ok: claims faster but row svd/gesvd/fp32/512 measures peak_mem_bytes$"),
            ([good, good], "claims.json: two claims have the id 'ok'$"),
        )
        for content, pattern in cases:
            with self.subTest(content=content), tempfile.TemporaryDirectory() as d:
                end = pattern.endswith("$")  # an anchor, not text to escape
                self.check(["--claims", self.claims_file(d, content), *labelled()],
                           ".*" + re.escape(pattern.rstrip("$")) + ("$" if end else ""))
        self.check(["--claims", "no-such-claims.json", *labelled()],
                   "no-such-claims.json: cannot read: No such file or directory$")


if __name__ == "__main__":
    unittest.main()
