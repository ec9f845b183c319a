"""cubench's Python tools as one package.

The commands: one module per tool, whose main() a thin command in tools/ runs (COMMANDS below).
Every other module is one concern that the commands share:
  reading result files: results (the reader), result_schema, row_outcome, build_context,
    json_values, tool_warnings, input_error;
  judging and choosing rows: verdicts, rows;
  every tool's edges: cli;
  pages and charts: page, chart_drawing, family_charts, ratio_chart, history_charts;
  tools/report's page: report_builds, report_words, report_rows, report_conditions,
    report_side_sections, report_context;
  the history: history_store, change_points;
  merging processes' files: process_merge;
  tools/run-matrix's work: checkout, toolkits, torch_installs, matrix_builds, matrix_progress,
    stopping;
  tools/torch_reference.py's work: axes_listing, torch_cases, torch_families (one function per
    family), torch_sd15, torch_timing, torch_compile (its compiled rows);
  compiled mode: compiled_modules (the modules tools/aoti-export packages and torch_reference
    compiles).

A command imports only modules that are not commands, so that one tool can change without another
changing under it: tests/test_package_imports.py holds the package to it."""

# The command modules, each run by tools/<its name>.py (merge is tools/merge-processes's).
COMMANDS = ("aoti_export", "compare", "history", "merge", "plot", "report", "run_matrix",
            "torch_reference", "where_the_time_went")
