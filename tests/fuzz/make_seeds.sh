#!/usr/bin/env bash
# Writes the binary seed inputs of the file-reader fuzz targets (corpus/idx_reader and
# corpus/cifar10_reader) in the layout their .cpp files describe: parts, each a 4-byte big-endian
# length and the file's bytes. Run it again only to change the seeds; the JSON targets' seeds are
# plain files.
set -euo pipefail
cd "$(dirname "$0")"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

be32() {
    printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) \
        $(($1 >> 8 & 255)) $(($1 & 255)))"
}
# `count` bytes of value `byte` (0..255).
repeat() {
    head -c "$1" /dev/zero | tr '\0' "$(printf '\\%03o' "$2")"
}
# Stdin as one part: its length, then its bytes.
part() {
    local bytes="$scratch/part"
    cat >"$bytes"
    be32 "$(stat -c %s "$bytes")"
    cat "$bytes"
}
idx_images() {  # count rows cols
    be32 0x00000803; be32 "$1"; be32 "$2"; be32 "$3"
    repeat $(($1 * $2 * $3)) 156
}
idx_labels() {  # label...
    be32 0x00000801; be32 $#
    local label
    for label in "$@"; do printf "$(printf '\\x%02x' "$label")"; done
}
cifar_records() {  # label...
    local label
    for label in "$@"; do
        printf "$(printf '\\x%02x' "$label")"
        repeat 3072 $((label * 25))
    done
}

idx=corpus/idx_reader
rm -rf "$idx" && mkdir -p "$idx"
{ idx_images 3 4 4 | part; idx_labels 0 9 5 | part; } >"$idx/plain"
{ idx_images 3 4 4 | gzip -9 -n | part; idx_labels 0 9 5 | gzip -9 -n | part; } >"$idx/gzip"
{ idx_images 2 28 28 | gzip -9 -n | part; idx_labels 7 1 | part; } >"$idx/mnist-sized-mixed"
{ idx_images 1 2 2 | part; idx_labels 10 | part; } >"$idx/label-out-of-range"
{ idx_images 3 4 4 | head -c 40 | part; idx_labels 0 9 5 | part; } >"$idx/truncated-images"
{ idx_labels 0 9 5 | part; idx_images 3 4 4 | part; } >"$idx/swapped"
{ idx_images 3 4 4 | gzip -9 -n | head -c 30 | part; idx_labels 0 9 5 | part; } >"$idx/cut-gzip"

cifar=corpus/cifar10_reader
rm -rf "$cifar" && mkdir -p "$cifar"
{ printf '\x00'; for label in 0 1 2 3 4 5; do cifar_records "$label" | part; done; } >"$cifar/flat"
{ printf '\x01'; for label in 9 8 7 6 5; do cifar_records "$label" | part; done
  cifar_records 1 2 | part; } >"$cifar/subfolder"
{ printf '\x00'; for label in 0 1 2 3 4; do cifar_records "$label" | part; done
  cifar_records 10 | part; } >"$cifar/label-out-of-range"
{ printf '\x00'; for label in 0 1 2 3 4; do cifar_records "$label" | part; done; } >"$cifar/no-test-batch"
{ printf '\x00'; for label in 0 1 2 3; do cifar_records "$label" | part; done
  cifar_records 4 | head -c 3072 | part; cifar_records 5 | part; } >"$cifar/short-record"

echo "seeds: $(ls "$idx" | wc -l) in $idx, $(ls "$cifar" | wc -l) in $cifar"
