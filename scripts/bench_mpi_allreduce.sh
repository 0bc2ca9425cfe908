#!/usr/bin/env bash
# ScaleLab's all-reduce between 2 MPI processes (1 CPU device each) against Open MPI's own
# blocking MPI_Allreduce of the same sizes, measured in turns (ScaleLab, MPI, ScaleLab, ...) so
# that both see the same machine; prints each size's median busbw and the ratio.
# Usage: scripts/bench_mpi_allreduce.sh [ROUNDS] (default 5), from the repository's root after
# building the release preset. Root and more processes than cores are allowed for this script's
# own runs (a container, a laptop).
set -euo pipefail
rounds=${1:-5}
build=build/release
sizes=(1048576 16777216 67108864)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

sizes_flag=$(IFS=,; echo "${sizes[*]}")
for ((round = 1; round <= rounds; round++)); do
    mpirun -np 2 --oversubscribe "$build/app/scalelab-cli" bench allreduce --devices 1 \
        --sizes "$sizes_flag" --json >> "$out/scalelab" 2>/dev/null
    mpirun -np 2 --oversubscribe "$build/engine/scalelab-mpi-allreduce-anchor" "${sizes[@]}" \
        >> "$out/mpi" 2>/dev/null
done

python3 - "$out/scalelab" "$out/mpi" <<'PY'
import json, statistics, sys
scalelab, mpi = {}, {}
for line in open(sys.argv[1]):
    row = json.loads(line)
    scalelab.setdefault(row["bytes"], []).append(row["busbw_GBs"])
for line in open(sys.argv[2]):
    fields = line.split()
    if len(fields) == 5 and fields[0].isdigit():
        mpi.setdefault(int(fields[1]), []).append(float(fields[4]))
print(f"{'bytes':>10} {'ScaleLab busbw GB/s':>22} {'MPI_Allreduce GB/s':>20} {'ratio':>6}")
for size in sorted(scalelab):
    ours, theirs = statistics.median(scalelab[size]), statistics.median(mpi[size])
    print(f"{size:>10} {ours:>12.2f} ({min(scalelab[size]):.2f}-{max(scalelab[size]):.2f})"
          f" {theirs:>10.2f} ({min(mpi[size]):.2f}-{max(mpi[size]):.2f}) {ours / theirs:>6.2f}")
PY
