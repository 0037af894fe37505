#!/usr/bin/env bash
# The test command: installs what the tests need (NVRTC from PyPI when none is
# found), then runs the formatting check, clippy with warnings denied, and the
# whole CPU suite with doctests. GPU tests are reported as ignored here.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/nvrtc-env.sh
echo "NVRTC: ${CUDAKIT_LIBNVRTC:-(system search)}"
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
