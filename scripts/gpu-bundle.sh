#!/usr/bin/env bash
# Builds every test binary (and the cudakit CLI, when present) in release,
# strips them, and puts them with a runner into bundle/ (ignored by git), to
# be carried to a GPU machine that has no cargo:
#
#   scripts/gpu-bundle.sh && (on the GPU machine) bash bundle/run.sh
#
# BUNDLE_DIR=path (relative to the repository root) builds elsewhere than
# bundle/, so that two people preparing runs from one checkout do not
# replace each other's bundle.
#
# bundle/run.sh runs every binary with --include-ignored, prints
# `N passed, N failed, N not run`, runs every example of
# crates/cudakit/examples (shipped as examples.tar.xz) and checks its exit
# code and success line (`examples: N passed, N failed, N not run`), then runs them again under
# `compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1`
# (tests named `fault_*`, which provoke device faults on purpose, and
# `large_*`, 4096-cubed products too slow under memcheck, are skipped there) and prints the sanitizer's verdict. It exits non-zero on any
# failure.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BUNDLE_DIR:-bundle}
rm -rf "$out"
mkdir -p "$out/bin" "$out/stub"

# Test binaries, release.
cargo test --workspace --release --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, os, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m.get("profile", {}).get("test"):
        t = m["target"]
        pkg = os.path.basename(os.path.dirname(m["manifest_path"]))
        print(m["executable"], pkg + "-" + t["name"])
' | while read -r exe name; do
    cp "$exe" "$out/bin/$name"
done

# Benchmarks (harness = false binaries).
cargo bench -p cudakit-tests --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "bench" in m["target"]["kind"]:
        print(m["executable"], m["target"]["name"])
' | while read -r exe name; do
    cp "$exe" "$out/bench-$name"
done

# The CLI, if the workspace has it.
if cargo metadata --no-deps --format-version 1 | grep -q '"name":"cudakit-cli"'; then
    cargo build --release -p cudakit-cli
    cp "${CARGO_TARGET_DIR:-target}/release/cudakit" "$out/bin-cudakit"
fi

# The examples (crates/cudakit/examples), release and stripped, as one
# xz-compressed tar: they share most of their code, so about 8 MiB of
# binaries pack into about 1 MiB (the bundle must stay under 64 MiB).
ex_tmp=$(mktemp -d)
mkdir -p "$ex_tmp/examples"
cargo build --release -p cudakit --examples --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "example" in m["target"]["kind"]:
        print(m["executable"], m["target"]["name"])
' | while read -r exe name; do
    cp "$exe" "$ex_tmp/examples/$name"
done
strip "$ex_tmp"/examples/*
tar -cJf "$out/examples.tar.xz" -C "$ex_tmp" examples
echo "examples: $(ls "$ex_tmp/examples" | wc -l) binaries, $(du -sh "$ex_tmp/examples" | cut -f1) stripped, $(du -h "$out/examples.tar.xz" | cut -f1) packed"
rm -rf "$ex_tmp"

# Prebuilt stand-in libcuda for the loader tests (no cargo on the GPU machine).
for features in "" omit-mem-alloc omit-param-info omit-green; do
    tag=${features:-default}
    cargo build --quiet --release --manifest-path tests/stub-libcuda/Cargo.toml \
        --target-dir target/stub-$tag ${features:+--features $features}
    mkdir -p "$out/stub/stub-$tag/debug"
    cp target/stub-$tag/release/libstub_libcuda.so "$out/stub/stub-$tag/debug/"
done
# And the stand-in NVTX tool (an injection library) for the NVTX tests.
cargo build --quiet --release --manifest-path tests/stub-nvtx/Cargo.toml --target-dir target/stub-nvtx
mkdir -p "$out/stub/stub-nvtx/debug"
cp target/stub-nvtx/release/libstub_nvtx.so "$out/stub/stub-nvtx/debug/"

strip "$out"/bin/* "$out"/bench-* 2>/dev/null || true
[ -e "$out/bin-cudakit" ] && strip "$out/bin-cudakit"
# The test binaries travel packed (about 70 MiB stripped, a quarter of that
# packed), so that the bundle stays inside the device tool's 64 MiB; run.sh
# unpacks them into bin/ on first use.
tar -cf - -C "$out" bin | xz -T0 -6 > "$out/bin.tar.xz"
echo "test binaries: $(du -sh "$out/bin" | cut -f1) stripped, $(du -h "$out/bin.tar.xz" | cut -f1) packed"
rm -rf "$out/bin"
cp scripts/gpu-run.sh "$out/run.sh"
cp scripts/ncu_table.py scripts/profile-kernels.txt "$out/"
# Driver probes (tests/probes/README.md), built with nvcc on the GPU machine.
mkdir -p "$out/probe" && cp tests/probes/*.cu tests/probes/README.md "$out/probe/"
du -sh "$out"
tar -tJf "$out/bin.tar.xz" | sed -n "s|^bin/||p" | sort
