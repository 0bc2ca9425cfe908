#!/usr/bin/env bash
# One process of a run across 2 MPI processes killed mid-run (labelled mpi): no process hangs,
# and the store keeps what happened.
#  1. mpirun --enable-recovery (the others keep running): process 0 ends within the collective
#     timeout, exits 1, names process 1 and its host, and the store shows the run failed;
#  2. plain mpirun (it ends the others with SIGTERM): process 0 stops at once, names process 1
#     (the roll call after the signal), and the store shows the run failed;
#  3. the job cancelled (SIGTERM to mpirun, which passes it on to every process): the store
#     shows the run cancelled, not failed and not running.
# Usage: process_killed.sh MPIEXEC SCALELAB_CLI
set -uo pipefail
mpiexec=$1
cli=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$work/out"; exit 1; }
timeout_s=4

# Each process's pid and exit code, by rank, for the test to kill and check. The launcher's
# SIGTERM reaches scalelab-cli itself (mpirun signals the process group); the wrapper outlives
# it, so that mpirun keeps the output open until scalelab-cli is done.
cat > "$work/process.sh" <<WRAP
#!/usr/bin/env bash
rank=\$OMPI_COMM_WORLD_RANK
"$cli" "\$@" &
child=\$!
echo \$child > "$work/pid.\$rank"
trap ':' TERM INT
while :; do
    wait \$child
    code=\$?
    kill -0 \$child 2>/dev/null || break
done
echo \$code > "$work/rc.\$rank"
WRAP
chmod +x "$work/process.sh"

# Starts 2 processes training for minutes, kills VICTIM (process-1: SIGKILL to process 1;
# launcher: SIGTERM to mpirun) once process 0 has trained an epoch, and waits for mpirun; prints
# the seconds from the kill to the end. Usage: run_and_kill VICTIM [MPIRUN FLAGS]
run_and_kill() {
    local victim=$1
    shift
    rm -f "$work"/pid.* "$work"/rc.* "$work/runs.sqlite"
    "$mpiexec" -np 2 --oversubscribe "$@" "$work/process.sh" train --dataset synthetic \
        --model mlp --devices 1 --epochs 2000 --threads 1 --collective-timeout-s "$timeout_s" \
        --store "$work/runs.sqlite" > "$work/out" 2>&1 &
    local launcher=$!
    for _ in $(seq 600); do
        grep -q "epoch 1/2000 " "$work/out" 2>/dev/null && [ -s "$work/pid.1" ] && break
        sleep 0.1
    done
    [ -s "$work/pid.1" ] || fail "process 1 did not start"
    if [ "$victim" = launcher ]; then kill -TERM "$launcher"; else kill -9 "$(cat "$work/pid.1")"; fi
    local killed=$SECONDS
    # No hang: mpirun must be gone well within twice the timeout.
    for _ in $(seq $((timeout_s * 20))); do
        kill -0 "$launcher" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$launcher" 2>/dev/null; then
        kill -9 "$launcher"
        fail "still running $((timeout_s * 2)) s after process 1 was killed"
    fi
    wait "$launcher"
    echo $((SECONDS - killed))
}

state_of_run() {
    "$cli" runs show 1 --store "$work/runs.sqlite" 2>&1 | sed -n 's/^ *state: *//p'
}

took=$(run_and_kill process-1 --enable-recovery) || { echo "$took"; exit 1; }
[ "$(cat "$work/rc.0" 2>/dev/null)" = 1 ] || fail "process 0 exited $(cat "$work/rc.0"), not 1"
grep -q "process 1 (host .*) no longer answers" "$work/out" || fail "process 1 not named"
[ "$(state_of_run)" = failed ] || fail "the stored run is $(state_of_run), not failed"
echo "recovery: process 0 ended ${took} s after the kill (timeout ${timeout_s} s)"

took=$(run_and_kill process-1) || { echo "$took"; exit 1; }
[ "$(state_of_run)" = failed ] || fail "the stored run is $(state_of_run), not failed"
grep -q "process 1 (host .*) no longer answers" "$work/out" || fail "process 1 not named"
echo "plain mpirun: ended ${took} s after the kill"

took=$(run_and_kill launcher) || { echo "$took"; exit 1; }
[ "$(state_of_run)" = cancelled ] || fail "the stored run is $(state_of_run), not cancelled"
echo "job cancelled: ended ${took} s after SIGTERM"
echo "ok"
