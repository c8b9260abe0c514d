"""Processing a selection's content: gain, normalise, fade in, fade out and invert,
over a time range (every bin) or a spectral selection (weighted by its mask, so a
feathered edge gets part of the effect), on the active layer, one channel or all,
as one undo step (app.session.edit_step).

Each is a factor per cell: ``g`` (a gain, -1 for invert, a fade's ramp in time
over the range) blended by the selection's weight ``w`` to ``1 + (g - 1) w``. A
normalise measures the peak of the selected content alone, resynthesized (its
cells times their weights, every other cell silent; the loudest of its channels), and
gains it to ``peak_db`` dBFS: up or down, as the user asked."""

import math

import numpy as np
import torch

from app.session.edit_step import Recorder
from app.session.selection import Selection
from engine.errors import ParameterError
from engine.model.document import Document
from engine.model.history import History, Step
from engine.region import Rect
from engine.runtime.cost import full_chunk

OPS = {"gain": {"db": 0.0}, "normalize": {"peak_db": -1.0}, "fade_in": {"curve": "linear"},
       "fade_out": {"curve": "linear"}, "invert": {}}  # each op's parameters, with defaults
GAIN_DB = (-120.0, 48.0)  # a gain, and the most a normalise raises by
PEAK_DB = (-120.0, 0.0)
CURVES = ("linear", "cosine")
RUN_CELLS = 1 << 20  # cells processed at a time


def process_selection(doc: Document, *, op: str, selection: Selection | None = None,
                      start: float | None = None, end: float | None = None,
                      channel: int | None = None, history: History | None = None,
                      **params) -> Step:
    """``op`` (gain: ``db``; normalize: ``peak_db``; fade_in, fade_out: ``curve``
    linear or cosine; invert) over ``selection``, or the time range ``start`` to
    ``end`` seconds (default the file's start and end) of every bin. One undo step;
    a normalise of silence, or a gain of 0 dB, changes nothing and says so in the
    step's notice."""
    values = _params(op, params)
    with Recorder(doc, channel, f"{op.replace('_', ' ')} selection") as rec:
        rect, weight, (t0, t1) = _region(doc, selection, start, end)
        if op == "normalize":
            peak = _peak(doc, rect, weight, channel)
            if not peak > 0:
                return rec.finish(history, notice="the selection is silent: nothing to "
                                                  "normalise")
            values = {"db": _raise_db(values["peak_db"], peak)}
        if values.get("db") == 0:
            return rec.finish(history, notice=f"{op} of 0 dB: nothing to change")
        for part in _runs(rect):
            g = _factor(doc, op, values, part, t0, t1)
            if weight is not None:
                w = weight[:, part.frame0 - rect.frame0:part.frame1 - rect.frame0]
                g = 1 + (g - 1) * w
            cells = rec.read(part)
            rec.write(part, cells * g, before=cells)
    return rec.finish(history)


def _raise_db(peak_db: float, peak: float) -> float:
    """The gain that brings ``peak`` to ``peak_db`` dBFS; refused past ``GAIN_DB``."""
    gain_db = peak_db - 20 * math.log10(peak)
    if gain_db > GAIN_DB[1]:
        raise ParameterError(f"normalising the selection to {peak_db:g} dBFS would raise it "
                             f"by {gain_db:.0f} dB, more than {GAIN_DB[1]:g} dB: it is all but "
                             "silent; select what you mean to hear")
    return gain_db


def _params(op: str, params: dict) -> dict:
    if op not in OPS:
        raise ParameterError(f"unknown selection process '{op}'; use one of {', '.join(OPS)}")
    unknown = sorted(set(params) - set(OPS[op]))
    if unknown:
        raise ParameterError(f"{op} has no parameter(s) {', '.join(unknown)}; it takes "
                             f"{', '.join(OPS[op]) or 'none'}")
    values = {**OPS[op], **params}
    for name, (low, high) in (("db", GAIN_DB), ("peak_db", PEAK_DB)):
        value = values.get(name, 0.0)
        if not (isinstance(value, int | float) and low <= value <= high):
            raise ParameterError(f"{op} {name} = {value!r} is outside {low:g} to {high:g} dB")
    if values.get("curve", "linear") not in CURVES:
        raise ParameterError(f"{op} curve '{values['curve']}' is unknown; use one of "
                             f"{', '.join(CURVES)}")
    return values


def _region(doc: Document, selection: Selection | None, start: float | None,
            end: float | None) -> tuple[Rect, torch.Tensor | None, tuple[float, float]]:
    """The cells processed, their weights (None: all of them wholly) and the span of
    time a fade runs over."""
    seconds = doc.length / doc.sample_rate
    if selection is not None:
        if start is not None or end is not None:
            raise ParameterError("give a selection or a time range (start, end), not both")
        rect = selection.cells(doc)
        weight = None if rect.empty else selection.mask(doc, rect)
        if weight is None or not bool(weight.max() > 0):
            raise ParameterError("the selection holds no cell of this document: select a "
                                 "region of the spectrogram first")
        t0, t1 = (0.0, seconds) if selection.inverted else selection.span()[:2]
        if not t1 > t0:
            raise ParameterError("the selection lasts no time: select a longer stretch")
        return rect, weight, (t0, t1)
    t0, t1 = 0.0 if start is None else start, seconds if end is None else end
    if not all(isinstance(v, int | float) and math.isfinite(v) for v in (t0, t1)):
        raise ParameterError(f"the range {t0!r} to {t1!r} s is not two numbers of seconds")
    if not t1 > t0:
        raise ParameterError(f"the range {t0:g} to {t1:g} s is empty: give an end after "
                             "its start")
    t = doc.transform
    first = max(0, math.ceil(doc.frame_of(t0) - 1e-9))
    last = doc.n_frames if t1 >= seconds else min(doc.n_frames,
                                                  math.floor(doc.frame_of(t1) + 1e-9) + 1)
    if last <= first:
        raise ParameterError(f"the range {t0:g} to {t1:g} s holds no frame of this file "
                             f"(frames are {1000 * t.hop / doc.sample_rate:.1f} ms apart, "
                             f"the file lasts {seconds:.3f} s)")
    return Rect(0, doc.n_bins, first, last), None, (t0, t1)


def _runs(rect: Rect):
    frames = max(1, RUN_CELLS // max(1, rect.shape[0]))
    for f in range(rect.frame0, rect.frame1, frames):
        yield Rect(rect.bin0, rect.bin1, f, min(f + frames, rect.frame1))


def _factor(doc: Document, op: str, values: dict, part: Rect, t0: float,
            t1: float) -> torch.Tensor:
    """``g`` for the frames of ``part``: ``[frames]`` float32 on the document's device."""
    if op in ("gain", "normalize"):
        g = np.full(part.shape[1], 10 ** (values["db"] / 20))
    elif op == "invert":
        g = np.full(part.shape[1], -1.0)
    else:
        t = doc.transform.seconds_of(np.arange(part.frame0, part.frame1, dtype=np.float64))
        u = np.clip((t - t0) / (t1 - t0), 0, 1)
        u = u if op == "fade_in" else 1 - u
        g = u if values["curve"] == "linear" else np.sin(np.pi / 2 * u) ** 2
    return torch.from_numpy(g.astype(np.float32)).to(doc.device)


def _peak(doc: Document, rect: Rect, weight: torch.Tensor | None,
          channel: int | None) -> float:
    """The peak of the selected content alone, resynthesized, a chunk at a time."""
    t, n = doc.transform, doc.length
    s0, s1 = t.samples_affected(rect.frame0, rect.frame1, n)
    chans = len(doc.channel_indices(channel))
    peak = 0.0
    for a in range(s0, s1, full_chunk(t)):
        b = min(s1, a + full_chunk(t))
        fa, fb = t.frames_needed(a, b, n)
        frames = torch.zeros((chans, doc.n_bins, fb - fa), dtype=torch.complex64,
                             device=doc.device)
        part = Rect(rect.bin0, rect.bin1, max(fa, rect.frame0), min(fb, rect.frame1))
        if not part.empty:
            cells = doc.read_complex(part, channel)
            if weight is not None:
                cells = cells * weight[:, part.frame0 - rect.frame0:part.frame1 - rect.frame0]
            frames[:, part.bins, part.frame0 - fa:part.frame1 - fa] = cells
        wave = t.inverse_span(frames, fa, sample0=a, sample1=b, length=n)
        peak = max(peak, float(wave.abs().max()))
    return peak
