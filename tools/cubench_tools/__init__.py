"""cubench's Python tools as one package: what reads result files (results), what judges a change
(verdicts), what every tool does at its edges (cli), the page (page), the history's store and
change points, and one module per tool whose main() a thin command in tools/ runs. A command
imports this package, never another command."""
