#!/usr/bin/env bash
# The ResNet-50 step check's bounds after the whole ctest at 6617ef0 failed on amp_bf16 (BatchNorm
# off by 1.43-1.60 from the initialised model): the cuda-13.0 build with LibTorch (cubench only, no
# ctest: this session's device time was nearly spent), then the res-32 batch-256 rows of amp_bf16
# and amp_fp16, eager and graph, each checked once before its samples; step_grad_error and
# weight_grad_error per row.
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/resnet-step-check.sh
set -uo pipefail
BUILD_TARGET=cubench SKIP_CTEST=1 DEADLINE=${DEADLINE:-170} FILTER='^resnet50_train(_graph)?/amp_(bf16|fp16)/[a-z_]+/32/256/' \
  REPS=1 MIN_TIME=0.01 NAME=resnet-amp tools/gpu-session.sh
/usr/bin/env python3 - "$OUT/resnet-amp.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["benchmarks"]:
    print(r["name"], r.get("error_message", ""), "step", r.get("step_grad_error"), "weights", r.get("weight_grad_error"))
PY
