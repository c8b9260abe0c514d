"""Transforms a document can be painted on, chosen by name with their settings
(declared in :mod:`engine.transforms.settings`)."""

import torch

from engine.runtime.first_calls import settle
from engine.transforms.cq import ConstantQ
from engine.transforms.settings import checked
from engine.transforms.stft import STFT
from engine.transforms.transform import Transform

settle()  # before any transform computes (engine.runtime.first_calls)


def make(sample_rate: int, transform: str = "stft", device: torch.device | str = "cpu",
         **settings) -> Transform:
    """``make(44100, "cq", bins_per_octave=36)``; settings another kind takes are ignored,
    so one set of analysis options serves both (e.g. the CLI's); a bad one raises a
    ParameterError naming it (engine.transforms.settings)."""
    chosen = checked({**settings, "transform": transform})
    kind = chosen.pop("transform")
    return (ConstantQ if kind == "cq" else STFT)(sample_rate, device=device, **chosen)
