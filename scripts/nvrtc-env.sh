# Sourced by scripts/test.sh (and usable by hand: `source scripts/nvrtc-env.sh`).
# Makes sure an NVRTC 13 (or 12) can be found by cudakit's loader. When none is
# found on the system, installs PyPI's nvidia-cuda-nvrtc into the ignored
# folder .deps/python (with nvidia-cuda-runtime, for libcudadevrt.a) and
# points CUDAKIT_LIBNVRTC at it.
NVRTC_WHEEL_VERSION="${NVRTC_WHEEL_VERSION:-13.0.88}"
_cudakit_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_cudakit_local="$_cudakit_root/.deps/python/nvidia/cu13/lib/libnvrtc.so.13"

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

if [ -e "$_cudakit_local" ]; then
    export CUDAKIT_LIBNVRTC="${CUDAKIT_LIBNVRTC:-$_cudakit_local}"
elif ! _cudakit_have_nvrtc; then
    echo "scripts/nvrtc-env.sh: no NVRTC found; installing nvidia-cuda-nvrtc==$NVRTC_WHEEL_VERSION into .deps/python" >&2
    python3 -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$_cudakit_root/.deps/python" "nvidia-cuda-nvrtc==$NVRTC_WHEEL_VERSION" \
        "nvidia-cuda-runtime==${RUNTIME_WHEEL_VERSION:-13.0.96}"
    export CUDAKIT_LIBNVRTC="$_cudakit_local"
fi
# Where the wheel also ships libcudadevrt.a (nvidia-cuda-runtime), tests find it here.
export CUDAKIT_DEPS_DIR="$_cudakit_root/.deps"
unset _cudakit_root _cudakit_local
