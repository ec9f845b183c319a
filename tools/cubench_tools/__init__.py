"""cubench's Python tools as one package.

The commands: one module per tool, whose main() a thin command in tools/ runs (COMMANDS below).
Everything else is a module of one concern that the commands share: what reads result files
(results), what judges a change (verdicts), what every tool does at its edges (cli), the page
(page), the charts (chart_drawing, family_charts, ratio_chart, history_charts), the history's
store and change points, the merging of processes' files (process_merge), and what
torch_reference runs and how it times it (torch_families, torch_sd15, torch_timing).

A command imports only modules that are not commands, so that each tool can change without
another changing under it: tests/test_package_imports.py holds the package to it."""

# The command modules, each run by tools/<its name> (or tools/<its name with - for _>):
# merge is tools/merge-processes's.
COMMANDS = ("compare", "history", "merge", "plot", "report", "run_matrix", "torch_reference",
            "where_the_time_went")
