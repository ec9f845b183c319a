"""PNG charts from cubench result files; each file is one colour, the same in every panel and
every chart (in the order the files are given), error bars are the standard deviation over
repetitions. A size axis (gemm's n, a family's size axis) whose sizes span a factor of 10 or more
is logarithmic, its ticks the sizes themselves; any other axis whose values span more than two
decades is logarithmic. Every chart is at most as wide as tools/report's page shows it in a
1200 px window, so that its text is 10 px or more there.

  tools/plot --out-dir plots a.json [b.json ...]

Writes, for the families present, a hand-made chart where there is one: gemm.png (TFLOPS against
size per dtype, with the datasheet peak; every shape: m = n = k joined as a line against n, the
others as hollow markers, each named, against (m*n*k)^(1/3)), sigmoid.png (GB/s with the
measured copy ceiling), allreduce.png (bus bandwidth against bytes, as nccl-tests; runs on one
GPU are left out, with a line on stderr: one rank communicates nothing, so there is no bandwidth
to draw), svd.png (time against n), resnet.png and resnet-memory.png (ResNet-50 images/s, peak
allocated memory, per precision and layout, one panel per resolution/batch and eager or graph),
transformer.png (peak allocated memory against batch, one panel per mode and attention).

Every other family that the files' schema declares (cubench writes one into each result file's
context) gets a generic chart, <family with / as _>.png: its main counter (the time in us where it
has none) against its size axis, a line per file and per combination of its other axes' values
(the file's colour, the combination's marker and line style). A family without a size axis is
drawn as bars: one per file for each combination of its axes' values. A family whose rows carry
no main counter is left out with a line on stderr. Files without a schema get the hand-made
charts only, as before the schema. A file cut mid-write gives its complete rows, with a warning.

Each chart has one legend, under its title, for all its panels (a file's colour is the same in
each): no legend covers a panel's points or its labels, and the title wraps to the chart's width.
"""
import os
import sys

from . import cli
from .build_context import label_of
from .family_charts import charts_for
from .input_error import InputError
from .results import load


def file_labels(paths, contexts):
    """A legend entry per file that says what stack made it; never two alike, so two files'
    points never merge into one line."""
    labels = [f"{label_of(p, c)} [{os.path.basename(p)}]" for p, c in zip(paths, contexts)]
    return [lab if labels.count(lab) == 1 else f"{label_of(p, c)} [{p}] #{i + 1}"
            for i, (lab, p, c) in enumerate(zip(labels, paths, contexts))]


def main(argv):
    p = cli.parser("tools/plot", __doc__)
    p.add_argument("files", nargs="+", metavar="RESULT.json")
    p.add_argument("--out-dir", required=True, help="the folder for the PNGs (created if absent)")
    args = p.parse_args(argv)
    try:
        cli.quiet_matplotlib()
        import matplotlib  # noqa: F401 - checked before the work, not in the middle of it
    except ImportError:
        raise InputError("matplotlib is missing (Debian: apt-get install python3-matplotlib)")
    if os.path.exists(args.out_dir) and not os.path.isdir(args.out_dir):
        raise InputError(f"--out-dir {args.out_dir}: exists and is not a directory")
    read = [load(f) for f in args.files]
    labels = file_labels(args.files, [ctx for ctx, _ in read])
    loaded = [(label, ctx, results) for label, (ctx, results) in zip(labels, read)]
    # Each family gives the charts it would draw (a function each) and notes on what it left out;
    # the folder is made, and the notes said, only once there is a chart to write into it.
    out_dir = args.out_dir
    charts, notes = charts_for(loaded, out_dir)
    if not charts:  # one line: what was left out is part of why there is nothing
        raise InputError("nothing to plot: no gemm, sigmoid, multi-GPU allreduce, svd, "
                         "resnet50_train, transformer_fwd or other schema-declared family's "
                         "results in the files" + "".join(f" ({note})" for note in notes))
    cli.output_dir(out_dir)
    for note in notes:
        print(f"tools/plot: {note}", file=sys.stderr)
    for chart in charts:
        print(chart())
    return 0

