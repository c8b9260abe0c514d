"""Layer operations on a document (engine.model.layer_stack), each one undo step: a
:class:`engine.model.history.Step` that keeps the layer stack before and after it, and,
where an operation paints a layer (a selection moved out of it), that layer's
patches. Undo and redo are bit for bit: the stack is put back as it was, and the
mix recomputed from it where what is heard changed.

Painting (strokes, fills, images, repairs) acts on the active layer
(:func:`activate`), and restore paints back the active layer's own origin: the
recording for the recording's layer, what an extracted, duplicated or unmixed
layer was made of for it, silence for a new one.
"""

import math
from dataclasses import replace

import torch

from app.session.selection import Selection
from engine.errors import ParameterError
from engine.model.document import Document
from engine.model.history import History, Patch, Step
from engine.model.layer_sources import Masked, Summed, Tiled
from engine.model.layer_stack import Layer, StackState
from engine.region import Rect

GAIN_RANGE = (0.0, 4.0)  # a layer's gain, linear (0 is silent; 4 is +12 dB)
NAME_CHARS = 100
MOVE_FRAMES = 4096  # frames of a selection moved to a layer at a time


def activate(doc: Document, layer: int) -> None:
    """Make the layer whose id is ``layer`` the one painting acts on (not an undo step)."""
    state = doc.layers.state
    doc.layers.state = replace(state, active=state.index(layer))


def new_layer(doc: Document, *, name: str | None = None,
              history: History | None = None) -> Step:
    """An empty layer above the active one, made active."""
    stack = doc.layers
    layer = Layer(stack.new_id(), _name(name, stack.state), stack.tiled(stack.silence()),
                  stack.silence())
    return _inserted(doc, [layer], f"new layer '{layer.name}'", history)


def duplicate_layer(doc: Document, *, layer: int | None = None,
                    history: History | None = None) -> Step:
    """A copy of a layer (its cells, origin and mixing) above it, made active."""
    stack = doc.layers
    state = stack.layered()
    source = state.layers[state.index(layer)] if layer is not None else \
        state.layers[state.active]
    # a fresh Tiled even over an unpainted layer: a copy of an unmix's part is no part
    # of that unmix (app.session.unmixing.unmixed_parts), which its base would make it
    snapshot = stack.shallow(Tiled(source.content.base, source.content.size,
                                   source.content.tiles))
    copy = source.changed(id=stack.new_id(), name=_name(f"{source.name} copy", state),
                          content=stack.tiled(snapshot))
    return _inserted(doc, [copy], f"duplicate layer '{source.name}'", history,
                     at=state.index(source.id))


def delete_layer(doc: Document, *, layer: int | None = None,
                 history: History | None = None) -> Step:
    """Remove a layer (the active one by default); the last one cannot be."""
    state = doc.layers.layered()
    i = state.active if layer is None else state.index(layer)
    if len(state.layers) == 1:
        raise ParameterError("the document's only layer cannot be deleted")
    layers = state.layers[:i] + state.layers[i + 1:]
    a = state.active  # the layer below a deleted active one becomes active
    active = a - 1 if a > i or (a == i and i > 0) else a
    return stack_step(doc, StackState(layers, active),
                      label=f"delete layer '{state.layers[i].name}'", history=history)


def move_layer(doc: Document, layer: int, index: int, *,
               history: History | None = None) -> Step:
    """Put a layer at position ``index`` of the stack (0 is the bottom)."""
    state = doc.layers.layered()
    i = state.index(layer)
    if not 0 <= index < len(state.layers):
        raise ParameterError(f"layer position {index} does not exist; use 0 to "
                             f"{len(state.layers) - 1}")
    layers = list(state.layers)
    moving = layers.pop(i)
    layers.insert(index, moving)
    active_id = state.layers[state.active].id
    after = StackState(tuple(layers), [x.id for x in layers].index(active_id))
    return stack_step(doc, after, label=f"move layer '{moving.name}'", history=history)


def rename_layer(doc: Document, layer: int, name: str, *,
                 history: History | None = None) -> Step:
    state = doc.layers.layered()
    old = state.layers[state.index(layer)]
    return _replaced(doc, old.changed(name=_name(name, None)),
                     f"rename layer '{old.name}'", history)


def set_mixing(doc: Document, layer: int, *, gain: float | None = None,
               invert: bool | None = None, mute: bool | None = None,
               solo: bool | None = None, history: History | None = None) -> Step:
    """Change how a layer adds to the mix: its gain (linear), phase inversion, mute
    and solo (when any layer is soloed, the soloed ones alone are heard)."""
    state = doc.layers.layered()
    old = state.layers[state.index(layer)]
    changes = {k: v for k, v in (("invert", invert), ("mute", mute), ("solo", solo))
               if v is not None}
    if gain is not None:
        if isinstance(gain, bool) or not isinstance(gain, int | float) or not (
                math.isfinite(gain) and GAIN_RANGE[0] <= gain <= GAIN_RANGE[1]):
            raise ParameterError(f"layer gain {gain!r} is outside {GAIN_RANGE[0]:g} to "
                                 f"{GAIN_RANGE[1]:g} (linear; 1 leaves the layer as it is)")
        changes["gain"] = float(gain)
    what = ", ".join(f"{k} {_shown(v)}" for k, v in changes.items()) or "nothing"
    return _replaced(doc, old.changed(**changes), f"layer '{old.name}': {what}", history)


def merge_down(doc: Document, *, layer: int | None = None,
               history: History | None = None) -> Step:
    """Merge a layer (the active one) into the one below it: that layer then sounds as
    the two did together, with gain 1, and keeps its name. Each part adds its factor
    (gain, inversion), or nothing where it was not heard while the other was; soloed
    if either was; muted if neither was heard (and soloed, or both muted). Its origin
    is the same sum of the parts' origins, so restore paints back what the merge
    made."""
    state = doc.layers.layered()
    i = state.active if layer is None else state.index(layer)
    if i == 0:
        raise ParameterError(f"layer '{state.layers[i].name}' is the bottom layer; there is "
                             "nothing below it to merge into")
    upper, lower = state.layers[i], state.layers[i - 1]
    heard = {x.id for x in state.audible()}
    either = lower.id in heard or upper.id in heard
    factors = [x.factor if x.id in heard or not either else 0.0 for x in (lower, upper)]
    stack = doc.layers
    base = stack.shallow(Summed(tuple(zip((lower.content.frozen(), upper.content.frozen()),
                                          factors, strict=True))))
    origin = stack.shallow(Summed(tuple(zip((lower.origin, upper.origin), factors,
                                            strict=True))))
    soloed = lower.solo or upper.solo  # kept: whether any layer is soloed stays as it was
    merged = lower.changed(content=stack.tiled(base), origin=origin, gain=1.0,
                           invert=False, solo=soloed,
                           mute=not either and (soloed or lower.mute and upper.mute))
    layers = state.layers[:i - 1] + (merged,) + state.layers[i + 1:]
    return stack_step(doc, StackState(layers, i - 1),
                      label=f"merge layer '{upper.name}' into '{lower.name}'", history=history)


def selection_to_layer(doc: Document, selection: Selection, *, move: bool = True,
                       channel: int | None = None, name: str | None = None,
                       history: History | None = None) -> Step:
    """A new layer above the active one holding what ``selection`` weighs of it (its
    mask times the cells), mixed as it is (gain, inversion, mute, solo); ``move`` takes
    that out of the active layer, so the mix stays as it was (within float32
    rounding); else it is copied. One undo step."""
    rect = selection.cells(doc)
    if rect.empty:
        raise ParameterError("the selection holds no cell of this document")
    stack = doc.layers
    state = stack.layered()
    source = state.layers[state.active]
    chans = doc.channel_indices(channel)
    c = slice(chans[0], chans[-1] + 1)
    content = stack.tiled(stack.silence())
    parts = []
    for f0 in range(rect.frame0, rect.frame1, MOVE_FRAMES):
        part = Rect(rect.bin0, rect.bin1, f0, min(rect.frame1, f0 + MOVE_FRAMES))
        weight = selection.mask(doc, part).T  # [frames, bins]
        cells = source.content.cells(part, c)
        taken = torch.view_as_complex(torch.view_as_real(cells) * weight[..., None])
        content.write(part, taken, c)
        parts.append((part, cells, taken))
    layer = Layer(stack.new_id(), _name(name, state), content, content.frozen(),
                  gain=source.gain, invert=source.invert, mute=source.mute, solo=source.solo)
    verb = "move" if move else "copy"
    step = _inserted(doc, [layer], f"{verb} selection to layer '{layer.name}'", None)
    if move:
        step.layer = source.id
        step.channel = None if len(chans) == doc.channels else chans[0]
        for part, cells, taken in parts:
            kept = (cells - taken).transpose(1, 2)
            step.patches.append(Patch(part, cells.transpose(1, 2).contiguous()))
            doc.write_complex(part, kept, step.channel, layer=source.id)
    if history is not None:
        history.push(step)
    return step


def unmix_into(doc: Document, masks: tuple[torch.Tensor, ...], names: list[str], *,
               label: str, layer: int | None = None, recipe: dict | None = None,
               fit=None, history: History | None = None) -> Step:
    """Replace a layer (the active one) by ``len(names)`` layers, each a share of its
    cells: ``masks`` (engine.model.layer_sources.quantized_masks: one fewer than the names,
    the last layer's share being what they leave), so the new layers add up to the
    old one. Each keeps the old layer's mixing; the first is made active. ``recipe``:
    how the masks were made and ``fit`` the model they came from (kept with them,
    app.session.unmixing)."""
    stack = doc.layers
    state = stack.layered()
    i = state.active if layer is None else state.index(layer)
    old = state.layers[i]
    _check_masks(doc, masks, len(names))
    parent = stack.shallow(old.content.frozen())
    made = []
    for k, name in enumerate(names):
        share = Masked(parent, masks, k, recipe=recipe, fit=fit)
        made.append(old.changed(id=stack.new_id(), name=_name(name, None),
                                content=stack.tiled(share), origin=share))
    layers = state.layers[:i] + tuple(made) + state.layers[i + 1:]
    return stack_step(doc, StackState(layers, i), label=label, history=history)


def remasked(doc: Document, layers: list[int], masks: tuple[torch.Tensor, ...], *,
             label: str, recipe: dict | None = None, fit=None,
             history: History | None = None) -> Step:
    """The layers of one unmix (``layers``: their ids, in the order of its parts) made
    again from their parent with new ``masks``: what was painted on them is replaced;
    names, mixing and order are kept."""
    state = doc.layers.layered()
    group = [state.layers[state.index(i)] for i in layers]
    bases = [x.content.base for x in group]
    if not all(isinstance(b, Masked) and b.masks is bases[0].masks for b in bases):
        raise ParameterError("those layers are not the parts of one unmix")
    _check_masks(doc, masks, len(group))
    stacked = list(state.layers)
    for k, old in enumerate(group):
        share = Masked(bases[0].parent, masks, k, recipe=recipe, fit=fit)
        stacked[state.index(old.id)] = old.changed(content=doc.layers.tiled(share), origin=share)
    return stack_step(doc, replace(state, layers=tuple(stacked)), label=label, history=history)


def _check_masks(doc: Document, masks: tuple[torch.Tensor, ...], parts: int) -> None:
    if len(masks) != parts - 1 or parts < 2:
        raise ParameterError(f"an unmix into {parts} layers needs {parts - 1} masks, "
                             f"not {len(masks)}")
    expected = (doc.channels, doc.n_frames, doc.n_bins)
    if any(tuple(m.shape) != expected or m.dtype != torch.uint16 for m in masks):
        raise ParameterError(f"an unmix's masks are uint16 {expected}")


def stack_step(doc: Document, after: StackState, *, label: str,
               history: History | None) -> Step:
    """Make ``after`` the document's layers as one undo step (pushed to ``history``)."""
    step = Step(label, None, layer=doc.layers.active.id, stack=(doc.layers.state, after),
                written=doc.written_frames())
    doc.set_layers(after)
    if history is not None:
        history.push(step)
    return step


def _inserted(doc: Document, layers: list[Layer], label: str, history: History | None,
              at: int | None = None) -> Step:
    """``layers`` put above position ``at`` (the active layer), the first made active."""
    state = doc.layers.layered()
    i = state.active if at is None else at
    stacked = state.layers[:i + 1] + tuple(layers) + state.layers[i + 1:]
    return stack_step(doc, StackState(stacked, i + 1), label=label, history=history)


def _replaced(doc: Document, layer: Layer, label: str, history: History | None) -> Step:
    state = doc.layers.layered()
    i = state.index(layer.id)
    return stack_step(doc, replace(state, layers=state.layers[:i] + (layer,) +
                                   state.layers[i + 1:]), label=label, history=history)


def _name(name: str | None, state: StackState | None) -> str:
    """A layer's name, checked; None: "Layer N", the first N no layer of ``state`` has."""
    if name is None:
        taken = {x.name for x in state.layers}
        return next(f"Layer {n}" for n in range(1, len(taken) + 2) if f"Layer {n}" not in taken)
    if not isinstance(name, str) or not name.strip() or len(name) > NAME_CHARS:
        raise ParameterError(f"a layer's name is 1 to {NAME_CHARS} characters, not {name!r:.40}")
    return name.strip()


def _shown(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}"
