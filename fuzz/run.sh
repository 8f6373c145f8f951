#!/usr/bin/env bash
# fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Builds the libFuzzer targets (the `fuzz` preset, clang + ASan + UBSan, into
# build-fuzz/), rebuilds the seed corpora from the test data (fuzz/make_seeds.py),
# then runs each target (all of fuzz/CMakeLists.txt's when none is named) for
# SECONDS_PER_TARGET (default 60) under `nice -n 19`, FUZZ_JOBS targets at a time
# (default 1), and prints per target: seconds, executions, executions/s, corpus
# size and findings. State kept in build-fuzz/ between runs:
#   corpus/<target>/    the growing corpus (seeds are read from seeds/<target>/)
#   findings/<target>/  crash-*, leak-*, timeout-*, oom-* inputs (libFuzzer stops a
#                       target at its first finding; replay one with
#                       build-fuzz/fuzz/fuzz_<target> FILE)
#   logs/<target>.log   libFuzzer's output of the last run
#   totals.tsv          one line per target run: date, target, seconds, executions,
#                       findings; the summary adds them up per target
#   edit-outputs/       a sample of what the edit target produced (inputs and
#                       edited files), checked with readelf by tests/e2e/test_fuzz_outputs.py
# Exit status 1 when any target found something in this run.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
all_targets=(zip metadata elf fatbin edit symbol)
targets=("$@")
((${#targets[@]})) || targets=("${all_targets[@]}")
jobs=${FUZZ_JOBS:-1}
build=build-fuzz

declare -A max_len=([zip]=262144 [metadata]=8192 [elf]=131072 [fatbin]=65536 [edit]=131072 [symbol]=1024)

cmake --preset fuzz >/dev/null
nice -n 19 cmake --build --preset fuzz -j 2 --target "${targets[@]/#/fuzz_}" >/dev/null
rm -rf "$build/seeds"
python3 fuzz/make_seeds.py "$build/seeds"
mkdir -p "$build/logs" "$build/edit-outputs"

run_target() {
  local target=$1
  mkdir -p "$build/corpus/$target" "$build/findings/$target" "$build/seeds/$target"
  local before
  before=$(find "$build/findings/$target" -type f | wc -l)
  local started=$SECONDS
  WHEELFIX_FUZZ_SAVE=$PWD/$build/edit-outputs \
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1 \
    nice -n 19 "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len="${max_len[$target]}" \
      -timeout=20 -rss_limit_mb=3072 -print_final_stats=1 \
      -artifact_prefix="$build/findings/$target/" "$build/corpus/$target" "$build/seeds/$target" \
      >"$build/logs/$target.log" 2>&1 || true
  local took=$((SECONDS - started))
  local executions
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/logs/$target.log" | tail -1)
  local after
  after=$(find "$build/findings/$target" -type f | wc -l)
  printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "$took" "${executions:-0}" "$((after - before))" \
    >>"$build/totals.tsv"
}

running=0
for target in "${targets[@]}"; do
  run_target "$target" &
  running=$((running + 1))
  if ((running >= jobs)); then wait -n || true; running=$((running - 1)); fi
done
wait

found=0
printf '\n%-9s %8s %12s %9s %7s %9s   %s\n' target seconds executions exec/s corpus findings "totals over all runs (s, executions, findings)"
for target in "${targets[@]}"; do
  line=$(grep -P "\t$target\t" "$build/totals.tsv" | tail -1)
  IFS=$'\t' read -r _ _ took executions new <<<"$line"
  corpus=$(find "$build/corpus/$target" -type f | wc -l)
  totals=$(awk -F'\t' -v t="$target" '$2 == t {s += $3; e += $4; f += $5} END {printf "%d s, %d, %d", s, e, f}' "$build/totals.tsv")
  printf '%-9s %8s %12s %9s %7s %9s   %s\n' "$target" "$took" "$executions" "$((executions / (took > 0 ? took : 1)))" \
    "$corpus" "$new" "$totals"
  if ((new > 0)); then
    found=1
    grep -m1 -E "ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error|invariant broken" \
      "$build/logs/$target.log" | sed 's/^/            /' || true
  fi
done
exit $found
