"""ctest: tools/cubench_tools' command modules (the package's COMMANDS, each a tool's main()) import
only modules that are not commands, so that a change to one tool never changes another under it;
what they share lives in a module of its concern. Read from the source with ast, nothing imported:
a module imported inside a function counts as much as one at the top."""
import ast
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "tools")
PACKAGE = os.path.join(TOOLS, "cubench_tools")
sys.path.insert(0, TOOLS)
from cubench_tools import COMMANDS  # noqa: E402


def modules():
    """{module name: its parsed source} of every module of the package."""
    out = {}
    for name in sorted(os.listdir(PACKAGE)):
        if name.endswith(".py") and name != "__init__.py":
            with open(os.path.join(PACKAGE, name)) as f:
                out[name[:-3]] = ast.parse(f.read(), name)
    return out


def package_imports(tree, relative_only=True):
    """The package's modules a module imports: `from . import a`, `from .a import x`, and (outside
    the package, as tools/'s commands do) `from cubench_tools import a`, `import cubench_tools.a`."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 or (not relative_only and node.module and
                                   node.module.split(".")[0] == "cubench_tools"):
                inside = node.module.split(".")[1:] if node.level == 0 else \
                    (node.module.split(".") if node.module else [])
                if inside:
                    found.add(inside[0])
                else:
                    found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import) and not relative_only:
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "cubench_tools" and len(parts) > 1:
                    found.add(parts[1])
    return found


class CommandsImportNoCommand(unittest.TestCase):
    def test_every_command_is_a_module_of_the_package(self):
        self.assertEqual(sorted(set(COMMANDS) - set(modules())), [])

    def test_a_command_imports_no_other_command(self):
        for name, tree in modules().items():
            with self.subTest(module=name):
                commands = sorted((package_imports(tree) & set(COMMANDS)) - {name})
                self.assertEqual(commands, [], f"{name} imports command module(s) {commands}; move "
                                 "what they share into a module of its concern")

    def test_a_shared_module_imports_no_command(self):
        # A shared module that imported a command would hand that command to every command importing it.
        for name, tree in modules().items():
            if name not in COMMANDS:
                with self.subTest(module=name):
                    self.assertEqual(sorted(package_imports(tree) & set(COMMANDS)), [])

    def test_each_thin_command_in_tools_runs_one_command_module(self):
        # tools/<tool>.py runs one command's main(): the list in the package's __init__ is the one
        # the tools run, neither more nor less.
        run = {}
        for name in sorted(os.listdir(TOOLS)):
            if name.endswith(".py"):
                with open(os.path.join(TOOLS, name)) as f:
                    tree = ast.parse(f.read(), name)
                run[name] = sorted(package_imports(tree, relative_only=False) - {"cli"})
        for name, imported in run.items():
            with self.subTest(command=name):
                self.assertEqual(len(imported), 1, f"tools/{name} runs {imported}")
                self.assertIn(imported[0], COMMANDS)
        self.assertEqual(sorted(m for imported in run.values() for m in imported), sorted(COMMANDS))


if __name__ == "__main__":
    unittest.main(verbosity=2)
