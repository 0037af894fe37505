#!/usr/bin/env bash
# The test command: installs what the tests need (NVRTC and CUDA's headers
# from PyPI when none are found), then runs the formatting check, clippy with warnings denied, the
# whole CPU suite with doctests (which also compiles the examples), the
# packaging of the two library crates and the docs with warnings denied. GPU
# tests are reported as ignored here.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/nvrtc-env.sh
echo "NVRTC: ${CUDAKIT_LIBNVRTC:-(system search)}"
# nvrtc-env.sh has installed CUDA's headers when no toolkit has them: the
# cooperative-groups compile test must then run, not say NOT RUN.
export CUDAKIT_REQUIRE_CUDA_HEADERS=1
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
# The two library crates, packaged together so that cudakit is verified
# against this cuda-sys (not the registry's crate of that name), each built
# on its own outside the workspace. Offline: their dependencies are in
# cargo's cache once the test run above has fetched them (the CI machine may
# have no network); --allow-dirty for runs from a working tree with edits.
cargo package -p cuda-sys -p cudakit --allow-dirty --offline --locked
# The API docs, with rustdoc's warnings (broken intra-doc links, missing
# docs in the library crates, which deny missing_docs) turned into errors.
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --locked
