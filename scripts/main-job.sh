#!/usr/bin/env bash
# The main job on any GPU machine, including one with only the NVIDIA driver
# (no CUDA toolkit, no NVRTC wheel): provisions NVRTC into the ignored
# folder .deps/python when none is found (scripts/nvrtc-env.sh, from PyPI),
# then runs `cudakit matmul` with the given arguments:
#
#   scripts/main-job.sh                      # 2048x2048 f32, verified
#   scripts/main-job.sh --dtype bf16 --size 4096
#
# The loader also finds .deps/python by itself (above the executable, and in
# the workspace it was built in), so after the first run a plain
# `cargo run --release -p cudakit-cli -- matmul` works too.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/nvrtc-env.sh
exec cargo run --release -p cudakit-cli -- matmul "$@"
