"""Unmix a layer into layers (engine.unmix), and paint to separate: marks painted on
the parts of an NMF unmix steer it, and the unmix runs again.

A mark is ``{"part": i, "points": [[seconds, Hz], ...], "radius_ms": R,
"radius_hz": R}``: the cells within the radii of its path belong to part ``i`` (the
i-th layer of the unmix). The marks an unmix was steered by are kept with its masks
(their recipe), so a new mark adds to them: the separation and the marks that
steered it are one undo step.
"""

from dataclasses import dataclass

import numpy as np
import torch

from app.session.layer_ops import remasked, unmix_into
from app.session.marks import MAX_MARKS, checked_marks, rasterized
from engine import unmix as methods
from engine.coeffs import magnitude
from engine.errors import ParameterError
from engine.model.document import Document
from engine.model.history import History, Step
from engine.model.layer_sources import Masked
from engine.model.resynth import layer_audio
from engine.progress import scaled, step
from engine.region import Rect
from engine.repair import voice

READ_FRAMES = 4096


@dataclass(frozen=True)
class Unmixed:
    """An unmix worked out (the masks of its parts), not applied yet: :func:`apply`
    makes it one undo step. ``group``: the layers a separation makes again; else
    ``layer`` is the one replaced."""

    masks: tuple[torch.Tensor, ...]
    names: list[str]
    recipe: dict
    label: str
    layer: int | None = None
    group: list[int] | None = None
    fit: object = None  # the model the masks came from (a later separation starts from it)


def unmixed(doc: Document, method: str, *, layer: int | None = None, marks: list | None = None,
            progress=None, cancel=None) -> Unmixed:
    """The parts ``method`` (engine.unmix.parse) finds in a layer (the active one), named
    after it and them; ``marks`` steer an NMF unmix. Reads the document only (a worker
    may run it)."""
    m = methods.parse(method)
    source = doc.layers.layer(layer)
    marks = checked_marks(marks or [], len(m.parts), "marks")
    estimate = voice_magnitude(doc, source, scaled(progress, 0, 0.6), cancel) \
        if m.estimates_voice else None
    mag = layer_magnitude(doc, source.content, scaled(progress, 0.6, 0.7), cancel)
    masks, fit = methods.masks(m, mag, doc.transform,
                               hints=rasterized(doc, marks, len(m.parts)), estimate=estimate,
                               progress=scaled(progress, 0.7, 1.0), cancel=cancel)
    return Unmixed(masks, [f"{source.name} {part}" for part in m.parts],
                   {"method": str(m), "marks": marks}, f"unmix '{source.name}' ({m})",
                   layer=source.id, fit=fit)


def separated(doc: Document, marks: list, *, layer: int | None = None, progress=None,
              cancel=None) -> Unmixed:
    """Paint to separate: ``marks`` added to those that steered the NMF unmix a layer
    (the active one) is a part of, and its source unmixed again. Reads only."""
    group, base = unmixed_parts(doc, layer)
    m = methods.parse(base.recipe["method"])
    if m.name != "nmf":
        raise ParameterError(f"paint to separate steers an nmf unmix; these layers were made "
                             f"by {m}: unmix the layer by nmf first")
    marks = base.recipe["marks"] + checked_marks(marks, len(group), "marks")
    if len(marks) > MAX_MARKS:
        raise ParameterError(f"paint to separate takes up to {MAX_MARKS} marks")
    mag = layer_magnitude(doc, base.parent, scaled(progress, 0, 0.2), cancel)
    masks, fit = methods.masks(m, mag, doc.transform, hints=rasterized(doc, marks, len(group)),
                               start=base.fit, progress=scaled(progress, 0.2, 1.0),
                               cancel=cancel)
    return Unmixed(masks, [x.name for x in group], {"method": str(m), "marks": marks},
                   f"paint to separate ({len(marks)} marks)", group=[x.id for x in group],
                   fit=fit)


def apply(doc: Document, done: Unmixed, history: History | None = None) -> Step:
    """Make an unmix worked out by :func:`unmixed` or :func:`separated` the document's
    layers: one undo step."""
    if done.group is not None:
        return remasked(doc, done.group, done.masks, recipe=done.recipe, label=done.label,
                        fit=done.fit, history=history)
    return unmix_into(doc, done.masks, done.names, label=done.label, layer=done.layer,
                      recipe=done.recipe, fit=done.fit, history=history)


def unmix(doc: Document, method: str, *, layer: int | None = None, marks: list | None = None,
          history: History | None = None, progress=None, cancel=None) -> Step:
    """Replace a layer (the active one) by the parts ``method`` finds in it: one undo
    step (:func:`unmixed`, then :func:`apply`)."""
    return apply(doc, unmixed(doc, method, layer=layer, marks=marks, progress=progress,
                              cancel=cancel), history)


def separate(doc: Document, marks: list, *, layer: int | None = None,
             history: History | None = None, progress=None, cancel=None) -> Step:
    """Paint to separate, one undo step (:func:`separated`, then :func:`apply`)."""
    return apply(doc, separated(doc, marks, layer=layer, progress=progress, cancel=cancel),
                 history)


def unmixed_parts(doc: Document, layer: int | None = None) -> tuple[list, Masked]:
    """The layers of the unmix a layer (the active one) is a part of, in the order of
    its parts, and that layer's mask source; a ParameterError if it is none."""
    state = doc.layers.state
    chosen = doc.layers.layer(layer)
    base = getattr(chosen.content, "base", None)
    if not isinstance(base, Masked) or base.recipe is None:
        raise ParameterError(f"layer '{chosen.name}' is not a part of an unmix: unmix a layer "
                             "first (Layer > Unmix)")
    group = sorted((x for x in state.layers if isinstance(getattr(x.content, "base", None),
                                                           Masked)
                    and x.content.base.masks is base.masks), key=lambda x: x.content.base.index)
    if [x.content.base.index for x in group] != list(range(len(base.masks) + 1)):
        raise ParameterError(f"layer '{chosen.name}' was unmixed with layers that are gone "
                             "(deleted or merged); unmix its source again")
    return group, base


def voice_magnitude(doc: Document, source, progress=None, cancel=None) -> torch.Tensor:
    """The magnitude of the cells of the voice in a layer (engine.repair.voice: the voice
    model's output where it finds one), ``[ch, frames, bins]`` float32; a
    ParameterError when it finds none."""
    found = voice.alone(layer_audio(doc, layer=source.id), doc.sample_rate,
                        progress=scaled(progress, 0, 0.9), cancel=cancel)
    if found is None:
        raise ParameterError(f"unmix voice: found no voice in layer '{source.name}'; nothing "
                             "changed")
    audio = torch.from_numpy(found.astype(np.float32)).to(doc.device)
    out = torch.empty((doc.channels, doc.n_frames, doc.n_bins), device=doc.device)
    for f0 in range(0, doc.n_frames, READ_FRAMES):
        step(0.9 + 0.1 * f0 / doc.n_frames, progress, cancel)
        f1 = min(doc.n_frames, f0 + READ_FRAMES)
        out[:, f0:f1] = magnitude(doc.transform.forward_frames(audio, f0, f1)).transpose(1, 2)
    return out


def layer_magnitude(doc: Document, source, progress=None, cancel=None) -> torch.Tensor:
    """The magnitude of a source's cells, ``[ch, frames, bins]`` float32."""
    out = torch.empty((doc.channels, doc.n_frames, doc.n_bins), device=doc.device)
    for f0 in range(0, doc.n_frames, READ_FRAMES):
        step(f0 / doc.n_frames, progress, cancel)
        f1 = min(doc.n_frames, f0 + READ_FRAMES)
        out[:, f0:f1] = magnitude(source.cells(Rect(0, doc.n_bins, f0, f1), slice(None)))
    return out
