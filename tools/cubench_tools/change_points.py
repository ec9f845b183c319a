"""Where a row's time moved for good across the runs of a history, and what differed there.

The fit is asv's kind: a step function over the runs in date order, chosen by optimal
partitioning (every placement of steps weighed exactly, O(n^2)) to minimise the squared error of
log time plus a penalty per step. The penalty comes from the series' own run-to-run noise: sigma
is the spread of consecutive differences (1.4826 x their median absolute deviation / sqrt 2,
robust to the steps themselves), floored at 0.5%, because processes of one binary move by about
that much between runs (the A/A in docs/methodology.md), whatever a quiet series suggests. A step
the fit keeps is then a change point only if it is at least --min-effect (2%, compare's rule) and
its two segments' means differ by more than three standard errors: a lone outlier or the A/A's
noise is not one. Why not a U test between adjacent segments: a history often holds one or two
runs per toolkit, where a U test cannot reach p < 0.05 at all; the fit uses every run's time.

Each change point is explained by what differed between the last run before it and the first
after: the context fields that say what made a run (toolkit, libraries, driver, cubench revision,
GPU, power limit, host) and the row's own conditions (its SM clock moved by more than 5%, its
power-capped share, the kernels it ran).
"""
import math
import statistics

SIGMA_FLOOR = 0.005
SIGMAS = 3.0
EXPLAINING_FIELDS = (("cuda_toolkit", "CUDA"), ("cublas", "cuBLAS"), ("cublaslt", "cuBLASLt"),
                     ("cusolver", "cuSOLVER"), ("cudnn", "cuDNN"), ("nccl", "NCCL"),
                     ("libtorch", "LibTorch"), ("cuda_driver_api", "driver API"),
                     ("git_revision", "cubench"), ("gpu", "GPU"),
                     ("gpu_power_limit_W", "power limit W"), ("host_name", "host"))


def noise(logs):
    """The series' run-to-run sigma of log time (see the module's words)."""
    diffs = [b - a for a, b in zip(logs, logs[1:])]
    if len(diffs) < 2:
        return SIGMA_FLOOR
    centre = statistics.median(diffs)
    mad = statistics.median(abs(d - centre) for d in diffs)
    return max(1.4826 * mad / math.sqrt(2), SIGMA_FLOOR)


def _cost(prefix, prefix_sq, i, j):
    """Squared error of logs[i:j] about its mean, from prefix sums."""
    n = j - i
    s = prefix[j] - prefix[i]
    return (prefix_sq[j] - prefix_sq[i]) - s * s / n


def step_fit(logs, penalty):
    """The starts of the segments after the first (indices into logs) of the optimal partition."""
    n = len(logs)
    prefix, prefix_sq = [0.0], [0.0]
    for y in logs:
        prefix.append(prefix[-1] + y)
        prefix_sq.append(prefix_sq[-1] + y * y)
    best = [0.0] + [math.inf] * n  # best[j]: the least cost of logs[:j]
    last = [0] * (n + 1)           # last[j]: where the last segment of that partition starts
    for j in range(1, n + 1):
        for i in range(j):
            cost = best[i] + _cost(prefix, prefix_sq, i, j) + (penalty if i else 0.0)
            if cost < best[j]:
                best[j], last[j] = cost, i
    starts, j = [], n
    while j > 0:
        if last[j]:
            starts.append(last[j])
        j = last[j]
    return sorted(starts)


def _single_runs(starts, n):
    """The indexes of one-run segments other than the last: runs that neither the runs before
    nor those after agree with (outliers, or one run caught midway), not a change for good. A
    last segment of one run stays: the newest run may begin a change (one more confirms it)."""
    bounds = [0] + starts + [n]
    return [bounds[k] for k in range(len(bounds) - 2) if bounds[k + 1] - bounds[k] == 1]


def _steps(logs, min_effect):
    """[(position of the first run after a step, ratio after/before)] over logs: the fit, then
    the two tests of the module's words."""
    sigma = noise(logs)
    starts = step_fit(logs, penalty=2 * SIGMAS * sigma * sigma * math.log(max(len(logs), 3)))
    bounds = [0] + starts + [len(logs)]
    out = []
    for k, start in enumerate(starts):
        before, after = logs[bounds[k]:start], logs[start:bounds[k + 2]]
        step = statistics.fmean(after) - statistics.fmean(before)
        standard_error = sigma * math.sqrt(1 / len(before) + 1 / len(after))
        if abs(step) >= math.log1p(min_effect) and abs(step) > SIGMAS * standard_error:
            out.append((start, math.exp(step)))
    return out, starts


def find(points, min_effect=0.02):
    """[(index of the first run after the change, ratio after/before, index of the last run
    before it)] for a series of points (dicts with median_us), oldest first. Runs the fit leaves
    alone in a segment (not the newest) are set aside and the rest fitted again, so neither an
    outlier nor a run caught midway makes or hides a change."""
    times = [p["median_us"] for p in points]
    if len(times) < 2 or any(t is None or t <= 0 for t in times):
        return []
    kept = list(range(len(times)))  # the indexes of the runs still fitted
    while True:
        logs = [math.log(times[i]) for i in kept]
        steps, starts = _steps(logs, min_effect)
        single = _single_runs(starts, len(logs))
        if not single or len(kept) - len(single) < 2:
            break
        kept = [i for position, i in enumerate(kept) if position not in set(single)]
    return [(kept[position], ratio, kept[position - 1]) for position, ratio in steps]


def explain(before, after):
    """What differed between two points (the runs either side of a change), in words."""
    words = []
    for field, name in EXPLAINING_FIELDS:
        a, b = before["fields"].get(field), after["fields"].get(field)
        if a != b:
            words.append(f"{name} {a or 'unknown'} -> {b or 'unknown'}")
    ca, cb = before.get("sm_clock_MHz"), after.get("sm_clock_MHz")
    if ca and cb and abs(cb - ca) > 0.05 * ca:
        words.append(f"SM clock {ca:.0f} -> {cb:.0f} MHz")
    pa, pb = before.get("power_capped_pct"), after.get("power_capped_pct")
    if pa is not None and pb is not None and abs(pb - pa) >= 25:
        words.append(f"power-capped {pa:.0f}% -> {pb:.0f}% of polls")
    if before.get("kernels") and after.get("kernels") and before["kernels"] != after["kernels"]:
        words.append(f"kernels {before['kernels']} -> {after['kernels']}")
    return "; ".join(words) if words else "nothing the runs record differed"


def changes_of(series, min_effect):
    """{name: [(index, ratio, words)]}: every row's change points, explained."""
    out = {}
    for name, points in series.items():
        found = find(points, min_effect)
        out[name] = [(i, ratio, explain(points[before], points[i]))
                     for i, ratio, before in found]
    return out
