# Sourced by the issue-18 plans of the second session: one deadline for the call, cubench's rows
# and PyTorch eager's each into $OUT/<name>.json (5 repetitions each side: tools/compare's U test),
# and a clock/power log for the whole call (clocks.csv; the python rows read no clock under load).
start=$(date +%s)
DEADLINE=${DEADLINE:-585}
left() { echo $((DEADLINE - ($(date +%s) - start))); }
at() { echo "$(( $(date +%s) - start )) s ($(date +%H:%M:%S))"; }
bin=build/cuda-13.0/cubench
tests=build/cuda-13.0/tests
bench() {  # name seconds cubench-args...
  local name=$1 secs=$2; shift 2
  [ "$(left)" -lt "$secs" ] && secs=$(left)
  [ "$secs" -le 5 ] && { echo "== $name: not run, deadline"; return; }
  echo "== $name: start at $(at)"
  timeout "$secs" $bin --benchmark_out="$OUT/$name.json" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=false "$@" >"$OUT/$name.txt" 2>&1
  echo "== $name: exit $? at $(at)"
  grep -E "manual_time_median|ERROR|not supported" "$OUT/$name.txt" | cut -c1-150
}
python_ref() {  # name seconds filter [torch_reference args...]
  local name=$1 secs=$2 filter=$3; shift 3
  [ "$(left)" -lt "$secs" ] && secs=$(left)
  [ "$secs" -le 5 ] && { echo "== $name: not run, deadline"; return; }
  echo "== $name: start at $(at)"
  PYTHONUNBUFFERED=1 timeout "$secs" python3 tools/torch_reference.py --filter "$filter" \
    --repetitions 5 --min-time 0 "$@" --out "$OUT/$name.json" >"$OUT/$name.txt" 2>&1
  echo "== $name: exit $? at $(at)"; grep -E "median|rror" "$OUT/$name.txt" | cut -c1-150
}
clocks() {  # the SM clock, power and throttle reasons every 200 ms until the call ends
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 200 >"$OUT/clocks.csv" 2>&1 &
  clocks_pid=$!
}
finish() {
  [ -n "${clocks_pid:-}" ] && kill "$clocks_pid" 2>/dev/null
  echo "total $(at)"
  cd "$OUT" && tar czf session.tgz --remove-files *.json *.txt *.log *.csv 2>/dev/null; ls
}
