#!/usr/bin/env bash
# The hardware-suite runner (copied into bundle/ as run.sh by
# scripts/gpu-bundle.sh). Usage on a GPU machine: bash bundle/run.sh
#
# Runs every test binary of bundle/bin with --include-ignored and prints
#   suite: N passed, N failed, N not run
# then the reason of every test not run. A test that cannot run here (a
# driver without an entry point it needs, say) prints
#   NOT RUN: <test>: <reason>
# and fails (cudakit_suite::not_run): libtest counts it as failed, this
# runner counts it as not run, never as passed (docs/testing.md).
#
# Then it unpacks examples.tar.xz (crates/cudakit/examples, built by
# gpu-bundle.sh) and runs each example once: it passes when it exits 0 and
# prints its success line `NAME: ok (...)`; `NAME: not run (...)` with exit
# 0 (all_reduce on one GPU) counts as not run; anything else fails. Prints
#   examples: N passed, N failed, N not run
#
# Environment: SUITE=0 skips the plain pass; EXAMPLES=0 the examples; SANITIZE=0 skips the memcheck
# pass; EXTRA_SANITIZERS=0 racecheck/synccheck/initcheck; PROFILE=0 ncu; FILTER=substring runs
# only matching tests (libtest's filter); ONLY="word ..." runs only the
# binaries whose names contain one of the words; LOG_DIR (default:
# bundle/logs) receives the logs; CUDAKIT_CACHE_DIR and CUDA_CACHE_PATH
# default to fresh temporary folders, so that no run sees an earlier run's
# compile-cache entries (cudakit's, and the driver's, which NVRTC 12.9+
# also uses).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="${LOG_DIR:-$here/logs}"
mkdir -p "$logs"
export CUDAKIT_STUB_DIR="$here/stub"
export CUDAKIT_BIN="$here/bin-cudakit"
export CUDAKIT_CACHE_DIR="${CUDAKIT_CACHE_DIR:-$(mktemp -d)}"
export CUDA_CACHE_PATH="${CUDA_CACHE_PATH:-$(mktemp -d)}"
filter=(${FILTER:+$FILTER})

# The test binaries come packed (scripts/gpu-bundle.sh); unpacked once.
if [ ! -d "$here/bin" ] && [ -e "$here/bin.tar.xz" ]; then
    # tar needs xz for -J; Python's tarfile reads it without.
    tar -xJf "$here/bin.tar.xz" -C "$here" 2>/dev/null \
        || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
            "$here/bin.tar.xz" "$here"
fi

# Whether binary $1 is selected by ONLY.
selected() {
    [ -z "${ONLY:-}" ] && return 0
    local word
    for word in $ONLY; do
        case "$1" in *"$word"*) return 0 ;; esac
    done
    return 1
}

# Reads a libtest log ($1) and the binary's exit status ($2); sets
#   P (passed), F (failed, not counting tests not run), N (not run),
#   NOT_RUN_LINES (one "test: reason" per line).
# A test is not run when it printed a NOT RUN line and libtest reports it
# FAILED. A binary that exits non-zero without a failed test (a crash)
# counts as one failure.
classify() {
    local log=$1 rc=$2 lf name
    P=$(grep -E '^test result:' "$log" | sed -E 's/.* ([0-9]+) passed.*/\1/' | awk '{s+=$1} END {print s+0}')
    lf=$(grep -E '^test result:' "$log" | sed -E 's/.* ([0-9]+) failed.*/\1/' | awk '{s+=$1} END {print s+0}')
    N=0
    NOT_RUN_LINES=""
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        name=${line%%: *}
        if grep -Fxq "test $name ... FAILED" "$log"; then
            N=$((N + 1))
            NOT_RUN_LINES+="$line"$'\n'
        fi
    done < <(grep -oE 'NOT RUN: [^ ]+: .*' "$log" | sed -E 's/^NOT RUN: //' | sort -u)
    F=$((lf - N))
    if [ "$rc" -ne 0 ] && [ "$lf" -eq 0 ]; then F=1; fi
}

passed=0; failed=0; not_run=0; status=0; not_run_report=""
# SUITE=0 skips the plain pass (to run only the sanitizers or the profile).
for bin in "$here"/bin/*; do
    [ "${SUITE:-1}" = "1" ] || break
    name=$(basename "$bin")
    selected "$name" || continue
    "$bin" --include-ignored --test-threads=1 "${filter[@]}" >"$logs/$name.log" 2>&1
    classify "$logs/$name.log" $?
    passed=$((passed + P)); failed=$((failed + F)); not_run=$((not_run + N))
    printf '%-40s %4d passed %4d failed %4d not run\n' "$name" "$P" "$F" "$N"
    if [ "$F" -ne 0 ]; then
        status=1
        grep -E '^(test .* FAILED|---- )' "$logs/$name.log" | head -20
    fi
    while IFS= read -r line; do
        [ -n "$line" ] && not_run_report+="  $name $line"$'\n'
    done <<<"$NOT_RUN_LINES"
done
[ "${SUITE:-1}" = "1" ] && echo "suite: $passed passed, $failed failed, $not_run not run"
if [ "$not_run" -ne 0 ]; then
    echo "not run (test: reason):"
    printf '%s' "$not_run_report"
fi

# The examples: exit code and success line of each (ONLY=example selects
# them alone; their binaries are named example-NAME for ONLY).
if [ "${EXAMPLES:-1}" = "1" ]; then
    if [ ! -e "$here/examples.tar.xz" ]; then
        echo "examples: not run (examples.tar.xz is not in the bundle)"
    else
        ex_dir=$(mktemp -d)
        # tar needs xz for -J; Python's tarfile reads it without.
        tar -xJf "$here/examples.tar.xz" -C "$ex_dir" 2>/dev/null \
            || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
                "$here/examples.tar.xz" "$ex_dir"
        ex_passed=0; ex_failed=0; ex_not_run=0
        for ex in "$ex_dir"/examples/*; do
            [ -x "$ex" ] || continue
            name=$(basename "$ex")
            selected "example-$name" || continue
            log="$logs/example-$name.log"
            NCCL_NVLS_ENABLE=0 timeout 300 "$ex" >"$log" 2>&1
            rc=$?
            line=$(grep -E "^$name: (ok|not run|FAILED)" "$log" | tail -1)
            if [ "$rc" -eq 0 ] && [ "${line#"$name: ok"}" != "$line" ]; then
                ex_passed=$((ex_passed + 1)); verdict=passed
            elif [ "$rc" -eq 0 ] && [ "${line#"$name: not run"}" != "$line" ]; then
                ex_not_run=$((ex_not_run + 1)); verdict="not run"
            else
                ex_failed=$((ex_failed + 1)); verdict="FAILED (exit $rc)"; status=1
            fi
            printf 'example %-24s %-18s %s\n' "$name" "$verdict" "${line:-(no success line)}"
            if [ "$verdict" != passed ] && [ "$verdict" != "not run" ]; then
                tail -15 "$log" | sed 's/^/    /'
            fi
        done
        echo "examples: $ex_passed passed, $ex_failed failed, $ex_not_run not run"
        rm -rf "$ex_dir"
    fi
fi

if [ "${SANITIZE:-1}" = "1" ]; then
    if ! command -v compute-sanitizer >/dev/null; then
        echo "sanitizer: compute-sanitizer not found"; status=1
    else
        san_errors=0
        # Only the binaries that drive the GPU: the CPU tests (loader stand-in,
        # NVRTC) gain nothing from memcheck.
        for bin in "$here"/bin/*gpu_*; do
            name=$(basename "$bin")
            selected "$name" || continue
            # fault_* tests provoke device faults on purpose: excluded here.
            # --report-api-errors no: tests that provoke driver errors on purpose
            # (out of memory, bad PTX, unknown symbols; cudakit also ends its
            # cuFuncGetParamInfo scan at the first CUDA_ERROR_INVALID_VALUE)
            # would otherwise count as sanitizer errors. Memory errors, races
            # on device memory and leaks are what this pass is for.
            compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 \
                --report-api-errors no \
                --print-limit 20 "$bin" --include-ignored --test-threads=1 --skip fault_ --skip large_ --skip leak_ ${SANITIZER_SKIP:+--skip $SANITIZER_SKIP} \
                "${filter[@]}" >"$logs/$name.sanitizer.log" 2>&1
            rc=$?
            summary=$(grep -E 'ERROR SUMMARY' "$logs/$name.sanitizer.log" | tail -1)
            n=$(echo "$summary" | sed -E 's/.*ERROR SUMMARY: ([0-9]+).*/\1/')
            n=${n:-0}
            if grep -q "running 0 tests" "$logs/$name.sanitizer.log"; then
                printf 'sanitizer %-30s every test excluded (fault_*)\n' "$name"
                continue
            fi
            # A non-zero exit without a memcheck error: a test failed under
            # the sanitizer (an error), unless every failure was a test not run.
            if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
                classify "$logs/$name.sanitizer.log" "$rc"
                if [ "$F" -ne 0 ]; then n=1; fi
            fi
            san_errors=$((san_errors + n))
            printf 'sanitizer %-30s rc=%d %s\n' "$name" "$rc" "$summary"
        done
        echo "sanitizer (memcheck, leak-check full; fault_*, large_* and leak_* tests excluded): $san_errors errors"
        [ "$san_errors" -eq 0 ] || status=1
    fi
fi

# racecheck, synccheck and initcheck over the shipped kernels: the matmul
# suite at one odd shape per kernel (129x130x131 names one test per
# kernel and layout), the launch-path kernels and the library-path tests.
# EXTRA_SANITIZERS=0 skips them; EXTRA_SPECS="binary [filter];..." picks
# other targets.
if [ "${EXTRA_SANITIZERS:-1}" = "1" ] && command -v compute-sanitizer >/dev/null; then
    extra_errors=0
    for tool in racecheck synccheck initcheck; do
        # Measured on the H200: racecheck spends over 200 s on the 30 matmul
        # tests at 129x130x131 and does not finish a_hundred_thousand_launches
        # in minutes, so the default targets are small: the launch-path
        # kernels without the stress tests, and the H200 GEMM kernels at one
        # odd shape (129x67x255).
        IFS=';' read -r -a specs <<<"${EXTRA_SPECS:-tests-gpu_launch;tests-gpu_matmul 129x67x255}"
        for spec in "${specs[@]}"; do
            set -- $spec
            name=$1; only=${2:-}
            [ -x "$here/bin/$name" ] || continue
            selected "$name" || continue
            log="$logs/$name.$tool.log"
            compute-sanitizer --tool "$tool" --error-exitcode 1 --report-api-errors no \
                --print-limit 20 "$here/bin/$name" --include-ignored --test-threads=1 \
                --skip fault_ --skip large_ --skip leak_ --skip hundred --skip cooperative \
                ${only:+$only} >"$log" 2>&1
            rc=$?
            summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)
            n=$(echo "$summary" | grep -oE '[0-9]+ (error|hazard)' | head -1 | grep -oE '^[0-9]+')
            n=${n:-0}
            if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
                classify "$log" "$rc"
                if [ "$F" -ne 0 ]; then n=1; fi
            fi
            extra_errors=$((extra_errors + n))
            printf '%-9s %-30s rc=%d %s\n' "$tool" "$name${only:+ ($only)}" "$rc" "${summary:-no summary}"
        done
    done
    echo "racecheck, synccheck, initcheck: $extra_errors errors"
    [ "$extra_errors" -eq 0 ] || status=1
elif [ "${EXTRA_SANITIZERS:-1}" = "1" ]; then
    echo "racecheck, synccheck, initcheck: not run (compute-sanitizer not found)"
fi

# Nsight Compute over the flagship kernels (PROFILE=0 skips it): one table
# per kernel from `ncu --csv` of one `cudakit matmul` launch at 4096^3.
if [ "${PROFILE:-1}" = "1" ]; then
    if ! command -v ncu >/dev/null; then
        echo "profile: not run (ncu not found)"
    elif [ ! -x "$here/bin-cudakit" ]; then
        echo "profile: not run (the cudakit CLI is not in the bundle)"
    else
        metrics=gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum
        while read -r dtype kernel; do
            [ -n "$dtype" ] || continue
            csv="$logs/ncu-$dtype-$kernel.csv"
            ncu --csv --metrics "$metrics" --kernel-name regex:'gemm|matmul' \
                --launch-skip 1 --launch-count 1 \
                "$here/bin-cudakit" matmul --m 4096 --n 4096 --k 4096 --dtype "$dtype" \
                --kernel "$kernel" --iters 2 >"$csv" 2>"$logs/ncu-$dtype-$kernel.err"
            python3 "$here/ncu_table.py" "$dtype $kernel" "$csv" || \
                echo "profile $dtype $kernel: not run ($(tail -1 "$logs/ncu-$dtype-$kernel.err"))"
        done < "${PROFILE_KERNELS:-$here/profile-kernels.txt}"
    fi
fi
exit $status
