"""Mains hum and buzz: find its fundamental (50 or 60 Hz, drifting) and its
harmonics, and subtract them, keeping what sounds under them.

1. **Find.** Spectra of stretches of the audio (``SEGMENT_SECONDS`` each) score
   every fundamental within ``SEARCH_HZ`` of 50 and 60 Hz by how far its
   harmonics stand above the spectrum around them (the median within
   ``LOCAL_HZ``), taking the median over the stretches: a hum stands out all
   the time, a held note only while it is held. A harmonic counts when it
   stands ``STANDS_DB`` above; no hum unless two do and one by ``FOUND_DB``.
2. **Track.** The counted harmonics are demodulated at their nominal
   frequency; the phase of their amplitude-weighted sum, per harmonic number,
   says how the fundamental drifts, smoothed over ``DRIFT_SECONDS``.
   Over 1 s and over 4 s; the one whose harmonics then hold more energy wins
   (music under a steady hum makes a 1 s drift wander). Nothing is taken unless
   two of the counted harmonics then hold their phase, nor where the fundamental,
   tracked, lies more than ``SEARCH_HZ`` off the mains frequency (held notes). The drift is refined
   ``REFINE`` times from every counted harmonic, each weighted by its number.
3. **Widen.** A buzz has many strong harmonics (odd ones alone, or a rectifier's
   even ones) that a voice covers in most stretches; every other harmonic up to
   ``harmonics`` (and ``MAX_HZ``) is taken too where, followed along the drift, it
   stands ``STANDS_DB`` above the same estimate at the half harmonics beside it.
4. **Subtract.** Each harmonic is demodulated along the tracked phase and
   low-passed (a Gaussian of ``SMOOTH_SECONDS``), each moment weighted by the
   inverse of the power there (over ``QUIET_SECONDS``): the hum is read where
   little else sounds at its frequency, and speech and music near the harmonic
   change faster than the low-pass and average out. A hum's level holds steady,
   so the amplitude is capped at its median over the region (a note held on a
   harmonic for seconds would otherwise pass the low-pass and go with the hum).
   The amplitude, modulated back, is subtracted.

Work is done on blocks of ``BLOCK`` samples with the phase carried across, and
amplitudes on a coarse grid (one value per ``COARSE_SECONDS``), so memory stays
bounded on long files.
"""

import math

import numpy as np
from scipy.ndimage import maximum_filter1d, median_filter

from engine.progress import scaled, step
from engine.repair import Outcome
from engine.repair.carrier import (
    BLOCK,
    Carrier,
    amplitudes,
    drift,
    harmonic_carriers,
    quiet_weighted,
    smooth,
)

SEARCH_HZ = 0.5  # the fundamental is sought this far around 50 and 60 Hz (mains' tolerance)
SEGMENT_SECONDS = 2.0
SEGMENTS = 24  # stretches of the file a harmonic must stand out in (the median of them)
MIN_SEGMENTS = 5
MIN_SECONDS = 1.0
NEAR_HZ = 0.3
LOCAL_HZ = 8.0
STANDS_DB = 6.0
FOUND_DB = 10.0
DRIFT_SECONDS = (1.0, 4.0)  # the drift is smoothed over each, and the one that holds more
#                            hum kept: a drifting hum needs the first, a steady one the second
DRIFT_HARMONICS = 4  # the drift is read from the first harmonics found
SMOOTH_SECONDS = 0.5
COHERENT = 0.5  # a hum's harmonics hold their phase: their amplitudes summed keep half their length
COHERENT_SECONDS = 8.0  # ... over stretches this long (the drift followed)
COARSE_SECONDS = 0.005
SERIES_STEP = 3  # a hum's harmonics: the first among the first 3, each <= 3x the one below
REFINE = 2  # rounds the drift is refined in, from every harmonic found
QUIET_SECONDS = 0.02  # the power a moment is weighted by: short enough to see a voice's
#                       pauses, long enough to keep half harmonics 25 Hz apart 40 dB apart
MAX_HZ = 4000.0  # harmonics above this are not hum a mains field makes audible


def _prominence_db(mono: np.ndarray, sr: int) -> tuple[float, np.ndarray]:
    """Bin width (Hz) and, per bin up to ``MAX_HZ``, how far the spectrum's peak within
    ``NEAR_HZ`` stands above its median within ``LOCAL_HZ`` (dB): the median over up to
    ``SEGMENTS`` stretches of ``SEGMENT_SECONDS``, so only what stands out most of the
    time (a hum, not a held note) stands out."""
    # at least MIN_SEGMENTS stretches, overlapping on short audio: one stretch of noise
    # has a peak standing out somewhere, several rarely at the same frequency
    seg = min(int(SEGMENT_SECONDS * sr), len(mono) * 2 // (MIN_SEGMENTS + 1))
    size = 1 << int(math.ceil(math.log2(4 * seg)))
    df = sr / size
    top = int(min(MAX_HZ + 2 * LOCAL_HZ, sr / 2) / df)
    starts = np.linspace(0, len(mono) - seg, min(SEGMENTS, max(MIN_SEGMENTS, len(mono) // seg))
                         ).astype(int)
    window = np.hanning(seg)
    near, local = int(NEAR_HZ / df) + 1, int(LOCAL_HZ / df)
    stands = []
    for s in starts:
        power = np.abs(np.fft.rfft(mono[s:s + seg] * window, size)[:top]) ** 2 + 1e-300
        peak = maximum_filter1d(power, 2 * near + 1)
        # what lies 80 dB under the stretch's loudest bin (a window's sidelobes, rounding)
        # never stands out
        floor = median_filter(power, 2 * local + 1, mode="nearest") + power.max() * 1e-8
        stands.append(10 * np.log10(peak / floor))
    return df, np.median(stands, axis=0)


def find(mono: np.ndarray, sr: int, *, fundamental: str, max_harmonics: int,
         search_hz: float = SEARCH_HZ) -> tuple[float, list[int]] | None:
    """The fundamental and the harmonic numbers that stand out, or None: at least two
    harmonics must stand out ``STANDS_DB`` above the spectrum around them most of the
    time, and one of them ``FOUND_DB``. They form a series from the bottom: the first
    among the first ``SERIES_STEP`` harmonics, each at most ``SERIES_STEP`` times the
    one below (a hum's weak second harmonic may not stand out under a voice): notes
    held on high harmonics alone (a drone chord on the 11th, 13th, 22nd and 39th)
    are music."""
    if len(mono) < MIN_SECONDS * sr:
        return None  # too short to tell a hum's steadiness from noise's peaks
    df, stands = _prominence_db(mono, sr)
    bases = (50.0, 60.0) if fundamental == "auto" else (float(fundamental),)

    def at(hz):
        return stands[np.minimum(np.round(hz / df).astype(int), len(stands) - 1)]

    best = None
    for base in bases:
        k = np.arange(1, _highest(base, sr, max_harmonics) + 1)
        grid = np.arange(base - search_hz, base + search_hz + 1e-9, df / 4)
        scores = np.clip(at(k[None] * grid[:, None]), 0, None).sum(1)
        i = int(np.argmax(scores))
        if best is None or scores[i] > best[0]:
            best = (scores[i], grid[i], at(k * grid[i]))
    _, f0, per_harmonic = best
    harmonics = []
    for k in np.flatnonzero(per_harmonic >= STANDS_DB) + 1:
        if k <= SERIES_STEP * (harmonics[-1] if harmonics else 1):
            harmonics.append(int(k))
    if len(harmonics) < 2 or per_harmonic.max() < FOUND_DB:
        return None
    return float(f0), harmonics


def _highest(f0: float, sr: int, max_harmonics: int) -> int:
    """The highest harmonic number of ``f0`` considered: at most ``max_harmonics``,
    below ``MAX_HZ`` and 0.45 ``sr``."""
    return max(1, min(int(max_harmonics), int(min(MAX_HZ, 0.45 * sr) // f0)))


def run(x: np.ndarray, sample_rate: int, *, fundamental: str = "auto", harmonics: int = 40,
        progress=None, cancel=None) -> Outcome:
    sr = sample_rate
    mono = x.mean(0)
    found = find(mono, sr, fundamental=fundamental, max_harmonics=int(harmonics))
    if found is None:
        return Outcome(x)
    f0, ks = found
    taken = _taken(x, sr, f0=f0, ks=ks, upto=_highest(f0, sr, harmonics),
                   mains=50.0 if f0 < 55.0 else 60.0,  # find keeps f0 within SEARCH_HZ of it
                   progress=progress, cancel=cancel)
    step(1.0, progress, None)
    if taken is None:
        return Outcome(x)
    out, ks = taken
    level = 10 * math.log10(float(np.mean((out - x) ** 2)) + 1e-300)
    return Outcome(out, f"hum at {f0:.2f} Hz, {len(ks)} harmonic(s) up to {ks[-1] * f0:.0f} Hz: "
                        f"{level:.1f} dBFS RMS removed")


def removed(x: np.ndarray, sr: int, *, f0: float, ks: list[int], progress=None,
            cancel=None) -> np.ndarray | None:
    """``x`` ``[ch, n]`` less the harmonics ``ks`` of ``f0`` (near it: tracked),
    followed at a reduced rate and brought back to ``sr``; None where they are no hum
    (:func:`_hum`)."""
    taken = _taken(x, sr, f0=f0, ks=ks, upto=None, mains=None, progress=progress,
                   cancel=cancel)
    return None if taken is None else taken[0]


def _taken(x: np.ndarray, sr: int, *, f0: float, ks: list[int], upto: int | None,
           mains: float | None, progress, cancel) -> tuple[np.ndarray, list[int]] | None:
    """:func:`removed`, and the harmonic numbers taken: ``ks`` and those up to ``upto``
    that stand out along the tracked phase (:func:`_beside`); None where the hum,
    tracked, lies more than ``SEARCH_HZ`` off ``mains`` (:func:`_hum`)."""
    rate = _analysis_rate(sr, (max(ks[-1], upto or 0) + 1) * (f0 + SEARCH_HZ))
    hum = _hum(resample(x, sr, rate), rate, f0, ks, upto, mains, progress, cancel)
    if hum is None:
        return None
    return x - resample(hum[0], rate, sr, length=x.shape[-1]), hum[1]


def left(x: np.ndarray, sr: int, *, f0: float, ks: list[int]) -> float:
    """How much of a hum ``x`` ``[ch, n]`` holds: the power of its spectrum (one Hann
    window over all of it) within ``NEAR_HZ`` times k of each harmonic k of ``f0``, in
    ``ks`` (where a drifting hum's harmonics wander)."""
    mono = x.mean(0)
    power = np.abs(np.fft.rfft(mono * np.hanning(len(mono)))) ** 2
    df = sr / len(mono)
    return float(sum(power[max(0, math.ceil(k * (f0 - NEAR_HZ) / df)):
                           math.floor(k * (f0 + NEAR_HZ) / df) + 1].sum() for k in ks))


def _analysis_rate(sr: int, top_hz: float) -> int:
    """The lowest rate sr / 2^m that holds ``top_hz`` with a quarter to spare: the hum is
    found and followed there, then brought back to ``sr``."""
    rate = sr
    while rate % 2 == 0 and rate // 2 >= 2.5 * top_hz:
        rate //= 2
    return rate


def resample(x: np.ndarray, sr_in: int, sr_out: int, *, length: int | None = None) -> np.ndarray:
    """``x`` ``[ch, n]`` at ``sr_out`` (soxr, high quality), ``length`` samples if given."""
    if sr_in == sr_out:
        return x
    import soxr

    y = np.ascontiguousarray(soxr.resample(x.T, sr_in, sr_out, quality="HQ").T)
    if length is not None:
        y = np.pad(y, ((0, 0), (0, max(0, length - y.shape[-1]))))[:, :length]
    return y


def _hum(x: np.ndarray, sr: int, f0: float, ks: list[int], upto: int | None,
         mains: float | None, progress, cancel) -> tuple[np.ndarray, list[int]] | None:
    """The hum in ``x`` and its harmonic numbers: the harmonics ``ks`` of ``f0`` and
    those up to ``upto`` that stand out along the tracked phase (:func:`_beside`),
    tracked and low-passed. The drift is read from the first harmonics, then refined
    from all of ``ks``, each weighted by its number (a harmonic's phase tells the
    fundamental's k times more finely: a buzz's 15th harmonic was taken only 10 dB
    when the drift came from the first four alone). None where fewer than two of
    ``ks`` hold their phase (:func:`_coherence` under ``COHERENT``): a hum is a steady
    oscillator, and what turns is music or speech near its frequency (a bass note 1 Hz
    off the mains frequency, within the main lobe of the 2 s stretches hum is sought
    in, stood out at it and was taken); a voice's pitch on one of a hum's lowest
    harmonics does not turn the others. None too where the fundamental, tracked (its
    median), lies more than ``SEARCH_HZ`` off ``mains`` (None: anywhere): the drift
    followed held notes, whose partials lie near a hum's harmonics and hold their phase
    as a hum does (issue 49 item 6: a G major chord held in equal temperament was taken
    for a hum at 49.50 Hz and tracked to 49.39, a fifth of its B3; on 181 clean excerpts
    of unseen game music, 15 "hums" 14-40 dB SI-SDR, 5 tracked beyond the tolerance;
    of the 69 hums it found of 88 drawn on the takes of tests.takes, seeds 1-2, one,
    which it had left 1.9 dB worse, tracked 0.54 Hz off)."""
    coarse = max(1, round(COARSE_SECONDS * sr))
    nominal = Carrier(f0, None, coarse, sr)
    strongest = ks[:DRIFT_HARMONICS]
    first = amplitudes(x, nominal, strongest, coarse, scaled(progress, 0, 0.1), cancel)
    sigma = SMOOTH_SECONDS * sr / coarse
    best = None
    for i, seconds in enumerate(DRIFT_SECONDS):  # the drift followed best holds most hum
        carrier = Carrier(f0, drift(first, strongest, coarse, sr, seconds), coarse, sr)
        amps = smooth(amplitudes(x, carrier, ks, coarse, scaled(
            progress, 0.1 + 0.1 * i, 0.2 + 0.1 * i), cancel), sigma)
        held = float((np.abs(amps) ** 2).sum())
        if best is None or held > best[0]:
            best = (held, carrier, amps)
    _, carrier, amps = best
    if np.count_nonzero(_coherence(amps, sr / coarse) >= COHERENT) < 2:
        return None
    for i in range(REFINE):
        carrier = Carrier(f0, carrier.drift + drift(amps, ks, coarse, sr, SMOOTH_SECONDS),
                           coarse, sr)
        amps = amplitudes(x, carrier, ks, coarse, scaled(
            progress, 0.3 + 0.1 * i, 0.4 + 0.1 * i), cancel)
        amps = quiet_weighted(amps, sigma, QUIET_SECONDS * sr / coarse) if i == REFINE - 1 \
            else smooth(amps, sigma)
    if mains is not None and abs(f0 + float(np.median(carrier.drift)) - mains) > SEARCH_HZ:
        return None
    if upto:
        more, more_amps = _beside(x, carrier, ks, upto, sigma, scaled(progress, 0.5, 0.6),
                                  cancel)
        order = np.argsort(ks + more, kind="stable")
        ks = [(ks + more)[i] for i in order]
        amps = np.concatenate((amps, more_amps), axis=1)[:, order]
    amps = _steady_level(amps)
    out = np.zeros_like(x)
    n = x.shape[-1]
    centres = (np.arange(amps.shape[-1]) + 0.5) * coarse
    for b0 in range(0, n, BLOCK):
        step(0.6 + 0.4 * b0 / n, progress, cancel)
        b1 = min(n, b0 + BLOCK)
        t = np.arange(b0, b1)
        for i, zk in enumerate(harmonic_carriers(carrier.phase(b0, b1), ks)):
            for c in range(x.shape[0]):
                re = np.interp(t, centres, amps[c, i].real).astype(np.float32)
                im = np.interp(t, centres, amps[c, i].imag).astype(np.float32)
                out[c, b0:b1] += 2 * (re * zk.real - im * zk.imag)
    return out, ks


def _beside(x: np.ndarray, carrier: Carrier, ks: list[int], upto: int, sigma: float,
            progress, cancel) -> tuple[list[int], np.ndarray]:
    """The harmonics up to ``upto`` other than ``ks`` that stand ``STANDS_DB`` above the
    audio halfway between harmonics and hold their phase, and their amplitudes ``[ch, k,
    frames]``: each demodulated along the tracked phase and read as the hum is
    (:func:`quiet_weighted`), channels together, its power over the whole region
    against the same estimate at the half harmonics either side, where no hum is (what
    the estimate would take of the audio itself), and its phase held over 8 s
    (:func:`_coherence`: a steady note of music near a harmonic turns). A buzz has many
    strong harmonics, odd ones alone or even ones alone, that a voice covers in most 2 s
    stretches (:func:`find` misses them) while they are heard in its pauses; followed
    along the drift and read where little else sounds, they stand out of what lies
    beside them."""
    others = [k for k in range(1, upto + 1) if k not in ks]
    none = [], np.zeros((x.shape[0], 0, x.shape[-1] // carrier.coarse), complex)
    if not others:
        return none
    half = Carrier(carrier.f0 / 2, None if carrier.drift is None else carrier.drift / 2,
                    carrier.coarse, carrier.sr)  # its harmonic 2k is the hum's k
    js = sorted({j for k in others for j in (2 * k - 1, 2 * k, 2 * k + 1)})
    quiet = QUIET_SECONDS * carrier.sr / carrier.coarse
    tried = quiet_weighted(amplitudes(x.sum(0, keepdims=True), half, js, carrier.coarse,
                                        progress, cancel), sigma, quiet)  # channels together
    power = dict(zip(js, (np.abs(tried[0]) ** 2).mean(-1), strict=True))
    held = dict(zip(js, _coherence(tried, carrier.sr / carrier.coarse), strict=True))
    more = [k for k in others if held[2 * k] >= COHERENT and
            power[2 * k] >= 10 ** (STANDS_DB / 10) * max(power[2 * k - 1], power[2 * k + 1])]
    if not more:
        return none
    return more, quiet_weighted(amplitudes(x, carrier, more, carrier.coarse, None, cancel),
                                 sigma, quiet)


def _coherence(amps: np.ndarray, rate: float) -> np.ndarray:
    """Per harmonic, how far its demodulated amplitudes ``[ch, harmonics, frames]``
    (``rate`` frames a second; channels together) hold their phase: the length of
    their sum over the length of each summed, over stretches of
    ``COHERENT_SECONDS`` (the whole when shorter), the median of the stretches."""
    z = amps.sum(0)
    span = max(1, min(z.shape[-1], round(COHERENT_SECONDS * rate)))
    count = z.shape[-1] // span
    parts = z[:, :count * span].reshape(z.shape[0], count, span)
    ratio = np.abs(parts.sum(-1)) / (np.abs(parts).sum(-1) + 1e-300)
    return np.median(ratio, axis=-1)


def _steady_level(amps: np.ndarray) -> np.ndarray:
    """``amps`` no louder than each harmonic's median level: a hum's level holds steady,
    and what rises above it under a harmonic, a note held there a while, is music."""
    level = np.abs(amps)
    cap = np.median(level, axis=-1, keepdims=True)
    return amps * np.minimum(1.0, cap / np.maximum(level, 1e-300))
