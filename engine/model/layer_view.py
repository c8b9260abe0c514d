"""What the view shows of a document's layers (engine.model.layer_stack): one layer's levels
alone, or the mix's levels coded with which layer is loudest at each cell, for the
canvas to tint each cell in that layer's colour (shaders/spectrogram.frag).

A tinted level is ``floor(dB * 16) * 16 + k``: the mix's dB to a sixteenth and the
loudest layer's tint ``k`` (its id modulo TINTS), so the maximum of two codes is
the louder cell's (the view's tiles keep maxima over bins and frames) and the
shader reads both back."""

import numpy as np
import torch

from engine.coeffs import magnitude
from engine.model.document import Document
from engine.region import Rect
from engine.view import render

TINTS = 8  # tint colours, by layer id


def _levels(doc: Document, rect: Rect, factor: int, chans: slice, layer: int) -> torch.Tensor:
    """A layer's magnitude over ``rect``, max over aligned blocks of ``factor`` frames and
    over the channels: ``[ceil(frames / factor), bins]``."""
    span = factor * max(1, render.CHUNK_FRAMES // factor)
    parts = []
    for f0 in range(rect.frame0, rect.frame1, span):
        part = Rect(rect.bin0, rect.bin1, f0, min(rect.frame1, f0 + span))
        x = magnitude(doc.layers.read(part, chans, layer))
        parts.append((render.reduce_frames(x, factor) if factor > 1 else x).amax(0))
    return torch.cat(parts, 0) if len(parts) > 1 else parts[0]


def layer_tile_db(doc: Document, rect: Rect, factor: int, *, channel: int | None,
                  layer: int) -> np.ndarray:
    """One layer's dB over ``rect`` as Document.level_tile_db gives the mix's."""
    rect = rect.clip(doc.n_bins, doc.n_frames)
    x = _levels(doc, rect, factor, _chans(doc, channel), layer)
    return (20 * torch.log10(torch.clamp(x / doc.full_scale, min=1e-12))).T.contiguous() \
        .cpu().numpy()


def tinted_tile_codes(doc: Document, rect: Rect, factor: int, *,
                      channel: int | None) -> np.ndarray:
    """The mix's dB over ``rect`` coded with the tint of the loudest audible layer at
    each cell (see the module's docstring)."""
    rect = rect.clip(doc.n_bins, doc.n_frames)
    db = torch.from_numpy(doc.level_tile_db(rect, factor, channel))
    layers = doc.layers.state.audible() if not doc.layers.plain else []
    if len(layers) < 2:
        tint = torch.full_like(db, float(doc.layers.active.id % TINTS))
    else:
        chans = _chans(doc, channel)
        loudest = torch.stack([_levels(doc, rect, factor, chans, x.id) * abs(x.factor)
                               for x in layers]).argmax(0).T
        tint = torch.tensor([float(x.id % TINTS) for x in layers])[loudest]
    return (torch.floor(db * 16) * 16 + tint).numpy()


def _chans(doc: Document, channel: int | None) -> slice:
    c = doc.channel_indices(channel)
    return slice(c[0], c[-1] + 1)
