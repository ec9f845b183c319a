"""Writes the version-3 result files beside this file (docs/result-file.md: a "cubench" object in
every row), for the tools' tests:

  report/cuda-11.8.json, report/cuda-12.4.json, report/cuda-13.0.json, one-process-a.json and
  one-process-b.json: tests/data/report's and tests/data's version-2 files, converted: each row
  gains the object tools/results.py reads from its name, label and message (legacy_outcome), a
  failed check its check's name, and the schema says version 3. Every tool gives the same output
  for a file and its conversion.

  run-a.json, run-b.json: two builds (CUDA 12.4, 13.0) of five repetitions a row, with Google
  Benchmark's aggregates, made here: measured rows with notes of every kind (and one of a kind
  no tool knows), a row not run at its turn (a skip), one not supported here (a skip), a wrong
  result and an out-of-memory (errors); and rows whose name and label would read wrongly: a
  gemm row whose name has a segment its axes lack (gemm/bf16/2048/2048/2048/splitk), a
  gemm_autotune row named like a gemm one (gemm/fp8/4096/...), and a label whose family's own
  words hold "stopped: timeout ..." and "kernel: ..." (a decoy kernel that differs between the
  builds where the kernel that ran does not).

Run it again after an edit: /usr/bin/python3 tests/data/v3/make_v3.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(DATA, "..", "..", "tools"))
from cubench_tools import result_schema, row_outcome  # noqa: E402

# The check behind each converted failed row (a version-3 row's failed_check note names it).
CHECKS = {"svd/gesvdp/fp32/2048/manual_time": "singular values against fp64 gesvd"}


def write(path, doc):
    """As Google Benchmark's JSON, one row a line (the files stay small enough to read)."""
    rows = ",\n".join(json.dumps(row) for row in doc["benchmarks"])
    with open(path, "w") as f:
        f.write('{"context": ' + json.dumps(doc["context"], indent=1) + ',\n"benchmarks": [\n' + rows + "\n]}\n")
    print(path)


def converted(source):
    with open(source) as f:
        doc = json.load(f)
    old = result_schema.schema_of(doc["context"], source)
    schema = json.loads(doc["context"][result_schema.SCHEMA_FIELD])
    schema["version"] = 3
    doc["context"][result_schema.SCHEMA_FIELD] = json.dumps(schema, separators=(",", ":"))
    for row in doc["benchmarks"]:
        o = row_outcome.legacy_outcome(row, old)
        notes = o.notes
        if o.status == "wrong_result":
            check = CHECKS[row["name"]]
            notes = [dict(n, check=check, text=f"check: {check}") if n["kind"] == "failed_check" else n
                     for n in notes]
        row["cubench"] = {"family": o.family, "status": o.status, "reason": o.reason,
                          "axis_values": o.axis_values, "notes": notes}
    return doc


# --- run-a.json and run-b.json --------------------------------------------------------------------

SCHEMA = {
    "version": 3,
    "counters": {c: {"unit": u, "better": b, "description": d} for c, u, b, d in (
        ("TFLOPS", "TFLOP/s", "higher", "FLOPs of the work model per second"),
        ("GBps", "GB/s", "higher", "bytes of the work model per second"),
        ("sm_clock_MHz", "MHz", "none", "mean SM clock over the samples"),
        ("samples", "", "none", "timed samples in the row"),
        ("time_ci_pct", "%", "lower", "half-width of the time's 95% confidence interval"),
        ("power_capped_pct", "%", "none", "polls that found the power cap holding the clocks"),
        ("slowdown_pct", "%", "lower", "polls that found a thermal or hardware slowdown"),
        ("other_processes", "", "lower", "most other processes computing on the GPU at once"),
        ("setup_s", "s", "none", "set-up"), ("first_call_ms", "ms", "lower", "the first run"),
        ("validate_s", "s", "none", "the check"), ("warmup_s", "s", "none", "the warm-up"),
        ("sampling_s", "s", "none", "the samples' wall time"))},
    "families": {
        name: {"description": description, "axes": [{"name": a, "kind": k} for a, k in axes],
               "main_counter": main, "size_axis": size, "timer": "cuda_events", "counters": [], "library": ""}
        for name, description, axes, main, size in (
            ("gemm", "C = A^T B through cuBLASLt", (("dtype", "dtype"), ("m", "int"), ("n", "int"), ("k", "int")),
             "TFLOPS", "m"),
            ("gemm_autotune", "C = A^T B, cuBLASLt's candidates timed",
             (("dtype", "dtype"), ("m", "int"), ("n", "int"), ("k", "int")), "TFLOPS", "m"),
            ("svd", "singular values and vectors through cuSOLVER",
             (("algo", "string"), ("dtype", "dtype"), ("n", "int")), "", "n"),
            ("sigmoid", "y = 1 / (1 + exp(-x))",
             (("variant", "string"), ("dtype", "dtype"), ("n", "int"), ("cache", "string")), "GBps", "n"),
            ("launch/empty", "an empty kernel launched back to back", (), "", ""))}}


def note(kind, text, **fields):
    return {"kind": kind, **fields, "text": text}


def stop(noise, samples):
    return note("stop", f"stopped: noise {noise:.2f}% < 0.5% after {samples} samples", rule="noise_reached",
                noise_pct=noise, target_pct=0.5, samples=samples)


CAPPED = note("power_capped", "power-capped in 26% of polls (software cap 700 W)", pct=26.0, cap_W=700)
QUEUED = note("queued", "queued behind a blocking kernel")
DECOY = ("cuBLASLt algo 7, split-k; stopped: timeout 5s: noise 3.00% (target 0.5%) after 4 samples; "
         "kernel: decoy_{}_kernel")  # the family's own words, which read as the harness's would
# name: (family, axis values, {build: (time in us, notes) for a measured row, or (status, reason,
# notes) for one not measured}, work: ("flops" or "bytes", amount))
ROWS = {
    "gemm/bf16/1024/1024/1024": ("gemm", {"dtype": "bf16", "m": 1024, "n": 1024, "k": 1024}, {
        "a": (12.6, [note("case", "cuBLASLt algo 39, heuristic's first of 8"), stop(0.21, 1526),
                     note("kernels", "kernel: sm90_xmma_gemm_bf16_kernel", named=True), CAPPED, QUEUED]),
        "b": (11.4, [note("case", "cuBLASLt algo 66, heuristic's first of 8"), stop(0.18, 1610),
                     note("kernels", "kernel: nvjet_hsh_128x256_kernel", named=True), CAPPED, QUEUED])},
        ("flops", 2 * 1024 ** 3)),
    "gemm/bf16/2048/2048/2048/splitk": ("gemm", {"dtype": "bf16", "m": 2048, "n": 2048, "k": 2048}, {
        build: (t, [note("case", DECOY.format(build)),
                    note("stop", "stopped: noise settled at 0.61% (target 0.5%) after 900 samples",
                         rule="noise_settled", noise_pct=0.61, target_pct=0.5, samples=900),
                    note("kernels", "kernel: splitk_gemm_kernel", named=True),
                    note("throttled", "THROTTLED: thermal or hardware slowdown in 12% of polls", pct=12.0),
                    note("l2_flushed", "L2 flushed")]) for build, t in (("a", 95.0), ("b", 86.0))},
        ("flops", 2 * 2048 ** 3)),
    "gemm/fp8/4096/4096/4096": ("gemm_autotune", {"dtype": "fp8", "m": 4096, "n": 4096, "k": 4096}, {
        build: (t, [note("case", "cuBLASLt algo 21, autotuned: candidate 3 of 8 (4.2% faster than the first)"),
                    stop(0.12, 400), note("runs_per_sample", "3 runs per sample", runs=3)])
        for build, t in (("a", 300.0), ("b", 290.0))}, ("flops", 2 * 4096 ** 3)),
    "gemm/bf16/16384/16384/16384": ("gemm", {"dtype": "bf16", "m": 16384, "n": 16384, "k": 16384}, {
        "a": (11000.0, [note("case", "cuBLASLt algo 39, heuristic's first of 8"), stop(0.05, 60)]),
        "b": ("not_run", "needs 3.0 GiB of device memory; 1.2 GiB free of 80.0 GiB", [])},
        ("flops", 2 * 16384 ** 3)),
    "gemm/fp8/1024/1024/1024": ("gemm", {"dtype": "fp8", "m": 1024, "n": 1024, "k": 1024}, {
        build: ("not_supported", "fp8 needs compute capability 8.9; this GPU is 8.0", []) for build in "ab"},
        ("flops", 2 * 1024 ** 3)),
    "svd/gesvd/fp32/1024": ("svd", {"algo": "gesvd", "dtype": "fp32", "n": 1024}, {
        "a": ("wrong_result", "singular values' error 0.31 exceeds tolerance 0.00732",
              [note("failed_check", "check: singular values against fp64 gesvd",
                    check="singular values against fp64 gesvd", known_inaccuracy=False)]),
        "b": (110000.0, [stop(0.3, 20)])}, None),
    "svd/gesvdj/fp32/8192": ("svd", {"algo": "gesvdj", "dtype": "fp32", "n": 8192}, {
        "a": (2.1e6, [stop(0.4, 10)]),
        "b": ("out_of_memory", "out of memory on GPU 0: asked for 2.0 GiB, 1.1 GiB free", [])}, None),
    "sigmoid/vectorized/fp32/10000000/cold": ("sigmoid", {"variant": "vectorized", "dtype": "fp32",
                                                          "n": 10000000, "cache": "cold"}, {
        "a": (24.4, [note("case", "cubench kernel"), stop(0.08, 354),
                     note("sync_boost", "sync boost in 5% of polls", pct=5.0),
                     note("slow_clock", "slow clock: 3 of 20 samples under 75% of the default SM clock",
                          samples=3, of=20), note("l2_flushed", "L2 flushed")]),
        "b": (24.45, [note("case", "cubench kernel"), stop(0.09, 350),
                      note("busy_gpu", "BUSY GPU: 1 other compute process", processes=1),
                      note("blocking_timeout", "BLOCKING KERNEL TIMED OUT in 2 samples: those include "
                           "launch time", samples=2), note("l2_flushed", "L2 flushed"),
                      note("future_kind", "a note of a kind these tools predate", weight=3)])},
        ("bytes", 8e7)),
    "launch/empty": ("launch/empty", {}, {
        build: (3.4, [stop(0.3, 224), note("runs_per_sample", "1000 runs per sample", runs=1000)])
        for build in "ab"}, None),
}
REPETITIONS = 5
WORDS = {"not_run": "not run: ", "not_supported": "not supported here, not timed: ",
         "wrong_result": "wrong result, not timed: ", "out_of_memory": "", "error": ""}


def rows_of(build):
    out = []
    for index, (base, (family, axes, builds, work)) in enumerate(ROWS.items()):
        name = base + "/manual_time"
        gb = {"name": name, "family_index": index, "per_family_instance_index": 0, "run_name": name,
              "run_type": "iteration", "repetitions": REPETITIONS, "threads": 1}
        spec = builds[build]
        if isinstance(spec[0], str):  # not measured: a skip or an error, every repetition
            status, reason, notes = spec
            message = f"{base}: {WORDS[status]}{reason}"
            said = ({"skipped": True, "skip_message": message} if status in row_outcome.SKIPS
                    else {"error_occurred": True, "error_message": message})
            for i in range(REPETITIONS):
                out.append(dict(gb, repetition_index=i, iterations=0, real_time=0, cpu_time=0, time_unit="us",
                                **said, cubench={"family": family, "status": status, "reason": reason,
                                                 "axis_values": axes, "notes": notes}))
            continue
        time_us, notes = spec
        times = [time_us * (1 + 0.002 * (i - 2)) for i in range(REPETITIONS)]
        cubench = {"family": family, "status": "measured", "reason": "", "axis_values": axes, "notes": notes}
        for i, t in enumerate(times):
            counters = {"sm_clock_MHz": 1980.0, "samples": 40.0, "time_ci_pct": 0.3, "setup_s": 0.02,
                        "first_call_ms": 0.5, "validate_s": 0.01, "warmup_s": 0.25, "sampling_s": 0.5}
            if work:
                rate = work[1] / (t * 1e-6)
                counters.update({"TFLOPS": rate / 1e12} if work[0] == "flops" else {"GBps": rate / 1e9})
            # the counters beside the notes that say the same (cubench writes both)
            for n in notes:
                counters.update({"power_capped": {"power_capped_pct": n.get("pct")},
                                 "throttled": {"slowdown_pct": n.get("pct")},
                                 "busy_gpu": {"other_processes": n.get("processes")}}.get(n["kind"], {}))
            out.append(dict(gb, repetition_index=i, iterations=1000, real_time=t, cpu_time=t, time_unit="us",
                            label="; ".join(n["text"] for n in notes), **counters, cubench=cubench))
        mean = sum(times) / len(times)
        stddev = (sum((t - mean) ** 2 for t in times) / (len(times) - 1)) ** 0.5
        for aggregate, value, unit in (("mean", mean, "time"), ("median", sorted(times)[2], "time"),
                                       ("stddev", stddev, "time"), ("cv", stddev / mean, "percentage")):
            out.append(dict(gb, name=f"{name}_{aggregate}", run_type="aggregate", aggregate_name=aggregate,
                            aggregate_unit=unit, iterations=REPETITIONS, real_time=value, cpu_time=value,
                            time_unit="us", cubench=dict(cubench, notes=[])))
    return out


def run_file(build, toolkit, cublas):
    context = {"date": f"2026-12-0{1 + 'ab'.index(build)}T10:00:00+00:00",
               "executable": f"build/cuda-{toolkit}/cubench", "cuda_toolkit": toolkit, "cublas": cublas,
               "gpu": "NVIDIA H100 80GB HBM3", "gpu_other_processes_at_start": "0", "library_build_type": "release",
               "note": "hand-made test data for the tools (schema version 3), not a measurement",
               result_schema.SCHEMA_FIELD: json.dumps(SCHEMA, separators=(",", ":"))}
    return {"context": context, "benchmarks": rows_of(build)}


if __name__ == "__main__":
    os.makedirs(os.path.join(HERE, "report"), exist_ok=True)
    for toolkit in ("11.8", "12.4", "13.0"):
        write(os.path.join(HERE, "report", f"cuda-{toolkit}.json"),
              converted(os.path.join(DATA, "report", f"cuda-{toolkit}.json")))
    for side in ("a", "b"):
        name = f"one-process-{side}.json"
        write(os.path.join(HERE, name), converted(os.path.join(DATA, name)))
    write(os.path.join(HERE, "run-a.json"), run_file("a", "12.4", "12.4.5"))
    write(os.path.join(HERE, "run-b.json"), run_file("b", "13.0", "13.1.0"))
