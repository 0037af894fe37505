#!/usr/bin/env bash
# The hardware-suite runner (copied into bundle/ as run.sh by
# scripts/gpu-bundle.sh). Usage on a GPU machine: bash bundle/run.sh
# Environment: SANITIZE=0 skips the sanitizer pass; FILTER=substring runs
# only matching tests; LOG_DIR (default: bundle/logs) receives the logs.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="${LOG_DIR:-$here/logs}"
mkdir -p "$logs"
export CUDAKIT_STUB_DIR="$here/stub"
export CUDAKIT_BIN="$here/bin-cudakit"
export CUDAKIT_CACHE_DIR="${CUDAKIT_CACHE_DIR:-$(mktemp -d)}"
filter=(${FILTER:+$FILTER})

passed=0; failed=0; ignored=0; status=0
for bin in "$here"/bin/*; do
    name=$(basename "$bin")
    "$bin" --include-ignored --test-threads=1 "${filter[@]}" >"$logs/$name.log" 2>&1
    rc=$?
    p=$(grep -E '^test result:' "$logs/$name.log" | sed -E 's/.* ([0-9]+) passed.*/\1/' | awk '{s+=$1} END {print s+0}')
    f=$(grep -E '^test result:' "$logs/$name.log" | sed -E 's/.* ([0-9]+) failed.*/\1/' | awk '{s+=$1} END {print s+0}')
    p=${p:-0}; f=${f:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p)); failed=$((failed + f))
    printf '%-40s %4d passed %4d failed\n' "$name" "$p" "$f"
    if [ "$f" -ne 0 ]; then
        status=1
        grep -E '^(test .* FAILED|---- )' "$logs/$name.log" | head -20
    fi
done
echo "suite: $passed passed, $failed failed"

if [ "${SANITIZE:-1}" = "1" ]; then
    if ! command -v compute-sanitizer >/dev/null; then
        echo "sanitizer: compute-sanitizer not found"; status=1
    else
        san_errors=0
        # Only the binaries that drive the GPU: the CPU tests (loader stand-in,
        # NVRTC) gain nothing from memcheck.
        for bin in "$here"/bin/*gpu_*; do
            name=$(basename "$bin")
            # fault_* tests provoke device faults on purpose: excluded here.
            # --report-api-errors no: tests that provoke driver errors on purpose
            # (out of memory, bad PTX, unknown symbols; cudakit also ends its
            # cuFuncGetParamInfo scan at the first CUDA_ERROR_INVALID_VALUE)
            # would otherwise count as sanitizer errors. Memory errors, races
            # on device memory and leaks are what this pass is for.
            compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 \
                --report-api-errors no \
                --print-limit 20 "$bin" --include-ignored --test-threads=1 --skip fault_ --skip large_ ${SANITIZER_SKIP:+--skip $SANITIZER_SKIP} \
                "${filter[@]}" >"$logs/$name.sanitizer.log" 2>&1
            rc=$?
            summary=$(grep -E 'ERROR SUMMARY' "$logs/$name.sanitizer.log" | tail -1)
            n=$(echo "$summary" | sed -E 's/.*ERROR SUMMARY: ([0-9]+).*/\1/')
            n=${n:-0}
            if grep -q "running 0 tests" "$logs/$name.sanitizer.log"; then
                printf 'sanitizer %-30s every test excluded (fault_*)\n' "$name"
                continue
            fi
            if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then n=1; fi
            san_errors=$((san_errors + n))
            printf 'sanitizer %-30s rc=%d %s\n' "$name" "$rc" "$summary"
        done
        echo "sanitizer (memcheck, leak-check full; fault_* and large_* tests excluded): $san_errors errors"
        [ "$san_errors" -eq 0 ] || status=1
    fi
fi
exit $status
