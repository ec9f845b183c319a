"""Merge the result files of several processes of one build into one file, one sample per process.

  tools/merge-processes OUT.json RUN1.json RUN2.json [RUN3.json ...]

Why: repetitions inside one process share its state (the batch size Google Benchmark picked, the
allocator's layout, the library's heuristics, where the host threads landed), so they agree with
each other more closely than two processes of the same binary do. A U test over one process's
repetitions then calls that process-to-process spread a change: in A/A runs of one binary on the
H200 it flags rows up to 15% apart that way (docs/results/h200/README.md). With a process as the
unit, the test asks the question a user has: would another run of the build give this?

Each benchmark of OUT gets one iteration row per input file: that process's row at its median
time (the lower one for an even count, so its counters stay the ones measured with that time),
renumbered as repetitions 0..K-1, with every counter it carries (whatever its name: rows are
copied whole, a version-3 row's "cubench" object too). Aggregate rows are dropped: the tools
recompute them. A benchmark not timed in some process (its status: failed, or skipped as not run
or not supported) keeps that process's row; one missing from a file is an error. The context is
the first file's, its schema (`cubench_schema`) included, with `processes` (K) and each file's
`date` added; files whose schemas differ (or one with a schema, one without) are not processes of
one build: an error. A file cut mid-write (its process killed) gives its complete rows, with a
warning; a benchmark it lost is then missing from it, which is an error as above. A process
interrupted (context `interrupted`) is named in OUT's `interrupted` ("SIGINT (process 2)"),
whichever file it was, so that OUT warns as its inputs did.

Refused, in one line naming both files, status 2 and nothing written (each file is read and
checked first, so a bad file is named as bad, not as a repeat):
- a file given twice: the same path (after following links), or the same content (the same
  bytes, or the same JSON written another way). Two processes never write the same file: a
  copy would count one process twice, and the U test would take it for two that agree.
- files of different builds: where both contexts have a field that names the build or what it
  ran on (cuda_toolkit, cuda_runtime, cuda_compiler, the libraries' versions: cublas, cublaslt,
  cusolver, cudnn, cudnn_frontend, nccl, libtorch, libtorch_cuda, libtorch_cudnn; PyTorch's
  framework and torch; google_benchmark, library_build_type, git_revision, build_type,
  cuda_architectures, host_compiler, not_built; gpu, cuda_driver_api; executable), its value
  must be the same in every file: the line says which field differs and its two values (the
  executable's path as its normal form). Fields of the run (date, load, memory limit, stopping
  rule) may differ.
"""
import json
import os

from . import cli
from .input_error import InputError
from .process_merge import merge


def main(argv):
    p = cli.parser("tools/merge-processes", __doc__)
    p.add_argument("out", metavar="OUT.json", help="the merged file to write")
    p.add_argument("inputs", nargs="+", metavar="RUN.json", help="one result file per process")
    args = p.parse_args(argv)
    if os.path.realpath(args.out) in {os.path.realpath(path) for path in args.inputs}:
        raise InputError(f"{args.out} is also an input; name a new file first")
    cli.check_output_file(args.out, "OUT.json")  # before the work, not after it
    data = merge(args.inputs)
    cli.write_file(args.out, json.dumps(data, indent=1), "OUT.json")
    return 0

