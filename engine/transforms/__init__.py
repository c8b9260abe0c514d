"""Transforms a document can be painted on, chosen by name with their settings."""

import math

import torch

from engine.errors import ParameterError
from engine.first_calls import settle
from engine.transforms.base import Transform
from engine.transforms.cq import ConstantQ
from engine.transforms.stft import STFT

settle()  # before any transform computes (engine.first_calls)

KINDS = ("stft", "cq")
# the settings each kind takes, with the defaults the CLI and the GUI show
DEFAULTS = {"stft": {"n_fft": 2048, "hop": None, "window": "hann"},
            "cq": {"bins_per_octave": 48, "fmin": 32.7}}
# what each setting holds: a whole number, any finite number, or a name
TYPES = {"n_fft": int, "hop": int, "bins_per_octave": int, "fmin": float, "window": str}


def make(sample_rate: int, transform: str = "stft", device: torch.device | str = "cpu",
         **settings) -> Transform:
    """``make(44100, "cq", bins_per_octave=36)``; settings another kind takes are ignored,
    so one set of analysis options serves both (e.g. the CLI's)."""
    if transform not in KINDS:
        raise ParameterError(f"unknown transform {transform!r}; use one of {', '.join(KINDS)}")
    known = {k: _typed(k, v) for k, v in settings.items()
             if k in DEFAULTS[transform] and v is not None}
    if transform == "cq":
        return ConstantQ(sample_rate, device=device, **known)
    return STFT(sample_rate, device=device, **known)


def _typed(name: str, value):
    """A setting as its kind takes it (from a project file or a script it may be anything:
    ``"2048"``, ``511.9``, ``true``), or a ParameterError naming it."""
    kind = TYPES[name]
    if kind is str:
        if not isinstance(value, str):
            raise ParameterError(f"analysis setting {name}: expected a name, got "
                                 f"{type(value).__name__} {value!r:.40}")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            (isinstance(value, float) and not math.isfinite(value)):
        raise ParameterError(f"analysis setting {name}: expected a finite number, got "
                             f"{type(value).__name__} {value!r:.40}")
    if kind is int:
        if isinstance(value, float) and not value.is_integer():
            raise ParameterError(f"analysis setting {name}: {value!r} is not a whole number")
        return int(value)
    return float(value)
