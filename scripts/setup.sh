#!/usr/bin/env bash
# Create or update .venv with SpectroPaint, its dev tools and (for tests) the
# Debian packages a real OpenGL window needs. Safe to run again: it only
# installs what is missing or changed.
#   scripts/setup.sh          app + dev extras
#   scripts/setup.sh --system also Xvfb, Mesa and Qt's xcb libraries (root only)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=.venv

system_packages() {
    # Xvfb gives tests an X server; Mesa's llvmpipe renders OpenGL on the CPU;
    # the libxcb-* and libxkbcommon-x11 libraries are what Qt's xcb plugin loads;
    # libportaudio2 is what sounddevice plays through; espeak-ng and alsa-utils (its
    # recorded voices) give the repair tests real speech, sound-theme-freedesktop real
    # recorded sounds and asc-music real music (tests/takes.py); sox is the plain
    # de-noiser the restoration bench compares with.
    local pkgs=(xvfb xauth libgl1-mesa-dri libglx-mesa0 libegl1 libgl1
                libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0
                libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-shape0
                libxcb-xinerama0 libxcb-xkb1 libfontconfig1 libdbus-1-3 libportaudio2
                espeak-ng alsa-utils sound-theme-freedesktop asc-music sox)
    local missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: missing Debian packages (install them as root): ${missing[*]}" >&2
        return 0
    fi
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

[ "${1:-}" = "--system" ] && system_packages

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip_install() {
    # Quiet, but keep real errors; drop the noise some pip configurations print
    # about missing local index folders.
    "$VENV/bin/python" -m pip install -q "$@" 2>&1 \
        | { grep -v "is ignored: it is neither a file nor a directory" || true; }
    return "${PIPESTATUS[0]}"
}

# torch: without an NVIDIA GPU take the CPU build; an unpinned torch would pull
# a multi-GB CUDA build. pyproject.toml keeps a normal range for real users.
if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
    if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
        pip_install torch
    else
        pip_install "torch==2.13.0" || pip_install torch \
            --index-url "${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}"
    fi
fi

# Reinstall the project only when its declared dependencies changed.
stamp="$VENV/.spectropaint-installed"
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    pip_install -e ".[dev]"  # dev includes the cluster and metrics extras
    echo "$want" > "$stamp"
fi

# Tests only: nsgt 0.19, the constant-Q oracle. Its build needs numpy and Cython in
# the environment (--no-build-isolation); the app never imports it.
if [ "${1:-}" = "--system" ] && ! "$VENV/bin/python" -c "import nsgt" 2>/dev/null; then
    pip_install setuptools cython
    pip_install --no-build-isolation "nsgt==0.19"
fi

# Tests only: librosa (a reference the tests check against) compiles its numba
# functions when first imported, about 25 s on 2 cores; done here once, the tests'
# processes read the compiled cache.
if [ "${1:-}" = "--system" ] && ! compgen -G "$VENV/lib/python*/site-packages/librosa/util/__pycache__/*.nbi" >/dev/null; then
    "$VENV/bin/python" -c "import librosa.core.audio, librosa.util.utils"
fi
