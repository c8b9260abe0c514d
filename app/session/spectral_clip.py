"""The spectral clipboard: a selection's cells copied or cut (any shape, feathered
edges, one channel or all), pasted at another time, mixed in or replacing what is
there, moved in frequency (semitones, Hz) on the way; and a selection's content moved
and transformed in place, its hole left empty or healed. Each edit is one undo step
on the active layer (app.session.edit_step).

A clip holds its cells (times the selection's weights) and what pasting needs: the
sample rate and analysis it was copied on, its bins' frequencies and its first
frame's time. It needs no document: a clip copied from one file pastes into another
opened later with the same sample rate; on another analysis (another transform, other
settings) its sound is resynthesized and analysed as that document is. Content moved
in frequency or stretched in time is resampled as a phase vocoder does it
(app.session.transposition), so a moved steady tone stays a steady tone at its level;
moved in time only, it is copied cell for cell, frame for frame."""

import math
from dataclasses import dataclass

import numpy as np
import torch

from app.session.edit_step import Recorder
from app.session.layer_ops import new_layer
from app.session.selection import Selection
from app.session.transposition import SILENT, moved
from brushes.path import StrokePoint
from brushes.registry import get_brush
from brushes.stroke import Stroke
from engine.errors import ParameterError
from engine.model.document import Document
from engine.model.history import History, Step
from engine.region import Rect
from engine.transforms import make
from engine.transforms.transform import Transform

MODES = ("add", "replace")
SEMITONES = 48.0  # the most a paste or a move transposes by, either way
STRETCH = (0.25, 4.0)
AUDIBLE = 1e-3  # a frame's loudest cell over the clip's: one left out is said (-60 dB)
HEAL_REACH = math.sqrt(2)  # a round dab this many half-spans wide covers the hole's corners


@dataclass(frozen=True)
class Clip:
    """Cells copied from a document, on the CPU; see the module's docstring."""

    cells: torch.Tensor  # complex64 [ch, bins, frames]: the cells times the weights
    mask: torch.Tensor  # float32 [bins, frames]: the selection's weights
    bin0: int  # the bin of its first row
    start_s: float  # the time of its first frame where it was copied
    sample_rate: int
    hop: int  # samples between its frames
    settings: dict  # the analysis it was copied on (Transform.settings())
    hz: tuple[float, ...]  # its bins' centre frequencies
    lead_s: float = 0.0  # how long its first frame comes before what was copied (converted)

    @property
    def channels(self) -> int:
        return self.cells.shape[0]

    @property
    def duration_s(self) -> float:
        return self.cells.shape[-1] * self.hop / self.sample_rate

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.cells, self.mask))


def copy_clip(doc: Document, *, selection: Selection, channel: int | None = None) -> Clip:
    """What ``selection`` weighs of the active layer's cells (``channel``, or all)."""
    rect, mask = _selected(doc, selection)
    return _clip(doc, rect, mask, doc.read_complex(rect, channel))


def cut_clip(doc: Document, *, selection: Selection, channel: int | None = None,
             history: History | None = None) -> tuple[Clip, Step]:
    """:func:`copy_clip`, and the copied part taken out of the layer (its feathered
    edges in part) as one undo step."""
    with Recorder(doc, channel, "cut selection") as rec:
        rect, mask = _selected(doc, selection)
        cells = rec.read(rect)
        rec.write(rect, cells * (1 - mask), before=cells)
    return _clip(doc, rect, mask, cells), rec.finish(history)


def paste_clip(doc: Document, clip: Clip | None, *, at_s: float, mode: str = "add",
               semitones: float = 0.0, shift_hz: float = 0.0, channel: int | None = None,
               history: History | None = None) -> Step:
    """``clip`` with its first frame at ``at_s`` seconds, mixed in (``add``) or in place
    of what is there, as far as its weights say (``replace``), transposed by
    ``semitones`` and moved by ``shift_hz``; into ``channel`` or every channel (a
    one-channel clip goes into each). A clip copied on another analysis (of the same
    sample rate) is resynthesized and analysed as this document is. What runs past the
    file's end is left out (the step's notice says so). One undo step."""
    clip = _fitted(doc, clip, channel)
    if mode not in MODES:
        raise ParameterError(f"paste mode '{mode}' is unknown; use one of {', '.join(MODES)}")
    if not (isinstance(at_s, int | float) and 0 <= at_s < doc.length / doc.sample_rate):
        raise ParameterError(f"paste time {at_s!r} s is outside the file (0 to "
                             f"{doc.length / doc.sample_rate:.3f} s)")
    ratio = _ratio(doc, semitones, shift_hz)
    with Recorder(doc, channel, "paste") as rec:
        notice = _pasted(rec, clip, round(doc.frame_of(at_s - clip.lead_s)), ratio=ratio,
                         shift_hz=shift_hz, stretch=1.0, replace=mode == "replace")
    return rec.finish(history, notice=notice)


def paste_as_layer(doc: Document, clip: Clip | None, *, at_s: float, semitones: float = 0.0,
                   shift_hz: float = 0.0, channel: int | None = None, name: str | None = None,
                   history: History | None = None) -> Step:
    """:func:`paste_clip` into a new layer above the active one (made active): one undo
    step that adds the layer and paints it."""
    clip = _fitted(doc, clip, channel)
    step = new_layer(doc, name=name, history=None)
    try:
        pasted = paste_clip(doc, clip, at_s=at_s, semitones=semitones, shift_hz=shift_hz,
                            channel=channel, history=None)
    except BaseException:
        step.undo(doc)
        raise
    step.label = f"paste as layer '{doc.layers.active.name}'"
    step.patches, step.layer, step.channel = pasted.patches, pasted.layer, pasted.channel
    step.notice = pasted.notice
    if history is not None:
        history.push(step)
    return step


def move_selection(doc: Document, *, selection: Selection, by_s: float = 0.0,
                   semitones: float = 0.0, shift_hz: float = 0.0, stretch: float = 1.0,
                   heal: bool = False, channel: int | None = None,
                   history: History | None = None) -> Step:
    """The selection's content cut and mixed in again ``by_s`` seconds later (earlier if
    negative), transposed by ``semitones``, moved by ``shift_hz`` and ``stretch`` times
    as long (from its start); the hole it leaves empty, or healed from what surrounds it
    (``heal``: the heal brush's ``replace``). What falls off the file's ends is left
    out (the step's notice says so). One undo step."""
    ratio = _ratio(doc, semitones, shift_hz)
    if not (isinstance(by_s, int | float) and math.isfinite(by_s)):
        raise ParameterError(f"move by_s {by_s!r} is not a number of seconds")
    if not (isinstance(stretch, int | float) and STRETCH[0] <= stretch <= STRETCH[1]):
        raise ParameterError(f"move stretch {stretch!r} is outside {STRETCH[0]:g} to "
                             f"{STRETCH[1]:g} (1 keeps the length)")
    with Recorder(doc, channel, "move selection") as rec:
        rect, mask = _selected(doc, selection)
        cells = rec.read(rect)
        rec.write(rect, cells * (1 - mask), before=cells)
        if heal:
            rec.add_step(_healed(doc, selection, rect, channel))
        clip = _clip(doc, rect, mask, cells)
        notice = _pasted(rec, clip, rect.frame0 + round(doc.frame_of(by_s)), ratio=ratio,
                         shift_hz=shift_hz, stretch=stretch, replace=False)
    return rec.finish(history, notice=notice)


# -- the parts -------------------------------------------------------------------------
def _selected(doc: Document, selection: Selection) -> tuple[Rect, torch.Tensor]:
    rect = selection.cells(doc)
    mask = None if rect.empty else selection.mask(doc, rect)
    if mask is None or not bool(mask.max() > 0):
        raise ParameterError("the selection holds no cell of this document; nothing was "
                             "copied: select a region of the spectrogram first")
    return rect, mask


def _clip(doc: Document, rect: Rect, mask: torch.Tensor, cells: torch.Tensor) -> Clip:
    t = doc.transform
    return Clip((cells * mask).cpu(), mask.cpu(), rect.bin0, t.seconds_of(rect.frame0),
                doc.sample_rate, t.hop, t.settings(),
                tuple(t.bin_frequencies()[rect.bins].tolist()))


def _pasted(rec: Recorder, clip: Clip, frame0: int, *, ratio: float, shift_hz: float,
            stretch: float, replace: bool) -> str | None:
    """Write ``clip`` moved (as :func:`moved`) with its first frame at ``frame0``; the
    notice when part of it fell off the file."""
    doc = rec.doc
    first, cells = moved(clip.cells, transform=doc.transform, bin0=clip.bin0, ratio=ratio,
                         shift_hz=shift_hz, stretch=stretch)
    whole = Rect(first, first + cells.shape[1], frame0, frame0 + cells.shape[-1])
    rect = whole.clip(doc.n_bins, doc.n_frames)
    if rect.empty:
        return "the clip fell wholly outside the file: nothing was pasted"
    part = (slice(None), *rect.overlap(whole)[1])
    level = cells.abs().amax(dim=(0, 1))
    heard = level > AUDIBLE * level.max()  # frames that hold more than atoms' tails
    lost = int(heard.sum() - heard[part[2]].sum()) * doc.transform.hop / doc.sample_rate
    cells = cells[part].to(doc.device)
    if cells.shape[0] == 1 and len(doc.channel_indices(rec.channel)) > 1:
        cells = cells.expand(len(doc.channel_indices(rec.channel)), -1, -1)
    there = rec.read(rect)
    kept = there
    if replace:
        weight = _moved_mask(doc, clip, whole, ratio=ratio, shift_hz=shift_hz, stretch=stretch)
        kept = there * (1 - weight[part[1:]].to(doc.device))
    rec.write(rect, kept + cells, before=there)
    return (f"the clip ran past the file's ends: {lost:.2f} s of it were left out"
            if lost > 0 else None)


def _moved_mask(doc: Document, clip: Clip, whole: Rect, *, ratio: float, shift_hz: float,
                stretch: float) -> torch.Tensor:
    """The clip's weights where its content lands (over ``whole``): read back at the
    frequency and time each bin and frame of it came from."""
    hz = doc.transform.bin_frequencies()[whole.bin0:whole.bin1]
    frames = np.arange(whole.shape[1]) / stretch
    return _mask_at(clip, ((hz - shift_hz) / ratio).numpy(),
                    clip.start_s + frames * clip.hop / clip.sample_rate)


def _mask_at(clip: Clip, hz: np.ndarray, seconds: np.ndarray) -> torch.Tensor:
    """The clip's weights at frequencies ``hz`` and times ``seconds`` (bilinear; 0
    outside it): float32 ``[len(hz), len(seconds)]``."""
    m = clip.mask.double().numpy()
    times = clip.start_s + np.arange(m.shape[1]) * clip.hop / clip.sample_rate
    weights = []
    for axis, where, at in ((0, np.array(clip.hz), hz), (1, times, seconds)):
        pos = np.interp(at, where, np.arange(len(where)), left=-1, right=-1)
        lo = np.clip(np.floor(pos), 0, m.shape[axis] - 1).astype(int)
        hi, a = np.minimum(lo + 1, m.shape[axis] - 1), np.clip(pos - lo, 0, 1)
        weights.append((lo, hi, a, pos >= 0))
    (r0, r1, a, rows), (c0, c1, b, cols) = weights
    by_row = m[r0] * (1 - a)[:, None] + m[r1] * a[:, None]
    out = (by_row[:, c0] * (1 - b) + by_row[:, c1] * b) * (rows[:, None] & cols[None, :])
    return torch.from_numpy(out.astype(np.float32))


def _converted(clip: Clip, transform: Transform) -> Clip:
    """``clip`` on another analysis of its sample rate: its sound resynthesized (with
    silence either side as long as either analysis's atoms reach) and analysed again,
    over its band and the frames its sound reaches; its weights carried over by time
    and frequency."""
    source = make(clip.sample_rate, device="cpu", **clip.settings)
    target, sr = transform.to("cpu"), clip.sample_rate
    pad = math.ceil(max(source.reach, target.reach) / source.hop) + 1
    frames = clip.cells.shape[-1]
    length = (2 * pad + frames) * source.hop
    coeffs = torch.zeros((clip.channels, source.n_bins, source.n_frames(length)),
                         dtype=torch.complex64)
    coeffs[:, clip.bin0:clip.bin0 + len(clip.hz), pad:pad + frames] = clip.cells
    cells = target.forward(source.inverse(coeffs, length))
    origin = clip.start_s - pad * source.hop / sr  # the time of the sound's first sample
    hz = target.bin_frequencies()
    margin = max(target.resolution_hz(f) for f in (clip.hz[0], clip.hz[-1]))
    rows = torch.nonzero((hz >= clip.hz[0] - margin) & (hz <= clip.hz[-1] + margin))[:, 0]
    level = cells.abs().amax(dim=(0, 1))
    cols = torch.nonzero(level > SILENT * level.max())[:, 0]
    if not len(rows) or not len(cols):
        raise ParameterError("the clip holds nothing audible on this document's analysis")
    band, span = slice(int(rows[0]), int(rows[-1]) + 1), slice(int(cols[0]), int(cols[-1]) + 1)
    start = origin + span.start * target.hop / sr
    times = start + np.arange(span.stop - span.start) * target.hop / sr
    return Clip(cells[:, band, span].contiguous(), _mask_at(clip, hz[band].numpy(), times),
                band.start, start, sr, target.hop, target.settings(),
                tuple(hz[band].tolist()), lead_s=clip.lead_s + clip.start_s - start)


def _healed(doc: Document, selection: Selection, rect: Rect, channel: int | None) -> Step:
    """The hole at ``rect`` filled by one dab of the heal brush (``replace``: each bin's
    level interpolated across it from both sides in time, the phase running on),
    round, hard, as large as covers the rect's corners (as the brush allows), and
    limited to the selection."""
    t = doc.transform
    brush = get_brush("heal")
    f_lo, f_hi = doc.hz_of(rect.bin0), doc.hz_of(rect.bin1 - 1)
    t0, t1 = t.seconds_of(rect.frame0), t.seconds_of(rect.frame1 - 1)
    radius = {"radius_ms": 1000 * HEAL_REACH * (t1 - t0) / 2,
              "radius_hz": HEAL_REACH * (f_hi - f_lo) / 2}
    values, _ = brush.resolve({"mode": "replace", "hardness": 1.0, "radius_cents": 0.0,
                               "channel": -1 if channel is None else channel,
                               **{name: min(max(r, brush.param(name).min), brush.param(name).max)
                                  for name, r in radius.items()}}, "params")
    stroke = Stroke(doc, brush, values, curves={}, history=None,
                    limit=lambda r: selection.mask(doc, r))
    stroke.add([StrokePoint((t0 + t1) / 2, (f_lo + f_hi) / 2)])
    return stroke.end("heal the hole")


# -- checks ----------------------------------------------------------------------------
def _fitted(doc: Document, clip: Clip | None, channel: int | None) -> Clip:
    """``clip`` checked against ``doc`` (refused in one line if it cannot be pasted
    there), on ``doc``'s analysis."""
    if clip is None or clip.cells.numel() == 0:
        raise ParameterError("the clipboard is empty: copy or cut a selection first")
    if clip.sample_rate != doc.sample_rate:
        raise ParameterError(f"the clip was copied at {clip.sample_rate} Hz and this document "
                             f"is at {doc.sample_rate} Hz: paste it into a {clip.sample_rate} Hz "
                             "file, or copy from this one")
    targets = len(doc.channel_indices(channel))
    if clip.channels not in (1, targets):
        raise ParameterError(f"the clip holds {clip.channels} channels and the paste goes "
                             f"into {targets}: paste it into all channels of a "
                             f"{clip.channels}-channel file, or copy one channel")
    if clip.settings != doc.transform.settings():
        return _converted(clip, doc.transform)
    return clip


def _ratio(doc: Document, semitones: float, shift_hz: float) -> float:
    for name, value, limit in (("semitones", semitones, SEMITONES),
                               ("shift_hz", shift_hz, doc.sample_rate / 2)):
        if not (isinstance(value, int | float) and abs(value) <= limit):
            raise ParameterError(f"{name} {value!r} is outside -{limit:g} to {limit:g}")
    return 2 ** (semitones / 12)



