"""A time edit of a document with layers (engine.model.splice): every layer follows.

Each layer's sound alone, and the sound of what restore paints back on it, are cut
into the same pieces as the mix (a piece from elsewhere, a pasted clip or silence,
goes into the active layer; the others get silence there), joined with the same
cross-fades, and analysed again: the new document's layers are those analyses, as
tiles over silence, with the names, gains, mutes and solos they had, the active one
still active. The mix is then their sum, as always (engine.model.layer_stack); it
plays the spliced samples as they are except where a piece from elsewhere went in."""

from dataclasses import replace

import numpy as np
import torch

from engine.model.document import Document
from engine.model.layer_sources import LAYER_TILE, Silence, Tiled
from engine.model.layer_stack import StackState
from engine.model.resynth import layer_audio
from engine.progress import CancelFlag, ProgressFn, scaled, step
from engine.region import merged_spans


def follow_layers(old: Document, new: Document, pieces: list, join, *, fade: int,
                  progress: ProgressFn | None = None,
                  cancel: CancelFlag | None = None) -> None:
    """Give ``new`` (``old`` edited into ``pieces``, one layer so far) ``old``'s layers
    cut as the pieces are; ``join(pieces) -> (content, recording)`` joins them, its
    cross-fades reaching ``fade`` samples either side of a junction."""
    state = old.layers.state
    layers = []
    for i, layer in enumerate(state.layers):
        part = scaled(progress, i / len(state.layers), (i + 1) / len(state.layers))
        step(0.0, part, cancel)
        sound = layer_audio(old, layer=layer.id)
        under = layer_audio(old, layer=layer.id, origin=True)
        active = i == state.active
        content, origin = join([_piece_of(p, sound, under, active) for p in pieces])
        step(0.5, part, cancel)
        layers.append(replace(layer, content=_tiles(new, content),
                              origin=_tiles(new, origin)))
    new.layers.next_id = old.layers.next_id
    new.set_layers(StackState(tuple(layers), state.active))
    new.take_dirty()
    new.set_written(_pasted_frames(new, pieces, fade))


def _pasted_frames(new: Document, pieces: list, fade: int) -> list[list[tuple[int, int]]]:
    """The frames where the new mix is not the analysis of its content: where a piece
    from elsewhere went into the active layer (whose gain, inversion or mute applies
    to it). Every other cell is the sum of the layers' sounds cut as the mix was, so
    the output there is the spliced samples, bit for bit, as without layers."""
    t, spans, at = new.transform, [], 0
    for piece in pieces:
        if not piece.own or piece.added is not None:
            spans.append(t.frames_needed(max(0, at - fade),
                                         min(new.length, at + piece.length + fade), new.length))
        at += piece.length
    frames = merged_spans(spans)
    return [list(frames) for _ in range(new.channels)]


def _piece_of(piece, sound: np.ndarray, under: np.ndarray, active: bool):
    """``piece`` as one layer has it: the layer's own samples where the piece is the
    document's (with what a paste mixed in, in the active layer), the piece itself in
    the active layer, silence in the others."""
    if piece.own:
        return replace(piece, content=sound, recording=under,
                       added=piece.added if active else None)
    if active:
        return piece
    return replace(piece, content=np.zeros_like(piece.content),
                   recording=np.zeros_like(piece.recording))


def _tiles(doc: Document, samples: np.ndarray) -> Tiled:
    """``samples`` analysed as ``doc`` is, held as tiles over silence (the silent ones
    not held)."""
    t = doc.transform
    x = torch.from_numpy(np.ascontiguousarray(samples, np.float32)).to(doc.device)
    out = Tiled(Silence(doc.channels, doc.device), (doc.n_bins, doc.n_frames))
    chunk = -(-t.analysis_chunk(doc.channels) // LAYER_TILE) * LAYER_TILE
    for f0 in range(0, doc.n_frames, chunk):
        f1 = min(doc.n_frames, f0 + chunk)
        cells = t.forward_frames(x, f0, f1).transpose(-1, -2)  # [ch, frames, bins]
        for b0 in range(0, doc.n_bins, LAYER_TILE):
            for g0 in range(f0, f1, LAYER_TILE):
                tile = cells[:, g0 - f0:g0 - f0 + LAYER_TILE, b0:b0 + LAYER_TILE]
                if tile.any():
                    out.tiles[(b0 // LAYER_TILE, g0 // LAYER_TILE)] = tile.clone()
    return out
