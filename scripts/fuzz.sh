#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (the asan preset: clang, AddressSanitizer with leak
# detection, UndefinedBehaviorSanitizer, the libraries instrumented for coverage) and runs each
# for SECONDS (default 60) over a working copy of its seed corpus, so that what a run finds never
# lands in the repository; as many targets at a time as there are cores. Prints one line per
# target: executions, executions per second, the coverage libFuzzer reports at the end (cov: code
# edges, ft: features) and the corpus size. Exits 1 if any target crashed, leaked, broke a
# sanitizer's rule or a promise its .cpp checks, went over 2 GB or spent more than 10 s on one
# input; that input and the log are then in <build>/fuzz-findings/<target>/.
#
#   scripts/fuzz.sh [SECONDS]      SCALELAB_FUZZ_JOBS=N runs N targets at a time (default: cores)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
jobs=${SCALELAB_FUZZ_JOBS:-$(nproc)}
build=build/asan
targets=(idx_reader cifar10_reader run_spec_json lesson_json run_import run_store printable_text)

# The number after "NAME:" in libFuzzer's final statistics, or after "NAME: " in its last
# status line ("#70337 DONE cov: 323 ft: 483 corp: 7/446b ..."); "?" when absent.
final_stat() { grep -o "stat::$1: *[0-9]*" "$2" | grep -o '[0-9]*$' || echo '?'; }
status_field() {
    grep ' cov: ' "$2" | tail -n 1 | grep -o "$1: [0-9a-zA-Z/]*" | cut -d' ' -f2 || echo '?'
}

# Runs one target and writes libFuzzer's exit status to <findings>/status.
fuzz_target() {
    local target=$1
    local corpus="$build/fuzz-corpus/$target" findings="$build/fuzz-findings/$target"
    rm -rf "$corpus" "$findings"
    mkdir -p "$corpus" "$findings"
    cp tests/fuzz/corpus/"$target"/* "$corpus"/
    local options=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10
                   -print_final_stats=1 -artifact_prefix="$findings/")
    case $target in
        lesson_json)
            cp resources/lessons/*.json "$corpus"/  # the shipped lessons are seeds too
            options+=(-dict=tests/fuzz/json.dict) ;;
        run_spec_json | run_import)
            options+=(-dict=tests/fuzz/json.dict) ;;
    esac
    local status=0
    "$build/tests/fuzz/fuzz_$target" "${options[@]}" "$corpus" >"$findings/fuzz.log" 2>&1 ||
        status=$?
    echo "$status" >"$findings/status"
}

bash scripts/setup.sh
cmake --preset asan
cmake --build --preset asan --target fuzz_targets

export UBSAN_OPTIONS=print_stacktrace=1
for target in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    fuzz_target "$target" &
done
wait

failed=0
for target in "${targets[@]}"; do
    status=ok
    if [ "$(cat "$build/fuzz-findings/$target/status")" != 0 ]; then
        status=FAILED
        failed=1
    fi
    log="$build/fuzz-findings/$target/fuzz.log"
    printf '%-15s %-6s %10s executions %6s exec/s  cov %5s  ft %6s  corpus %s\n' "$target" \
        "$status" "$(final_stat number_of_executed_units "$log")" \
        "$(final_stat average_exec_per_sec "$log")" "$(status_field cov "$log")" \
        "$(status_field ft "$log")" "$(status_field corp "$log")"
    if [ "$status" = FAILED ]; then
        grep -E -A12 '==[0-9]+== ?ERROR|runtime error|broken promise|ALARM' "$log" | head -n 40 ||
            tail -n 40 "$log"
        echo "fuzz: $target failed; the input and the log are in $build/fuzz-findings/$target/"
    fi
done
exit "$failed"
