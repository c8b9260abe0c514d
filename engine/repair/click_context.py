"""What the audio around a candidate says of it (engine.repair.declick):

- :func:`in_silence`: digital silence around it teaches no model, and needs none:
  a short burst in it is a click by itself, set back to silence.
- :func:`recurs`: the waveform comes back a period away, the candidate with it: a
  square wave's edge or a buzzy note's, which a short AR model cannot predict, is the
  sound, not a click.
- :func:`isolated`: a click is the sharpest thing about it; a voice's glottal pulses
  and a note's attacks come with others as sharp within a few milliseconds.
- :func:`onset`: a click leaves the audio after it as loud as before it; a struck
  note's or a drum's attack, the sharpest part of its sound, starts something louder.
- :func:`departures`: how far a candidate leaves the line through its neighbours, and
  :func:`spans`: how far the audio about it swings.
"""

import math

import numpy as np

from engine.repair import ar
from engine.repair.click_find import FLOOR, runs

EDGE_SECONDS = 0.0005  # the audio either side of a candidate compared with a period away
PERIOD_SECONDS = (0.002, 0.025)  # the periods a waveform's edge may recur at
RECUR = 0.9  # correlation above which a candidate is the waveform recurring, not a click
APART_SECONDS = 0.01  # a click is sharper than anything this far either side of it...
APART_GAP_SECONDS = 0.0005  # ...leaving out this much about it (its own reach)
ONSET_DB = 6.0  # the audio after a candidate louder than before it by this: a sound starts.
# On 181 clean 12 s excerpts of unseen game music (drascula, hyperrogue, frozen-bubble;
# 22.05 kHz) 46 % of what de-click found evident stood at an onset this loud (over 5 ms
# either side; median 4.9 dB); on bench_declick's clicked takes (seed 1) 16 % of what it
# found evident did (median 0 dB; other clicks lie about many), and it found as many
# clicks with the test at 3 dB, at 6 and without it (94.3 %).


def in_silence(signal: np.ndarray, *, max_len: int, quiet: int) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """``(starts, stops)`` of the clicks in digital silence: the bursts of a cluster (bursts
    less than ``quiet`` samples apart, ``quiet`` samples of silence either side of it)
    that holds at most ``max_len`` samples of sound and peaks above ``FLOOR``: a click, or
    two close together. A plosive's burst in silence is often shorter than a click may
    be, but comes with others (espeak-ng's: 15, 22 and 58 samples within 3 ms)."""
    silent = np.abs(signal) <= ar.SILENT
    s0, s1 = runs(silent, 1)
    long_ = s1 - s0 >= quiet
    c0, c1 = s1[long_][:-1], s0[long_][1:]  # between two long silences: a cluster
    heard = c1 - c0 - np.array([silent[a:b].sum() for a, b in zip(c0, c1, strict=True)], int)
    keep = heard <= max_len
    starts, stops = [], []
    for a, b in zip(c0[keep], c1[keep], strict=True):
        if np.abs(signal[a:b]).max() > FLOOR:
            r0, r1 = runs(~silent[a:b], 1)
            starts.append(a + r0)
            stops.append(a + r1)
    if not starts:
        return np.zeros(0, int), np.zeros(0, int)
    return np.concatenate(starts), np.concatenate(stops)


def _correlation(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v) / (math.sqrt(float(u @ u) * float(v @ v)) + 1e-30)


def recurs(signal: np.ndarray, c0: int, c1: int, sample_rate: int, threshold: float) -> bool:
    """Whether ``[c0, c1)`` is the waveform recurring, not a click: the audio about it
    (``EDGE_SECONDS`` either side) comes back a period away (``PERIOD_SECONDS``, 40-500
    Hz) with a normalised correlation above ``RECUR``, and that period's copy predicts
    the candidate as well as it predicts the audio about it (its error there does not
    stand out by ``threshold`` robust deviations of its error about the candidate, the
    copy's gain fitted there: a loud click would pull a gain fitted over itself off the
    waveform). A square wave's edge or a buzzy
    note's, which a short AR model cannot predict, is the sound; a click on a steady
    tone is not in the tone's previous period."""
    edge = max(2, round(EDGE_SECONDS * sample_rate))
    a, b = c0 - edge, c1 + edge
    if a < 0 or b > len(signal):
        return False
    seg = signal[a:b]
    energy = float(seg @ seg)
    shortest = max(b - a, round(PERIOD_SECONDS[0] * sample_rate))
    longest = round(PERIOD_SECONDS[1] * sample_rate)
    lo, hi = max(0, a - longest), min(len(signal), b + longest)
    region = signal[lo:hi]
    if energy <= 0 or len(region) < b - a:
        return False
    dots = np.correlate(region, seg, "valid")  # one a lag, from lo - a
    total = np.concatenate(([0.0], np.cumsum(region * region)))
    power = total[b - a:] - total[:len(total) - (b - a)]
    far = np.abs(np.arange(len(dots)) + lo - a) >= shortest
    if not far.any():
        return False
    score = np.where(far, dots / (np.sqrt(np.maximum(power, 0.0) * energy) + 1e-30), -np.inf)
    best = int(np.argmax(score))
    copy = region[best:best + b - a]
    about = np.r_[0:edge, b - a - edge:b - a]  # the candidate's surroundings, not itself
    if min(score[best], _correlation(seg[about], copy[about])) <= RECUR:
        return False  # (a click whose best match is another click: its surroundings differ)
    gain = float(seg[about] @ copy[about]) / max(float(copy[about] @ copy[about]), 1e-300)
    error = np.abs(seg - gain * copy)
    sigma = 1.4826 * float(np.median(error[about])) + 1e-12
    return float(error[edge:-edge].max()) <= max(threshold * sigma, FLOOR)


def _about(signal: np.ndarray, c0: int, c1: int, sample_rate: int) -> tuple[np.ndarray,
                                                                              np.ndarray]:
    """The samples within ``APART_SECONDS`` before and after ``[c0, c1)`` (within the
    signal), leaving out ``APART_GAP_SECONDS`` about it."""
    gap, reach = _apart(sample_rate)
    return signal[max(0, c0 - gap - reach):max(0, c0 - gap)], signal[c1 + gap:c1 + gap + reach]


def _apart(sample_rate: int) -> tuple[int, int]:
    """``APART_GAP_SECONDS`` (at least 6 samples) and ``APART_SECONDS`` in samples."""
    return max(6, round(APART_GAP_SECONDS * sample_rate)), round(APART_SECONDS * sample_rate)


def onset(signal: np.ndarray, c0: int, c1: int, sample_rate: int) -> bool:
    """Whether ``[c0, c1)`` starts a sound: the audio after it (:func:`_about`) is louder
    than the audio before it by ``ONSET_DB``."""
    before, after = _about(signal, c0, c1, sample_rate)
    return len(after) > 0 and float(after @ after) / len(after) > \
        10 ** (ONSET_DB / 10) * (float(before @ before) / max(len(before), 1))


def isolated(signal: np.ndarray, c0: int, c1: int, sample_rate: int, threshold: float) -> bool:
    """Whether ``[c0, c1)`` is sharper than anything about it: its largest second
    difference (its samples and one either side) is over ``threshold`` times the largest
    within ``APART_SECONDS`` either side, ``APART_GAP_SECONDS`` about it left out. A
    click is a step or a spike the audio around it has no like of; a voice's glottal
    pulses, which a short AR model cannot predict either, come a pitch period apart,
    each about as sharp as the next."""
    gap, reach = _apart(sample_rate)
    lo, hi = max(0, c0 - 1 - gap - reach), min(len(signal), c1 + 1 + gap + reach)
    sharp = np.abs(np.diff(signal[lo:hi], 2))  # sharp[i]: about sample lo + 1 + i
    at = np.arange(lo + 1, hi - 1)
    own = (at >= c0 - 1) & (at < c1 + 1)
    around = (at < c0 - 1 - gap) | (at >= c1 + 1 + gap)
    if not own.any() or not around.any():
        return True
    return float(sharp[own].max()) > threshold * float(sharp[around].max())


def departures(signal: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """How far each ``[starts[i], stops[i])`` departs at most from the straight line
    through the samples either side of it (0 at the signal's ends)."""
    out = np.zeros(len(starts))
    for i, (a, b) in enumerate(zip(starts, stops, strict=True)):
        if 0 < a and b < len(signal):
            line = np.linspace(signal[a - 1], signal[b], b - a + 2)[1:-1]
            out[i] = np.abs(signal[a:b] - line).max()
    return out


def spans(signal: np.ndarray, starts: np.ndarray, stops: np.ndarray,
          sample_rate: int) -> np.ndarray:
    """How far the audio about each ``[starts[i], stops[i])`` swings: its peak-to-peak
    range within ``APART_SECONDS`` either side, ``APART_GAP_SECONDS`` about it left out
    (0 where none is)."""
    out = np.zeros(len(starts))
    for i, (a, b) in enumerate(zip(starts, stops, strict=True)):
        about = np.concatenate(_about(signal, int(a), int(b), sample_rate))
        if len(about):
            out[i] = float(about.max() - about.min())
    return out
