#!/usr/bin/env bash
# scalelab-cli bench started by mpirun as 2 processes of 1 CPU device each (labelled mpi):
#  1. bench train with --bind-to none: process 0 prints the row across processes (with time
#     between processes) and, beside it, the same 2 devices in one process;
#  2. bench train bound to a core each (mpirun's default): the row, and why the anchor is not
#     measured;
#  3. processes started with different flags: exit 2, the flags named once;
#  4. bench allreduce across processes prints its rows once; on GPUs it is refused.
# Usage: bench_across_processes.sh MPIEXEC SCALELAB_CLI
set -uo pipefail
mpiexec=$1
cli=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$work/out"; exit 1; }
bench=("$cli" bench train --model mlp --threads 1 --devices 1 --windows 2 --images 512)

"$mpiexec" -np 2 --oversubscribe --bind-to none "${bench[@]}" --batch 32 --json > "$work/out" 2>&1 ||
    fail "bench train exited $?"
[ "$(grep -c '^{' "$work/out")" = 2 ] || fail "not 2 rows"
grep '"processes":2' "$work/out" | grep -q '"devices":1,' || fail "no row across processes"
grep '"processes":2' "$work/out" | grep -Eq '"between_processes_ms":[0-9.]*[1-9]' ||
    fail "no time between processes"
grep '"processes":1' "$work/out" | grep -q '"devices":2,' || fail "no one-process anchor"

"$mpiexec" -np 2 --oversubscribe --bind-to core "${bench[@]}" --batch 32 > "$work/out" 2>&1 ||
    fail "bench train (bound) exited $?"
grep -Eq '^mlp +32 +1 +2x1 ' "$work/out" || fail "no 2x1 row"
grep -q "needs 2 cores and process 0 may use 1" "$work/out" || fail "the anchor's absence unexplained"

"$mpiexec" --oversubscribe -np 1 "${bench[@]}" --batch 32 : -np 1 "${bench[@]}" --batch 64 > "$work/out" 2>&1
code=$?
[ "$code" = 2 ] || fail "different flags exited $code, not 2"
[ "$(grep -c 'not started with the same flags: process 1 (host .*) with .*--batch 64' \
    "$work/out")" = 1 ] || fail "the difference not named once"

"$mpiexec" -np 2 --oversubscribe "$cli" bench allreduce --devices 1 --sizes 4K,64K --iters 5 \
    > "$work/out" 2>&1 || fail "bench allreduce exited $?"
[ "$(grep -Ec '^ +2 +(4096|65536) ' "$work/out")" = 2 ] || fail "allreduce rows not printed once"

"$mpiexec" -np 2 --oversubscribe "$cli" bench allreduce --backend cuda > "$work/out" 2>&1
code=$?
[ "$code" = 2 ] || fail "GPU allreduce across processes exited $code, not 2"
grep -q "measures the GPUs of one process" "$work/out" || fail "GPU refusal not said"
echo "ok"
