"""Documents with layers for the tests: a noisy one, random masks to unmix it with,
and a digest of its layers' state."""

import hashlib
import random

import numpy as np
import torch

from engine.model.layer_sources import quantized_masks
from tests.conftest import document


def noisy_doc(seed: int = 0, seconds: float = 2.0):
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    x = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.standard_normal((2, t.size))
    return document(x.astype(np.float32), RATE, n_fft=256)


def digest(doc) -> str:
    """Every bit of the mix and of every layer, and the layers' names and mixing (not
    which is active: choosing one is no undo step)."""
    h = hashlib.sha1(doc.mix.contiguous().numpy().tobytes())
    state = doc.layers.state
    for layer in state.layers:
        h.update(cells(doc, layer.id).numpy().tobytes())
        h.update(repr((layer.id, layer.name, layer.gain, layer.invert, layer.mute,
                       layer.solo)).encode())
    return h.hexdigest()


def random_masks(doc, r: random.Random, k: int):
    g = torch.Generator().manual_seed(r.randrange(1 << 30))
    logits = torch.randn((k, doc.channels, doc.n_frames, doc.n_bins), generator=g)
    return quantized_masks(list(torch.softmax(2 * logits, 0)))


RATE = 8000


def cells(doc, layer_id: int) -> torch.Tensor:
    return doc.read_complex(doc.full_rect(), layer=layer_id)
