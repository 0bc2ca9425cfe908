#!/usr/bin/env bash
# Installs what is missing, builds the release preset and runs the whole test suite, the
# `slow` tests included. Extra arguments go to ctest (e.g. scripts/test.sh -LE slow).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset release
cmake --build --preset release
ctest --preset release --parallel "$(nproc)" "$@"
