"""Transforms a document can be painted on, chosen by name with their settings."""

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


def make(sample_rate: int, transform: str = "stft", device: torch.device | str = "cpu",
         **settings) -> Transform:
    """``make(44100, "cq", bins_per_octave=36)``; settings another kind takes are ignored,
    so one set of analysis options serves both (e.g. the CLI's)."""
    if transform not in KINDS:
        raise ParameterError(f"unknown transform {transform!r}; use one of {', '.join(KINDS)}")
    known = {k: v for k, v in settings.items() if k in DEFAULTS[transform] and v is not None}
    if transform == "cq":
        return ConstantQ(sample_rate, device=device, **known)
    return STFT(sample_rate, device=device, **known)
