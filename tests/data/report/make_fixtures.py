"""Writes the report's fixtures beside this file: cuda-11.8.json, cuda-12.4.json, cuda-13.0.json,
hand-made from tests/data's samples and the H200 toolkits run (docs/results/h200/toolkits): three
builds of one source, four processes each (one sample per process, as tools/merge-processes
writes them), so that the U test can flag a row (4 against 4: smallest p 0.029).

What each build shows the report: 13.0 faster at svd's gesvd (2.1-3.3x) and at gemm with another
kernel, 12.4 no different at svd, slower at a gemm row it ran power-capped, too noisy at sigmoid
and sharing the GPU with another process; 11.8 built without NCCL (no allreduce) and with fp8
GEMMs not run; start-up rows and peak memory for the cost side. Run it again after an edit:
  /usr/bin/python3 tests/data/report/make_fixtures.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BUILDS = ("11.8", "12.4", "13.0")

SCHEMA = {
    "version": 2,
    "counters": {
        "TFLOPS": {"unit": "TFLOP/s", "better": "higher", "description": "FLOPs of the work model per second"},
        "GBps": {"unit": "GB/s", "better": "higher", "description": "bytes of the work model per second"},
        "busbw_GBps": {"unit": "GB/s", "better": "higher", "description": "algbw * 2(n-1)/n; 0 on one GPU"},
        "gpus": {"unit": "", "better": "none", "description": "GPUs taking part"},
        "sm_clock_MHz": {"unit": "MHz", "better": "none", "description": "mean SM clock over the samples"},
        "power_W": {"unit": "W", "better": "none", "description": "mean board power over the sampling"},
        "power_capped_pct": {"unit": "%", "better": "none", "description": "polls that found the power cap holding the clocks"},
        "slowdown_pct": {"unit": "%", "better": "lower", "description": "polls that found a thermal or hardware slowdown"},
        "other_processes": {"unit": "", "better": "lower", "description": "most other processes computing on the GPU at once"},
        "peak_mem_bytes": {"unit": "B", "better": "lower", "description": "the case's memory pool's reserved high-water mark"},
        "used_mem_bytes": {"unit": "B", "better": "lower", "description": "the case's memory pool's in-use high-water mark"},
        "first_call_ms": {"unit": "ms", "better": "lower", "description": "the first run, with module loading and library set-up"},
        "child_wall_ms": {"unit": "ms", "better": "lower", "description": "a start-up child's spawn to exit"}},
    "families": {
        "gemm": {"description": "C = A^T B through cuBLASLt, the heuristic's first algorithm",
                 "axes": [{"name": "dtype", "kind": "dtype"}, {"name": "m", "kind": "int"},
                          {"name": "n", "kind": "int"}, {"name": "k", "kind": "int"}],
                 "main_counter": "TFLOPS", "size_axis": "m", "timer": "cuda_events", "counters": [], "library": ""},
        "svd": {"description": "singular values and vectors of a random n x n matrix through cuSOLVER",
                "axes": [{"name": "algo", "kind": "string"}, {"name": "dtype", "kind": "dtype"},
                         {"name": "n", "kind": "int"}],
                "main_counter": "", "size_axis": "n", "timer": "cuda_events", "counters": [], "library": ""},
        "sigmoid": {"description": "y = 1 / (1 + exp(-x)) with our kernels",
                    "axes": [{"name": "variant", "kind": "string"}, {"name": "dtype", "kind": "dtype"},
                             {"name": "n", "kind": "int"}, {"name": "cache", "kind": "string"}],
                    "main_counter": "GBps", "size_axis": "n", "timer": "cuda_events", "counters": [], "library": ""},
        "allreduce": {"description": "ncclAllReduce (sum) over the run's GPUs",
                      "axes": [{"name": "dtype", "kind": "dtype"}, {"name": "bytes", "kind": "pow2"},
                               {"name": "placement", "kind": "string"}],
                      "main_counter": "busbw_GBps", "size_axis": "bytes", "timer": "cuda_events",
                      "counters": ["busbw_GBps", "gpus"], "library": "nccl"},
        "startup/cuda": {"description": "start-up costs, a fresh process per sample",
                         "axes": [{"name": "stage", "kind": "string"}, {"name": "loading", "kind": "string"}],
                         "main_counter": "", "size_axis": "", "timer": "reported", "counters": ["child_wall_ms"],
                         "library": ""}}}

SM90_KERNEL = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel"
NVJET_KERNEL = "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNN"
MIB = 2 ** 20

# name: (unit, {build: [time per process]}, {counter: value or {build: value}}, {build: label})
ROWS = {
    "gemm/bf16/1024/1024/1024": ("us", {"11.8": [12.59, 12.73, 12.57, 12.67], "12.4": [12.61, 12.70, 12.55, 12.66],
                                        "13.0": [11.42, 11.51, 11.38, 11.47]},
                                 {"flops": 2 * 1024 ** 3, "peak_mem_bytes": 96 * MIB, "used_mem_bytes": 70 * MIB,
                                  "first_call_ms": 0.16, "power_W": 236},
                                 {"11.8": f"cuBLASLt algo 39, heuristic's first of 8; kernel: {SM90_KERNEL}",
                                  "12.4": f"cuBLASLt algo 39, heuristic's first of 8; kernel: {SM90_KERNEL}",
                                  "13.0": f"cuBLASLt algo 66, heuristic's first of 8; kernel: {NVJET_KERNEL}"}),
    "gemm/bf16/4096/4096/4096": ("us", {"11.8": [201.9, 199.6, 202.8, 200.1], "12.4": [210.2, 211.0, 209.5, 210.4],
                                        "13.0": [181.0, 182.0, 181.5, 182.2]},
                                 {"flops": 2 * 4096 ** 3, "peak_mem_bytes": 672 * MIB, "used_mem_bytes": 640 * MIB,
                                  "first_call_ms": 0.32, "power_W": {"11.8": 690, "12.4": 700, "13.0": 688},
                                  "power_capped_pct": {"12.4": 72}, "sm_clock_MHz": {"12.4": 1430}},
                                 {"11.8": f"cuBLASLt algo 39, heuristic's first of 8; kernel: {SM90_KERNEL}",
                                  "12.4": f"cuBLASLt algo 39, heuristic's first of 8; kernel: {SM90_KERNEL}",
                                  "13.0": f"cuBLASLt algo 66, heuristic's first of 8; kernel: {NVJET_KERNEL}"}),
    "svd/gesvd/fp32/512": ("us", {"11.8": [93800, 94100, 93950, 94300], "12.4": [94000, 93700, 94200, 94050],
                                  "13.0": [44500, 44800, 44650, 44900]},
                           {"peak_mem_bytes": 32 * MIB, "used_mem_bytes": 18 * MIB,
                            "first_call_ms": {"11.8": 90.8, "12.4": 91.2, "13.0": 44.9},
                            "other_processes": {"12.4": 1}}, {}),
    "svd/gesvd/fp32/1024": ("us", {"11.8": [296000, 297500, 295800, 298000], "12.4": [296500, 297000, 296200, 297800],
                                   "13.0": [109000, 110000, 109500, 110200]},
                            {"peak_mem_bytes": 96 * MIB, "used_mem_bytes": 70 * MIB,
                             "first_call_ms": {"11.8": 287.6, "12.4": 286.9, "13.0": 110.3},
                             "other_processes": {"12.4": 1}}, {}),
    "svd/gesvd/fp32/2048": ("us", {"11.8": [1010000, 1015000, 1008000, 1012000],
                                   "12.4": [1011000, 1013000, 1009500, 1014000],
                                   "13.0": [305000, 306500, 304800, 307000]},
                            {"peak_mem_bytes": {"11.8": 288 * MIB, "12.4": 288 * MIB, "13.0": 256 * MIB},
                             "used_mem_bytes": 276 * MIB, "first_call_ms": {"11.8": 1011.4, "12.4": 1010.8, "13.0": 306.2},
                             "other_processes": {"12.4": 1}}, {}),
    "svd/gesvdj/fp32/1024": ("us", {"11.8": [53680, 53940, 53710, 54150], "12.4": [53700, 53900, 53800, 54000],
                                    "13.0": [53750, 53880, 53690, 54100]},
                             {"peak_mem_bytes": 96 * MIB, "used_mem_bytes": 74 * MIB, "first_call_ms": 53.6},
                             {}),
    "sigmoid/vectorized/fp32/10000000/cold": ("us", {"11.8": [24.37, 24.47, 24.33, 24.47],
                                                     "12.4": [24.3, 25.9, 24.4, 26.1],
                                                     "13.0": [24.40, 24.45, 24.36, 24.50]},
                                              {"bytes": 8e7, "peak_mem_bytes": 160 * MIB, "used_mem_bytes": 153 * MIB,
                                               "first_call_ms": 0.043}, {}),
    "allreduce/fp32/1048576/outofplace": ("us", {"12.4": [25.1, 25.3, 25.0, 25.2], "13.0": [24.9, 25.0, 25.1, 24.8]},
                                          {"busbw_GBps": 0, "gpus": 1, "peak_mem_bytes": 32 * MIB,
                                           "used_mem_bytes": 2 * MIB, "first_call_ms": 412.0}, {}),
    "startup/cuda/first_kernel/default": ("ms", {"11.8": [310, 305, 312, 308], "12.4": [130, 128, 131, 129],
                                                 "13.0": [125, 124, 126, 127]},
                                          {"child_wall_ms": {"11.8": 690, "12.4": 505, "13.0": 498}}, {}),
    "startup/cuda/cublas_handle/default": ("ms", {"11.8": [480, 476, 483, 479], "12.4": [215, 212, 214, 216],
                                                  "13.0": [190, 192, 189, 191]},
                                           {"child_wall_ms": {"11.8": 870, "12.4": 598, "13.0": 570}}, {}),
}

VERSIONS = {
    "11.8": {"cuda_compiler": "/usr/local/cuda-11.8/bin/nvcc 11.8.89", "cublas": "11.11.3", "cublaslt": "11.11.3",
             "cusolver": "11.4.1"},
    "12.4": {"cuda_compiler": "/usr/local/cuda-12.4/bin/nvcc 12.4.131", "cublas": "12.4.5", "cublaslt": "12.4.5",
             "cusolver": "11.6.1", "nccl": "2.21.5"},
    "13.0": {"cuda_compiler": "/usr/local/cuda-13.0/bin/nvcc 13.0.88", "cublas": "13.1.0", "cublaslt": "13.1.0",
             "cusolver": "12.0.4", "nccl": "2.28.3"},
}


def value(spec, build, default):
    if isinstance(spec, dict):
        return spec.get(build, default)
    return spec


def rows_of(build):
    out = []
    for base, (unit, times, counters, labels) in ROWS.items():
        if build not in times:
            continue
        name = base + "/manual_time"
        for i, t in enumerate(times[build]):
            us = t * (1e3 if unit == "ms" else 1)
            # Google Benchmark's fields the tools read (run_name and run_type have defaults there)
            row = {"name": name, "repetitions": 4, "repetition_index": i, "real_time": t, "time_unit": unit}
            if build in labels:
                row["label"] = labels[build]
            if "flops" in counters:
                row["TFLOPS"] = round(counters["flops"] / (us * 1e-6) / 1e12, 2)
            if "bytes" in counters:
                row["GBps"] = round(counters["bytes"] / (us * 1e-6) / 1e9, 1)
            if unit == "us":  # a start-up child's samples carry no clock or power of their own
                row["sm_clock_MHz"] = value(counters.get("sm_clock_MHz", 1975), build, 1975)
                row["power_capped_pct"] = value(counters.get("power_capped_pct", 0), build, 0)
                row["slowdown_pct"] = 0
                row["other_processes"] = value(counters.get("other_processes", 0), build, 0)
            for counter in ("busbw_GBps", "gpus", "peak_mem_bytes", "used_mem_bytes", "first_call_ms",
                            "power_W", "child_wall_ms"):
                if counter in counters:
                    row[counter] = value(counters[counter], build, None)
            out.append({k: v for k, v in row.items() if v is not None})
    return out


def context_of(build):
    # The processes take turns (process 1 of each build, then 2...): 8 minutes a process.
    starts = [65 + 24 * process + 8 * BUILDS.index(build) for process in range(4)]
    dates = [f"2026-12-06T{m // 60:02d}:{m % 60:02d}:00+00:00" for m in starts]
    context = {
        "note": "hand-made test data for the tools, not a measurement: three builds of one source",
        "date": dates[0],
        "host_name": "gpu-box",
        "executable": f"build/cuda-{build}/cubench",
        "cuda_toolkit": build, "cuda_runtime": build, "cuda_driver_api": "13.0",
        **VERSIONS[build],
        "host_compiler": "GNU 12.2.0", "build_type": "Release", "google_benchmark": "1.8.3",
        "git_revision": "62b9c09",
        "not_built": json.dumps({"nccl": "no NCCL for CUDA 11.8"} if build == "11.8" else {}),
        "gpu": "NVIDIA H200", "gpu_count": "1", "gpu_power_limit_W": "700",
        "gpu_default_sm_clock_mhz": "1980", "gpu_max_sm_clock_mhz": "1980",
        "gpu_other_processes_at_start": "1 (of: pid 4242 512 MiB)" if build == "12.4" else "0",
        "nvml": "ok", "copy_ceiling_GBps": "4200", "suite": "default",
        "stopping": "max_noise=0.5% min_samples=10 min_time=0.25s timeout=5s (nvbench's stdrel)",
        "command_line": (f"build/cuda-{build}/cubench --benchmark_filter=. --benchmark_repetitions=1 "
                         f"--benchmark_out=results/cuda-{build}.process-1.json --benchmark_out_format=json "
                         "--benchmark_report_aggregates_only=false --cubench_kernels=on"),
        "cubench_schema": json.dumps(SCHEMA, separators=(",", ":")),
        "processes": "4",
        "process_dates": ", ".join(dates),
    }
    if build == "11.8":
        context["not_run"] = json.dumps([{"family": "gemm", "reason": "fp8 needs CUDA 12.1 or later",
                                          "configurations": ["gemm/fp8/1024/1024/1024", "gemm/fp8/4096/4096/4096"]}])
    return context


def write(build):
    path = os.path.join(HERE, f"cuda-{build}.json")
    rows = ",\n".join(json.dumps(row, separators=(",", ":")) for row in rows_of(build))
    with open(path, "w") as f:
        f.write('{"context": ' + json.dumps(context_of(build), indent=1) + ',\n"benchmarks": [\n' + rows + "\n]}\n")
    return path


if __name__ == "__main__":
    for b in BUILDS:
        print(write(b))
