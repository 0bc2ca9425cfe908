#!/usr/bin/env bash
# Installs the Debian 12 packages ScaleLab needs to build, test and run (CONTRIBUTING.md lists what
# each is for). Safe to run again: when all are installed it touches neither apt nor the network.
set -euo pipefail

packages=(
    build-essential cmake ninja-build
    qt6-base-dev libqt6opengl6-dev qt6-charts-dev qt6-svg-dev libqt6sql6-sqlite
    libdnnl-dev ocl-icd-opencl-dev libspdlog-dev nlohmann-json3-dev zlib1g-dev libboost-dev
    openmpi-bin libopenmpi-dev
    python3-numpy python3-torch python3-pyflakes libopenblas0-openmp libblas3 liblapack3
    dataset-fashion-mnist
    xvfb xauth
    clang libclang-rt-dev libomp-dev lld
)

# --list: the packages, one a line (tests/scripts/check_setup_packages.py reads them).
if [ "${1:-}" = --list ]; then
    printf '%s\n' "${packages[@]}"
    exit 0
fi

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all ${#packages[@]} packages are installed"
    exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "setup: missing ${missing[*]}; run this script as root or install sudo" >&2
        exit 1
    fi
    as_root=(sudo)
fi

echo "setup: installing ${missing[*]}"
"${as_root[@]}" apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
