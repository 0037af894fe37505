# Sourced by scripts/test.sh (and usable by hand: `source scripts/nvrtc-env.sh`,
# or through scripts/main-job.sh). Makes sure an NVRTC 13 (or 12) and CUDA's
# headers can be found by cudakit:
#
# - NVRTC: when none is found on the system, installs PyPI's
#   nvidia-cuda-nvrtc into the ignored folder .deps/python and points
#   CUDAKIT_LIBNVRTC at it (the loader also finds it there by itself, as its
#   last resort: cuda_sys::loader::deps_folders);
# - CUDA's headers (for Program::cuda_headers: <cooperative_groups.h>,
#   <mma.h>, CCCL): when no toolkit's include folder has them, installs the
#   wheels nvidia-cuda-runtime, nvidia-cuda-crt and nvidia-cuda-cccl into
#   the same folder (.deps/python/nvidia/cu13/include and its cccl/).
#
# The wheels are installed together in one pip call: `pip --target` does not
# merge a wheel into an existing nvidia/ folder, so adding one later replaces
# the set (--upgrade) rather than skipping it. Needs python3 with pip and
# PyPI the first time; nothing is installed when everything is found.
NVRTC_WHEEL_VERSION="${NVRTC_WHEEL_VERSION:-13.0.88}"
RUNTIME_WHEEL_VERSION="${RUNTIME_WHEEL_VERSION:-13.0.96}"
CRT_WHEEL_VERSION="${CRT_WHEEL_VERSION:-13.0.88}"
CCCL_WHEEL_VERSION="${CCCL_WHEEL_VERSION:-13.0.85}"
_cudakit_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_cudakit_local="$_cudakit_root/.deps/python/nvidia/cu13/lib/libnvrtc.so.13"
_cudakit_local_include="$_cudakit_root/.deps/python/nvidia/cu13/include"

_cudakit_have_nvrtc() {
    if [ -n "${CUDAKIT_LIBNVRTC:-}" ] && [ -e "$CUDAKIT_LIBNVRTC" ]; then return 0; fi
    if ldconfig -p 2>/dev/null | grep -qE 'libnvrtc\.so\.1[23] '; then return 0; fi
    for d in "${CUDA_PATH:-}" "${CUDA_HOME:-}" /usr/local/cuda; do
        [ -n "$d" ] || continue
        for f in "$d"/lib64/libnvrtc.so.1[23] "$d"/lib/libnvrtc.so.1[23]; do
            [ -e "$f" ] && return 0
        done
    done
    return 1
}

# The three parts cudakit's header search checks (crates/cudakit/src/compile/headers.rs).
_cudakit_headers_in() {
    [ -e "$1/cuda_runtime.h" ] && [ -e "$1/crt/host_defines.h" ] &&
        { [ -e "$1/cccl/cuda/std/version" ] || [ -e "$1/cuda/std/version" ]; }
}

_cudakit_have_headers() {
    if [ -n "${CUDAKIT_CUDA_INCLUDE:-}" ]; then _cudakit_headers_in "$CUDAKIT_CUDA_INCLUDE"; return; fi
    for d in "${CUDA_PATH:-}" "${CUDA_HOME:-}" /usr/local/cuda; do
        [ -n "$d" ] || continue
        _cudakit_headers_in "$d/include" && return 0
    done
    _cudakit_headers_in "$_cudakit_local_include"
}

_cudakit_install_wheels() {
    echo "scripts/nvrtc-env.sh: $1; installing NVIDIA's wheels (nvrtc $NVRTC_WHEEL_VERSION," \
        "runtime $RUNTIME_WHEEL_VERSION, crt $CRT_WHEEL_VERSION, cccl $CCCL_WHEEL_VERSION) into .deps/python" >&2
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
        --target "$_cudakit_root/.deps/python" \
        "nvidia-cuda-nvrtc==$NVRTC_WHEEL_VERSION" \
        "nvidia-cuda-runtime==$RUNTIME_WHEEL_VERSION" \
        "nvidia-cuda-crt==$CRT_WHEEL_VERSION" \
        "nvidia-cuda-cccl==$CCCL_WHEEL_VERSION"
}

if [ ! -e "$_cudakit_local" ] && ! _cudakit_have_nvrtc; then
    _cudakit_install_wheels "no NVRTC found"
fi
if ! _cudakit_have_headers; then
    _cudakit_install_wheels "no CUDA headers (runtime, crt/, CCCL) found"
fi
if [ -e "$_cudakit_local" ] && { [ -z "${CUDAKIT_LIBNVRTC:-}" ] || [ ! -e "$CUDAKIT_LIBNVRTC" ]; }; then
    export CUDAKIT_LIBNVRTC="$_cudakit_local"
fi
# Where the wheels also ship libcudadevrt.a (nvidia-cuda-runtime) and CUDA's
# headers, cudakit finds them here.
export CUDAKIT_DEPS_DIR="$_cudakit_root/.deps"
unset _cudakit_root _cudakit_local _cudakit_local_include
unset -f _cudakit_have_nvrtc _cudakit_headers_in _cudakit_have_headers _cudakit_install_wheels
