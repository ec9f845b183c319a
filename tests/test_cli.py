"""ctest tools.cli.*: the exit path every tool shares (cli.run).

Exit status convention, every tool: 0 done; 2 a bad flag, input file or output path, with exactly
one line on stderr; 1 the work failed or an internal error, one line too."""
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))


class ExitPath(unittest.TestCase):
    """tools/cli.py's run(): the one way out of every tool."""

    def outcome(self, exception):
        from cubench_tools import cli

        def main(argv):
            raise exception
        err = io.StringIO()
        stderr, sys.stderr = sys.stderr, err
        try:
            return cli.run("tools/x", main, []), err.getvalue()
        finally:
            sys.stderr = stderr

    def test_a_bug_is_one_line_named_as_ours_with_status_1(self):
        code, err = self.outcome(ZeroDivisionError("float division by zero"))
        self.assertEqual(code, 1)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertRegex(err, r"^tools/x: internal error \(ZeroDivisionError: float division by zero\); this is a bug")

    def test_bad_input_and_os_errors_are_one_line_with_status_2(self):
        from cubench_tools import input_error
        for exception, line in ((input_error.InputError("a.json: not JSON\nsecond line"), "tools/x: a.json: not JSON / second line"),
                                (PermissionError(13, "Permission denied", "out.json"), "tools/x: out.json: Permission denied")):
            with self.subTest(exception=exception):
                self.assertEqual(self.outcome(exception), (2, line + "\n"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
