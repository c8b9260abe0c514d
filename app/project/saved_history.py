"""The undo history in a project file (version 3; its cells compact since version 6,
app.project.cell_walk), so it survives saving, reopening and crash recovery. Qt-free:
app.gui.services.history_file takes it from the undo stack and puts it back.

A step that is done keeps its cells before it; one that is undone, its cells
after it too (a done step finds those in the document when it is undone, as in the
app). Past ``SAVE_LIMIT`` (what the steps take in the file: a repair's change on a
document without layers, else its cells) the oldest done steps are left out, then the
furthest undone ones; what is left out is named.

In the file: the manifest's ``history`` ({"steps": [{"label", "channel",
"patches"}], "index"}; version 4 adds each step's "layer", the id of the layer it
painted, and "stack", the layer states before and after a layer operation as
indices into the project's layer table, app.project.saved_layers; version 6 "change",
the first sample of a repair's audio change, or null) and the arrays
``history_rects`` (int64 ``[patches, 4]``: bins and frames of each patch) and, up to
version 5 and in a project with layers, ``history_before`` and ``history_after``
(float32 ``[cells, 2]``: real and imaginary parts, the patches' cells one after
another); version 6 stores the cells as what differs from what the walk of
app.project.cell_walk re-derives, and a repair's change as ``history_change_<step>``
(float32 ``[channels, samples]``).
:func:`app.project.read.check_history` checks them before anything is allocated.
"""

from dataclasses import dataclass

import numpy as np
import torch

from app.project.cell_walk import Planned
from app.project.project_error import ProjectError
from engine.model.document import Document
from engine.model.history import Change, Patch, Step
from engine.model.layer_stack import StackState
from engine.region import Rect

SAVE_LIMIT = 256 << 20  # bytes of cells a project keeps of the history


@dataclass
class Kept:
    """The steps a project keeps and how many of them are done; ``left_out`` says
    what did not fit."""

    steps: list[Step]
    index: int
    left_out: str = ""


def stored_nbytes(step: Step, *, plain: bool = True) -> int:
    """About what ``step`` takes in a project: a repair's change on a document without
    layers (``plain``: its patches are re-derived, app.project.cell_walk), else its cells."""
    if plain and step.change is not None and step.stack is None:
        return step.change.packed.nbytes
    return step.nbytes


def keep_within(steps: list[Step], index: int, limit: int | None = None, *,
                plain: bool = True) -> Kept:
    """``steps`` (``index`` of them done) within ``limit`` bytes (None: SAVE_LIMIT) as a
    project stores them (:func:`stored_nbytes`; ``plain``: the document has no layers),
    as copies that hold the same tensors (never written once made), so a worker can save
    them while the user paints on."""
    steps, limit = list(steps), SAVE_LIMIT if limit is None else limit
    dropped = [0, 0]  # done, undone
    while steps and sum(stored_nbytes(s, plain=plain) for s in steps) > limit:
        done = index > 0
        steps.pop(0 if done else -1)
        index -= done
        dropped[0 if done else 1] += 1
    copies = [Step(s.label, s.channel, [Patch(p.rect, p.before, p.after if i >= index else None)
                                        for p in s.patches], layer=s.layer, stack=s.stack,
                   change=s.change)
              for i, s in enumerate(steps)]
    left_out = "" if not any(dropped) else (
        f"the history kept {len(steps)} steps; {dropped[0]} older and {dropped[1]} undone "
        f"ones past {limit / 2**20:.0f} MiB were left out")
    return Kept(copies, index, left_out)


def patch_rect(p: Patch) -> Rect:
    """The cells ``p`` holds (its rect clipped to the document, as its before-cells are)."""
    nb, nf = p.before.shape[1:]
    return Rect(p.rect.bin0, p.rect.bin0 + nb, p.rect.frame0, p.rect.frame0 + nf)


def pack(kept: Kept, state_index, *, compact: bool = False) -> tuple[dict, dict[str, np.ndarray]]:
    """The manifest's ``history`` and the arrays that hold its cells;
    ``state_index(state)``: a layer state's index in the project's layer table;
    ``compact`` (version 6): the cells are left to app.project.cell_walk, and the
    repairs' changes are stored."""
    rects, before, after, arrays = [], [], [], {}
    for i, step in enumerate(kept.steps):
        for p in step.patches:
            r = patch_rect(p)
            rects.append([r.bin0, r.bin1, r.frame0, r.frame1])
            if not compact:
                before.append(_pairs(p.before))
                if i >= kept.index:
                    after.append(_pairs(p.after))
        if compact and step.change is not None:
            arrays[f"history_change_{i}"] = step.change.packed
    steps = [{"label": s.label, "channel": s.channel, "patches": len(s.patches),
              "layer": s.layer,
              "stack": None if s.stack is None else [state_index(x) for x in s.stack]}
             for s in kept.steps]
    if compact:
        for entry, s in zip(steps, kept.steps, strict=True):
            entry["change"] = None if s.change is None else \
                [s.change.sample0, s.change.shape[1]]
    else:
        arrays.update(history_before=_joined(before), history_after=_joined(after))
    arrays["history_rects"] = np.array(rects, np.int64).reshape(-1, 4)
    return {"index": kept.index, "steps": steps}, arrays


def _change(entry: dict, arrays: dict[str, np.ndarray], i: int, channels: int) -> Change | None:
    """A checked version 6 step's change (engine.model.history.Step.change)."""
    if entry.get("change") is None:
        return None
    first, n = entry["change"]
    depth = channels if entry["channel"] is None else 1
    return Change(first, (depth, n), arrays[f"history_change_{i}"])


def planned(manifest: dict, arrays: dict[str, np.ndarray], channels: int, *,
            changes: dict | None = None) -> list[Planned]:
    """The steps of a checked version 6 history as app.project.cell_walk walks them;
    ``changes``: their changes as app.project.read.read unpacked them, by step."""
    rects = arrays["history_rects"].tolist()
    out, row = [], 0
    for i, entry in enumerate(manifest["steps"]):
        change = _change(entry, arrays, i, channels)
        out.append(Planned(entry["channel"], change,
                           [Rect(*r) for r in rects[row:row + entry["patches"]]],
                           samples=(changes or {}).get(i)))
        row += entry["patches"]
    return out


def unpack(manifest: dict, arrays: dict[str, np.ndarray], doc: Document, *, path,
           states: list[StackState], walked: list[list] | None = None,
           planned_steps: list[Planned] | None = None) -> Kept:
    """The steps of a checked project's history, on ``doc``'s device; ``states``: the
    project's layer states (app.project.saved_layers); ``walked``: each step's
    [(before, after)] as app.project.cell_walk gave them from ``planned_steps`` (version
    6). A patch outside the document is a ProjectError."""
    rects = arrays["history_rects"]
    cells = {"before": 0, "after": 0}
    steps, row = [], 0
    for i, entry in enumerate(manifest["steps"]):
        channels = doc.channels if entry["channel"] is None else 1
        patches = []
        for b0, b1, f0, f1 in rects[row:row + entry["patches"]].tolist():
            if b1 > doc.n_bins or f1 > doc.n_frames:
                raise ProjectError(f"{path}: the project is damaged: history patch {row} lies "
                                   f"outside the document ({doc.n_bins} bins x "
                                   f"{doc.n_frames} frames)")
            shape = (channels, b1 - b0, f1 - f0)
            parts = walked[i][len(patches)] if walked is not None else \
                [_take(arrays, name, cells, shape, doc.device)
                 for name in ("before", "after")[:1 + (i >= manifest["index"])]]
            patches.append(Patch(Rect(b0, b1, f0, f1), *parts))
            row += 1
        stack = entry.get("stack")
        change = None if planned_steps is None else planned_steps[i].change
        steps.append(Step(entry["label"], entry["channel"], patches, layer=entry.get("layer", 0),
                          stack=None if stack is None else (states[stack[0]], states[stack[1]]),
                          change=change))
    missing = _painted_on_missing_layer(steps, manifest["index"], doc.layers.state)
    if missing is not None:
        raise ProjectError(f"{path}: the project is damaged: history step {missing} painted "
                           f"layer {steps[missing].layer}, which its layers do not hold")
    return Kept(steps, manifest["index"])


def _painted_on_missing_layer(steps: list[Step], index: int, current: StackState) -> int | None:
    """The first step whose patches would be written to a layer that is not there when
    it is undone or redone (None: none): the layers are followed back from ``current``
    through the done steps and forward through the undone ones, as undo and redo put
    them."""
    def held(step: Step, state: StackState) -> bool:
        ids = {x.id for x in (state if step.stack is None else step.stack[1]).layers}
        return not step.patches or step.layer in ids

    state = current
    for i in range(index - 1, -1, -1):
        if not held(steps[i], state):
            return i
        state = state if steps[i].stack is None else steps[i].stack[0]
    state = current
    for i in range(index, len(steps)):
        state = state if steps[i].stack is None else steps[i].stack[1]
        if not held(steps[i], state):
            return i
    return None


def _pairs(z: torch.Tensor) -> np.ndarray:
    return torch.view_as_real(z.detach().cpu().reshape(-1)).numpy()


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros((0, 2), np.float32)


def _take(arrays, name: str, cells: dict, shape: tuple, device) -> torch.Tensor:
    """The next patch of ``shape`` from ``history_<name>``."""
    count = shape[0] * shape[1] * shape[2]
    flat = arrays[f"history_{name}"][cells[name]:cells[name] + count]
    cells[name] += count
    z = torch.view_as_complex(torch.from_numpy(np.ascontiguousarray(flat, np.float32)))
    return z.reshape(shape).to(device)
