"""Clicks: find the samples an AR model of the audio around them cannot explain
(engine.repair.click_find), and re-estimate them by stable least-squares AR
interpolation (engine.repair.click_fill, engine.repair.ar).

:func:`run` is the de-click module: every click of a region, in passes (each
learns its models from what the one before repaired, so a click that hid its
neighbour no longer does), over parts of the file a few seconds long (memory
bounded, progress and cancel between them). :func:`repair_click` serves the heal
brush (one click under a dab).
"""

import math
from dataclasses import dataclass

import numpy as np

from engine.progress import step
from engine.repair import Event, Outcome, ar, click_context, click_fill, click_find
from engine.repair.click_find import FLOOR, live, order_for

CONTEXT_SECONDS = 0.01  # the audio a click's repair is learnt from and checked against
SILENCE_SECONDS = 0.002  # a click in digital silence has this much of it either side
PART_SECONDS = 20.0  # the module works through a channel this much at a time
MARGIN_SECONDS = 0.1  # ...seeing this much more either side (models, periods, repairs)
BLOCK_THRESHOLD = 8.0  # robust deviations of its block's error scale (sensitivity 5)
LOCAL_THRESHOLD = 6.0  # times the error's RMS about it (sensitivity 5)
STEP = 0.1  # the thresholds' reciprocal grows by this a step of sensitivity (limits)
RECUR_THRESHOLD = 4.0  # a period's copy that predicts a candidate within this is the sound
# (robust deviations of its error about the candidate). At 16 it took most clicks on voiced
# speech or steady music for the waveform recurring: a period's copy of real audio misses
# by a few deviations anyway, a click's error stood out by 4-8 (median; the sound's own
# recurring edges: 1.4-2.6, 95 % under 6), and 20 % of the clicks on the 44.1 kHz takes of
# bench_declick_long were dropped so; at 4, recall 59.9 -> 78.1 % there (-14 to -8 dBFS:
# 94.2 -> 98.6 %) and 90.6 -> 94.3 % on bench_declick's seed 1, with 1.39 -> 1.51 false
# finds a second on clean speech and 0.17 -> 0.17 on clean music (medians).
SURE = 3.0  # a candidate whose error stands out of the RMS about it by this many times the
# local threshold is a click however the waveform recurs. Candidates the recurrence test
# took for the sound stood out 6.5-7.6 times (median; 95 % under 12.6, 99 % under 27) on
# the clean takes of bench_declick_long (44.1 kHz, 3 seeds) and bench_declick (22.05 kHz);
# clicks it took for the sound, 11-22 times (median; a quarter over 17-42). With it, 78.1 ->
# 90.1 % of bench_declick_long's clicks found (music 69.0 -> 86.1 %), its false finds on
# the clean takes unchanged; bench_declick (seeds 1-3) 94.2 -> 94.5 %.
CERTAIN = 4.0  # a candidate whose error stands out of the RMS about it by this many times
# the local threshold is a click wherever it lies, and so is one that departs from the line
LOUD_DB = 3.0  # through its neighbours by this much over the level the loudest 1 % of its
LOUD_PERCENTILE = 99.0  # part exceeds and over how far the audio swings within 10 ms of it
# (click_context.spans: on unseen game music a drum's crack, louder than the loudest 1 %
# of its part, passed for a click every beat, and made the audio look clicked; what
# passed so departed 0.45-0.85 times the swing about it (1st-99th percentile), the
# clicks of bench_declick 0.28-7.7 times, median 1.0, seed 1: as many found with the
# swing as without); any other must be isolated: sharper than anything
APART = 3.0  # within 10 ms by this many times (click_context.isolated), and no onset
# (click_context.onset: a note's attack is its sharpest part). On clean espeak-ng
# speech (22.05 kHz, seeds 1-2), what de-click found stood out 7.6 times the RMS about it
# (median; 90 % under 14, 99 % under 26), most of it a voice's glottal pulse at an onset,
# which a short AR model cannot predict but whose neighbours a pitch period away are as
# sharp; clicks drawn on the same takes stood out 30 times (a quarter under 15). With the
# three tests, 19 of 25 clean speech takes (11 of 12 music excerpts) are left bit for bit,
# 0 (2) before; but clicks no sharper than the audio about them were missed too
# (bench_declick, seeds 1-3: 94.5 -> 87.6 % found; bench_declick_long 90.1 -> 80.1 %).
EVIDENCE = 3  # so the three tests hold only where fewer than this many evident clicks
EVIDENCE_SECONDS = 2.5  # (certain, loud or isolated) lie this either side of a candidate:
# where the audio evidently has clicks, a candidate is one as before. On the clean takes
# above, at most 1 evident click a speech take (6 in one music excerpt); clicked, 1-50 a
# second, most of them are evident. With the gate, bench_declick finds 94.5 % again,
# bench_declick_long 90.0 %, and the clean takes left bit for bit are the same.
PASSES = 2  # each pass learns its models from what the one before repaired
CRACKLE = 0.7071  # crackle: the thresholds times this (3 dB more readily found)
CRACKLE_PASSES = 4  # ...in more passes (each repairs the largest, the next finds more)
CRACKLE_SILENCE_SECONDS = 0.00025  # ...and clicks in silence need this much of it


@dataclass(frozen=True)
class Limits:
    """What a click is at a sensitivity: how far its error stands out of its block's
    scale (``block``) and of the error about it (``local``), within what a period's copy
    predicting it makes it the sound (``recur``) unless it stands out of the error about
    it by ``sure`` (then a click however the waveform recurs), within what it must be
    ``apart`` times sharper than anything about it where the audio about it shows no
    clicks (:func:`_chosen`) unless it stands out by ``certain``
    (0 where every candidate is: crackle is dense) or departs from the line through its
    neighbours by ``loud`` times the level the loudest 1 % of its part exceeds and the
    audio's swing about it, its longest run
    (``max_len`` samples), the silence a click in digital silence has either side
    (``quiet`` samples), and the passes over the audio."""

    block: float
    local: float
    sure: float
    certain: float
    loud: float
    apart: float
    recur: float
    max_len: int
    quiet: int
    passes: int


def limits(sample_rate: int, *, sensitivity: float = 5.0, crackle: bool = False) -> Limits:
    """The :class:`Limits` at ``sensitivity`` (0-10; 5 the default) and for ``crackle``
    (dense small clicks: at most 1 ms, 3 dB more readily found, in more passes, with less
    silence about those in digital silence).

    The thresholds are the defaults times a factor whose reciprocal grows by ``STEP`` a
    step: 2 at sensitivity 0, 1 at 5, 2/3 at 10. What stands out of the audio's own
    error by chance is found about ``exp(k / factor)`` times (k about 4-5 on the
    44.1 kHz takes of bench_declick_long, speech and music alike), so each step finds
    about as many more as the one before. Steps even in decibels (0.6 dB, 10 halving
    the thresholds) found 1.03-1.11 times as many events a step up to 5 and 1.5-2.2
    times a step from 7 (issue 50: sensitivity 8 found 32 in 10 s of an interview, 10
    found 725)."""
    factor = 1.0 / (1.0 + STEP * (np.clip(sensitivity, 0.0, 10.0) - 5.0))
    found = factor * (CRACKLE if crackle else 1.0)
    return Limits(block=BLOCK_THRESHOLD * found, local=LOCAL_THRESHOLD * found,
                  sure=SURE * LOCAL_THRESHOLD * found,
                  certain=0.0 if crackle else CERTAIN * LOCAL_THRESHOLD * found,
                  loud=10 ** (LOUD_DB / 20) * found,
                  apart=APART * factor,
                  recur=RECUR_THRESHOLD * factor,
                  max_len=round((1.0 if crackle else 3.0) / 1000 * sample_rate),
                  quiet=round((CRACKLE_SILENCE_SECONDS if crackle else SILENCE_SECONDS)
                              * sample_rate),
                  passes=CRACKLE_PASSES if crackle else PASSES)


def _merged(events: list[Event]) -> list[Event]:
    """One event per click: what a later pass repaired again, touching an earlier
    repair of the same channel, is the same click."""
    out: list[Event] = []
    for e in sorted(events, key=lambda e: (e.channel, e.start)):
        last = out[-1] if out else None
        if last is not None and last.channel == e.channel and \
                e.start <= last.start + last.length + click_fill.REACH:
            end = max(last.start + last.length, e.start + e.length)
            out[-1] = Event(last.start, end - last.start, e.channel)
        else:
            out.append(e)
    return sorted(out, key=lambda e: (e.start, e.channel))


def _chosen(seg: np.ndarray, starts: np.ndarray, stops: np.ndarray, peaks: np.ndarray, sr: int,
            limit: Limits, loud: float, evidence: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which candidates are clicks, and ``evidence`` (where evident clicks were found,
    sorted) with this pass's evident ones added. A candidate is a click unless a period's
    copy predicts it (and it stands out by less than ``sure``); where fewer than
    ``EVIDENCE`` evident clicks lie within ``EVIDENCE_SECONDS`` of it, it must be evident
    itself: certain, loud or isolated and no onset (:class:`Limits`)."""
    plain = np.array([peak > limit.sure or not click_context.recurs(seg, r0, r1, sr, limit.recur)
                      for r0, r1, peak in zip(starts, stops, peaks, strict=True)], bool)
    clear = (peaks > limit.certain) | (click_context.departures(seg, starts, stops) > limit.loud
                                       * np.maximum(loud, click_context.spans(seg, starts,
                                                                              stops, sr)))
    evident = plain & clear
    evident[plain & ~clear] = [click_context.isolated(seg, r0, r1, sr, limit.apart)
                               and not click_context.onset(seg, r0, r1, sr)
                            for r0, r1 in zip(starts[plain & ~clear], stops[plain & ~clear],
                                              strict=True)]
    evidence = np.sort(np.concatenate([evidence, starts[evident]]))
    reach = round(EVIDENCE_SECONDS * sr)
    near = (np.searchsorted(evidence, starts + reach, "right")
            - np.searchsorted(evidence, starts - reach))
    return evident | (plain & (near >= EVIDENCE)), evidence


def _part(signal: np.ndarray, lo: int, hi: int, sr: int,
          limit: Limits) -> tuple[list[Event], set[int]]:
    """Find and repair the clicks of ``signal`` starting in ``[lo, hi)`` (in place); the
    clicks repaired (channel 0) and where those left alone at the signal's ends start."""
    margin = round(MARGIN_SECONDS * sr)
    a, b = max(0, lo - margin), min(len(signal), hi + margin)
    seg = signal[a:b]
    found = []
    s0, s1 = click_context.in_silence(seg, max_len=limit.max_len, quiet=limit.quiet)
    for r0, r1 in zip(s0, s1, strict=True):
        if lo <= a + r0 < hi:
            seg[r0:r1] = 0.0
            found.append(Event(a + int(r0), int(r1 - r0), 0))
    finder = click_find.Finder(seg, sr)
    loud = float(np.percentile(np.abs(seg), LOUD_PERCENTILE)) if len(seg) else 0.0
    span = max(4 * finder.order, round(CONTEXT_SECONDS * sr))
    left_alone, evidence = set(), np.zeros(0, int)
    for _ in range(limit.passes):
        starts, stops, peaks = finder.clicks(block=limit.block, local=limit.local,
                                             max_len=limit.max_len)
        chosen, evidence = _chosen(seg, starts, stops, peaks, sr, limit, loud, evidence)
        written = []
        for r0, r1, fixed in click_fill.fill(seg, starts[chosen], stops[chosen],
                                             order=finder.order, span=span):
            if not lo <= a + r0 < hi:
                continue  # another part's
            if fixed is None:
                left_alone.add(a + r0)
                continue
            seg[r0:r1] = fixed
            written.append((r0, r1))
            found.append(Event(a + r0, r1 - r0, 0))
        if not written:
            break
        finder.repaired(*np.array(written).T)
    return found, left_alone


def run(x: np.ndarray, sample_rate: int, *, sensitivity: float = 5.0, crackle: bool = False,
        within: tuple[int, int] | None = None, progress=None, cancel=None) -> Outcome:
    """Every click of ``x`` ``[channels, n]`` that starts within the samples ``within``
    (default: all; the rest is context the models learn from), found
    (engine.repair.click_find) and repaired (engine.repair.click_fill) over parts of
    ``PART_SECONDS``, as :func:`limits` says at ``sensitivity`` and for ``crackle``."""
    sr = sample_rate
    limit = limits(sr, sensitivity=sensitivity, crackle=crackle)
    out = np.array(x, np.float64, copy=True, order="C")
    events: list[Event] = []
    part = round(PART_SECONDS * sr)
    total = out.shape[0] * max(1, math.ceil(out.shape[1] / part))
    done, left_alone = 0, 0
    w0, w1 = within or (0, out.shape[1])
    for ch, signal in enumerate(out):
        for lo in range(0, len(signal), part):
            step(done / total, progress, cancel)
            done += 1
            a, b = max(lo, w0), min(lo + part, len(signal), w1)
            if a >= b:
                continue
            found, alone = _part(signal, a, b, sr, limit)
            events += [Event(e.start, e.length, ch) for e in found]
            left_alone += len(alone)
    step(1.0, progress, None)
    events = _merged(events)
    if not events:
        return Outcome(x, "", [])
    lengths = sorted(e.length for e in events)
    summary = (f"{len(events)} click(s) repaired ({lengths[0]}-{lengths[-1]} samples, median "
               f"{lengths[len(lengths) // 2]})")
    if left_alone:
        summary += f"; {left_alone} at the file's ends left alone"
    return Outcome(out, summary, events)


def repair_click(x: np.ndarray, candidates: slice, sample_rate: int, *,
                 threshold: float = 20.0, max_ms: float = 5.0) -> np.ndarray | None:
    """``x`` (one channel) with the click inside ``candidates`` repaired, or None when
    nothing there stands out, or the audio around it cannot teach a model."""
    order = min(order_for(sample_rate), max(4, (len(x) - (candidates.stop - candidates.start))
                                             // 8))
    inside = np.zeros(len(x), bool)
    inside[candidates] = True
    if not ar.usable(x[~inside], order):
        return None
    a = ar.levinson(ar.autocorrelation(x[None], order, present=~inside[None]))
    fwd, bwd = (e[0] for e in click_find.errors(x, a, len(x), np.zeros(1, int)))
    err = np.minimum(fwd, bwd)
    context = ~inside & live(x) & (err > 0)
    if context.sum() < 64:
        return None
    sigma = 1.4826 * float(np.median(err[context])) + 1e-12
    starts, stops = click_find.runs(inside & (err > max(threshold * sigma, FLOOR)),
                                    max(1, order // 4))
    short = stops - starts <= max_ms / 1000 * sample_rate
    starts, stops = click_find.extents(fwd, bwd, starts[short], stops[short], sample_rate)
    span = max(4 * order, round(CONTEXT_SECONDS * sample_rate))
    out, changed = x.copy(), False
    for r0, r1, fixed in click_fill.fill(x, starts, stops, order=order, span=span):
        if fixed is not None:
            out[r0:r1], changed = fixed, True
    return out if changed else None
