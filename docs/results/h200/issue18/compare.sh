#!/usr/bin/env bash
# tools/compare's verdicts for issue 18 (the U test and the 2% effect, the rule the A/A passed
# with), PyTorch eager as the base and cubench against it, from each call's JSON: eager rows by
# name; graph rows renamed to their eager twin, since python has eager steps only. Writes
# compare.md (bash compare.sh). Each file is one process's repetitions: the tool says so below
# each table (a verdict on the process-to-process spread needs tools/run-matrix's processes).
cd "$(dirname "$0")" || exit 1
compare=../../../../tools/compare
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
pair() {  # title counters python.json cubench.json filter [rename]
  local title=$1 counters=$2 py=$3 cb=$4 filter=$5 rename=${6:-}
  echo; echo "## $title"; echo; echo "\`$py\` (base) against \`$cb\`, rows matching \`$filter\`"; echo
  if [ -n "$rename" ]; then  # only the filter's rows of cubench's file, renamed: no name twice
    local only=$tmp/$(basename "$cb" .json)-renamed.json
    python3 - "$cb" "$filter" "$rename" "$only" <<'PY'
import json, re, sys
sys.path.insert(0, "../../../../tools")
import results  # the tools' reader: it loads a file a killed run cut mid-write
src, keep, rename, dst = sys.argv[1:]
pattern, replacement = rename.split("=", 1)
d = results.read(src)
d["benchmarks"] = [dict(b, name=re.sub(pattern, replacement, b["name"]),
                        run_name=re.sub(pattern, replacement, b.get("run_name", b["name"])))
                   for b in d["benchmarks"] if re.search(keep, b["name"])]
json.dump(d, open(dst, "w"))
PY
    cb=$only filter=.
  fi
  $compare --table "$py" "$cb" --format md --filter "$filter" --counters "$counters" 2>&1 |
    sed "s|$tmp/||g"
}
{
  echo "# Issue 18: cubench against PyTorch eager, tools/compare's verdicts (bash compare.sh)"
  pair "call 1: resnet50_infer channels-last, eager" images_per_s call1/pytorch-infer.json call1/infer.json '/eager/'
  pair "call 1: resnet50_infer channels-last, CUDA graph (against python's eager)" images_per_s call1/pytorch-infer.json call1/infer.json '/graph/' '/graph/=/eager/'
  pair "call 1: resnet50_train amp_fp16, eager" images_per_s call1/pytorch-train-amp-fp16.json call1/train-amp-fp16.json '^resnet50_train/'
  pair "call 1: resnet50_train_graph amp_fp16 (against python's eager)" images_per_s call1/pytorch-train-amp-fp16.json call1/train-amp-fp16.json '^resnet50_train_graph/' '^resnet50_train_graph/=resnet50_train/'
  pair "call 2: resnet50_infer batch 256 again" images_per_s call2/pytorch-infer-256.json call2/infer-256.json '/eager/'
  pair "call 5: bert_train seq 128" samples_per_s call5/pytorch-bert-128.json call5/bert-128.json '.'
  pair "call 5: bert_train seq 512" samples_per_s call5/pytorch-bert-512.json call5/bert-512.json '.'
  pair "call 6: bert_train AMP (amp_fp16 on the device-side scaler)" samples_per_s call6/pytorch-bert-amp.json call6/bert-amp.json '.'
  for d in bf16 fp16; do
    pair "call 6: llama_decode $d 128 + 128, eager" tokens_per_s,token_ms_median,ttft_ms call6/pytorch-llama-$d-128.json call6/llama-$d-128.json '/eager/'
    pair "call 6: llama_decode $d 128 + 128, CUDA graph (against python's eager)" tokens_per_s,token_ms_median,ttft_ms call6/pytorch-llama-$d-128.json call6/llama-$d-128.json '/graph/' '/graph/=/eager/'
  done
  pair "call 8: llama_decode bf16 1024 + 256, eager" tokens_per_s,token_ms_median,ttft_ms call8/pytorch-llama-bf16-1024.json call8/llama-bf16-1024.json '/eager/'
  pair "call 8: llama_decode bf16 1024 + 256, CUDA graph (against python's eager)" tokens_per_s,token_ms_median,ttft_ms call8/pytorch-llama-bf16-1024.json call8/llama-bf16-1024.json '/graph/' '/graph/=/eager/'
  pair "call 9: bert_train seq 512, before the ATen-linear fix" samples_per_s call9/pytorch-bert-512.json call9/bert-512.json '.'
  pair "call 9: resnet50_infer NCHW and channels-last batch 64, eager" images_per_s call9/pytorch-infer.json call9/infer.json '/eager/'
  pair "call 9: resnet50_infer NCHW and channels-last batch 64, CUDA graph (against python's eager)" images_per_s call9/pytorch-infer.json call9/infer.json '/graph/' '/graph/=/eager/'
  pair "call 10: llama_decode fp16 1024 + 256, eager" tokens_per_s,token_ms_median,ttft_ms call10/pytorch-llama-fp16-1024.json call10/llama-fp16-1024.json '/eager/'
  pair "call 10: llama_decode fp16 1024 + 256, CUDA graph (against python's eager)" tokens_per_s,token_ms_median,ttft_ms call10/pytorch-llama-fp16-1024.json call10/llama-fp16-1024.json '/graph/' '/graph/=/eager/'
  pair "call 10: llama_decode bf16 1024 + 256 batch 32, CUDA graph (against python's eager)" tokens_per_s,token_ms_median,ttft_ms call10/pytorch-llama-bf16-1024-32.json call10/llama-bf16-1024-graph.json '/graph/' '/graph/=/eager/'
  pair "call 11 against call 10's python: llama_decode fp16 1024 + 256 batch 32, CUDA graph" tokens_per_s,token_ms_median,ttft_ms call10/pytorch-llama-fp16-1024.json call11/llama-fp16-1024-graph-32.json '/graph/' '/graph/=/eager/'
  pair "call 12: bert_train seq 512, after the ATen-linear fix" samples_per_s call12/pytorch-bert-512.json call12/bert-512.json '.'
  pair "call 12: bert_train seq 128, after the fix" samples_per_s call12/pytorch-bert-128.json call12/bert-128.json '.'
  pair "call 13 against call 12's python: bert_train amp_bf16/128/64" samples_per_s call12/pytorch-bert-128.json call13/bert-128-bf16-64.json '.'
  pair "call 12: transformer_fwd sdpa batch 32, after the fix" peak_allocated_bytes call12/pytorch-transformer-sdpa-32.json call12/transformer-sdpa-32.json '.'
  pair "call 14: resnet50_infer eager batch 64 and 256, peaks after 8132d6e (bottleneck one layer a statement)" images_per_s,peak_allocated_bytes call14/pytorch-infer-peaks.json call14/infer-peaks.json '.'
  pair "call 16: resnet50_infer channels-last batch 64, eager, five processes a side (tools/merge-processes)" images_per_s,peak_allocated_bytes call16/pytorch-merged.json call16/cubench-merged.json '.'
  pair "call 17: llama_decode bf16 1024 + 256 batch 32, eager" tokens_per_s,peak_allocated_bytes call17/pytorch-llama-bf16-1024.json call17/llama-bf16-1024.json '/eager/'
  pair "call 17: llama_decode bf16 1024 + 256 batch 8, CUDA graph (against python's eager)" tokens_per_s,token_ms_median call17/pytorch-llama-bf16-1024.json call17/llama-bf16-1024.json '/graph/' '/graph/=/eager/'
} > compare.md
