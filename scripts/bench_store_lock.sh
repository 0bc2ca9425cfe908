#!/usr/bin/env bash
# How much a training is held up while another program holds the run store's write lock: trains
# cnn for 3 epochs (2 threads) on a fresh store, then again while a second connection holds
# BEGIN IMMEDIATE for 20 s from 2 s after the start, and prints both runs' per-epoch images/s and
# the steps the second run recorded. Run on an idle machine after a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=build/release/app/scalelab-cli
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

train() { "$cli" train --model cnn --epochs 3 --threads 2 --store "$dir/runs.sqlite" --name "$1" 2>&1 |
          grep -E '^epoch' | sed -E "s/^epoch ([0-9]+).* ([0-9]+) img\/s.*/$1: epoch \1 \2 images\/s/"; }

train unlocked
python3 - "$dir/runs.sqlite" <<'PY' &
import sqlite3, sys, time
time.sleep(2)
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN IMMEDIATE")
time.sleep(20)
db.execute("ROLLBACK")
PY
train locked
wait
steps=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(
  \"select count(*) from metrics m join runs r on r.id = m.run_id where r.name = 'locked' and m.name = 'train_loss'\").fetchone()[0])" "$dir/runs.sqlite")
echo "locked: $steps steps recorded"
