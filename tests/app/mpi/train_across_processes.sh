#!/usr/bin/env bash
# scalelab-cli train started by mpirun as 2 processes of 1 CPU device each (labelled mpi):
#  1. one run of 2 devices, printed and recorded once, by process 0, as "2 processes x 1 device",
#     with the all-reduce's time between processes in the epoch's breakdown;
#  2. processes started with different batches: exit 2, the field and the processes named once.
# Usage: train_across_processes.sh MPIEXEC SCALELAB_CLI
set -uo pipefail
mpiexec=$1
cli=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$work/out"; exit 1; }
run=("$cli" train --dataset synthetic --model mlp --devices 1 --epochs 1 --threads 1)

"$mpiexec" -np 2 --oversubscribe "${run[@]}" --batch 32 --store "$work/runs.sqlite" > "$work/out" 2>&1 ||
    fail "2 processes exited $?"
grep -q "^2 processes x 1 device on hosts " "$work/out" || fail "no layout line"
grep -Eq "all-reduce between processes [0-9.]*[1-9]" "$work/out" || fail "no time between processes"
[ "$(grep -c '^recorded as run 1 ' "$work/out")" = 1 ] || fail "not recorded exactly once"
"$cli" runs list --store "$work/runs.sqlite" > "$work/list" 2>&1 || fail "runs list"
# The run as a whole: 2 devices, global batch 64.
grep -Eq '^ +1 +run 1 +finished +mlp +2 +64 ' "$work/list" || { cat "$work/list"; fail "stored run"; }

"$mpiexec" --oversubscribe -np 1 "${run[@]}" --batch 32 --no-store : -np 1 "${run[@]}" --batch 16 \
    --no-store \
    > "$work/out" 2>&1
code=$?
[ "$code" = 2 ] || fail "different batches exited $code, not 2"
[ "$(grep -c 'process 1 (host .*) was started with batch 16, process 0 (host .*) with batch 32' \
    "$work/out")" = 1 ] || fail "the difference not named once"
echo "ok"
