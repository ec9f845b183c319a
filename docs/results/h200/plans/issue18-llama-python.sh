#!/usr/bin/env bash
# Issue 18, third H200 call: build (the tree the whole ctest then runs on, in the next call),
# which decode kernels repeat bit for bit (issue18-determinism.py), and transformers' LLaMA-7B
# generation in PyTorch eager at the rows cubench timed in call 2 (its first attempt failed on a
# cache reset outside inference mode).
#   OUT=/tmp/out CUBENCH_GIT_REVISION=<commit> docs/results/h200/plans/issue18-llama-python.sh
set -uo pipefail
start=$(date +%s)
SKIP_CTEST=1 FILTER=none tools/gpu-session.sh || exit 1
timeout 90 python3 docs/results/h200/plans/issue18-determinism.py >"$OUT/determinism.txt" 2>&1
echo "== determinism: exit $? at $(( $(date +%s) - start )) s"; cut -c1-200 "$OUT/determinism.txt" | grep -v Warning | tail -60
for f in '^llama_decode/bf16/eager/128/128/1/' '^llama_decode/bf16/eager/128/128/8/'; do
  name=pytorch-llama-$(echo "$f" | tr -dc '0-9/' | tr / - | sed 's/^-*//;s/-*$//')
  PYTHONUNBUFFERED=1 timeout 75 python3 tools/torch_reference.py --filter "$f" --repetitions 5 \
    --min-time 0 --out "$OUT/$name.json" >"$OUT/$name.txt" 2>&1
  echo "== $name: exit $? at $(( $(date +%s) - start )) s"; tail -3 "$OUT/$name.txt" | cut -c1-200
done
echo "total $(( $(date +%s) - start )) s"
cd "$OUT" && tar czf session.tgz --remove-files *.json *.txt *.log 2>/dev/null; ls
