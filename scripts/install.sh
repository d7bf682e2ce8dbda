#!/usr/bin/env bash
# Set up judgelab in a virtual environment on a fresh machine: no GPU, PyPI only.
#   scripts/install.sh [VENV] [EXTRAS] [MODELS...]
# llama-cpp-python has no portable wheel on PyPI, so it is compiled here. The native build
# turns on CPU features (AMX) that crash on many virtual machines, so we build a portable
# one (GGML_NATIVE=OFF) and keep the wheel in a folder named after the flags: pip's own wheel
# cache ignores CMAKE_ARGS and would hand back a wheel built with other flags.
set -euo pipefail
VENV=${1:-.venv}
EXTRAS=${2:-embedded,server,dev}
shift $(( $# > 2 ? 2 : $# )) || true
MODELS=("$@")
LLAMA_VERSION=0.3.36
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
flags_id=$(printf '%s' "$LLAMA_VERSION $CMAKE_FLAGS" | sha256sum | cut -c1-12)
WHEELHOUSE=${JUDGELAB_WHEELHOUSE:-$HOME/.cache/judgelab/wheels/llama-$flags_id}

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PIP="$VENV/bin/python -m pip"
$PIP install -q --upgrade pip wheel setuptools

if [[ ",$EXTRAS," == *",embedded,"* || ",$EXTRAS," == *",server,"* ]]; then
  if ! ls "$WHEELHOUSE"/llama_cpp_python-$LLAMA_VERSION-*.whl >/dev/null 2>&1; then
    echo "building llama-cpp-python $LLAMA_VERSION (portable CPU build, ~15-25 min on 2 cores)"
    mkdir -p "$WHEELHOUSE"
    CMAKE_ARGS="$CMAKE_FLAGS" $PIP wheel --no-cache-dir --no-deps -w "$WHEELHOUSE" \
      "llama-cpp-python==$LLAMA_VERSION"
  fi
  $PIP install -q --find-links "$WHEELHOUSE" "llama-cpp-python==$LLAMA_VERSION"
fi

if [[ ",$EXTRAS," == *",embeddings,"* ]] && ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  # The CPU build: on the project's machines pip finds its wheel on disk; elsewhere set
  # TORCH_INDEX=https://download.pytorch.org/whl/cpu to avoid PyPI's multi-GB CUDA build.
  $PIP install -q "torch==${TORCH_VERSION:-2.13.0}" ${TORCH_INDEX:+--index-url "$TORCH_INDEX"}
fi

$PIP install -q -e ".[$EXTRAS]" --find-links "$WHEELHOUSE"
for model in "${MODELS[@]}"; do
  "$VENV/bin/judgelab" models install "$model"
done

# Headless Chromium for the report's browser tests (Debian packages; needs root or sudo).
if [[ ",$EXTRAS," == *",dev,"* ]] && ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"
  if command -v apt-get >/dev/null 2>&1 && { [ -z "$SUDO" ] || sudo -n true 2>/dev/null; }; then
    { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q chromium chromium-driver >/dev/null; } \
      || echo "note: could not install chromium + chromium-driver; the browser tests of the report will be skipped (and fail under CI)"
  else
    echo "note: chromium + chromium-driver not installed; the browser tests of the report will be skipped"
  fi
fi
