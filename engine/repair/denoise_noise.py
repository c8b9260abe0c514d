"""The noise power a de-noise works against: from a profile (samples of noise only,
the selection the user marked), or learnt from the quietest parts of the audio.

Learnt: a low quantile (5 %) over time of the power smoothed over ~0.1 s, what a
bin holds when nothing but noise is in it (no pause across the whole band at
once is needed), made a mean by a bias factor measured once on white noise
through the same analysis. In the adaptive mode the same over 4 s stretches every
2 s, interpolated between them, so the estimate follows noise that changes.

A programme that never leaves some bins raises their low quantile; three checks
bring such bins back: a peak above the spectrum's envelope is brought down to it
(with ``tonal`` only where it is not steady: a hum, a whistle keeps its mean power
near its low quantile, but so does a drone of music, so steady tones are noise
only when the user says so); a bin that is not steady may lie no more than
3 dB per octave (pink noise, the steepest hiss) above the steady bins around it;
and every bin lies at most 4 dB above a straight line fitted robustly through the
spectrum in (log frequency, dB), hiss being broad and smooth (a bass or a chord
held through a take was learnt 14-21 dB above the hiss; those takes lost up to
1.8 dB SI-SDR). All only ever lower the estimate: less reduction, never more. (A
brown noise, 6 dB an octave, is therefore learnt low in the bass where few bins are
steady: letting the cap follow the steady bins' own steeper line learnt the bass
of brown hiss over speech, but over music that line runs through two clusters of
steady bins, the lowest and the top octave, and learnt the noise 4-8 dB high from
50 to 800 Hz: 3 of 24 music excerpts under brown or pink hiss came out worse than
their input, by up to 2.7 dB SI-SDR. A noise profile learns the bass exactly.)

Whether there is a noise at all is judged first: a steady noise puts a floor under
the power of each bin it dominates, many frames (FLOOR_SHARE) within 4.8 dB of the
low quantile; a clean recording's quietest moments are few and spread over tens of
dB; and a noise's floor holds its level through the take (the same within LEVEL_DB
from one 4 s stretch to the next, but for a drift all bins share), where a
programme's quietest moments move with it. Where that holds in under NOISE_SHARE of
the bins the recording has, and in fewer than STEADY_BINS below RUMBLE_HZ whose mean
power sits at the floor (no peak: a rumble, not a held bass), nothing is learnt
(NOTHING_FOUND) and de-noise leaves the audio bit for bit (speech with no noise
added: 32 takes of 32 left alone; before, PESQ-WB 4.16-4.44 of 4.64; clean music
the project never heard, 96 excerpts of 12 s: 3 changed, where 14 were before the
level and the rumble's band were checked). The channel's mean is taken out first: a
DC offset is steady but no noise (with one of 2 % of the peak in one channel, 5 more
of 18 clean asc-music excerpts were taken for a rumble). The line is fitted through
the bins on such a floor when there are enough of them. Not told apart: a rumble
heard only below about 170 Hz (brown noise down to 1 Hz) at 10-20 dB SNR is mostly
judged absent, as is a noise that ramps (for the default; adaptive judges each 4 s by
itself), and a dense mix whose floor holds (a compressed band, an ambient pad).
"""

import functools

import numpy as np
from scipy import fft, ndimage

from engine.errors import ParameterError
from engine.progress import CancelFlag, step

SMOOTH_S = 0.12  # the learnt estimate smooths the power over this long
QUANTILE = 0.05  # ... and takes this quantile of it over time
TRACK_S = 4.0  # the adaptive estimate: that quantile over this long, every half of it
PEAK_HZ = 200.0  # the learnt spectrum's envelope: a median over this many Hz
PEAK = 2.0  # a learnt bin this far above the envelope is a peak
STEADY = 1.25  # a bin whose mean power is within this factor of its learnt noise is steady
SLOPE_DB = 3.0  # a bin that is not steady lies at most this far above steady ones per octave
WARP_HZ = 200.0  # ... octaves counted on log2(f + WARP_HZ): the lowest bins are not octaves apart
LINE_DB = 4.0  # the learnt noise lies at most this far above a line through it in (log f, dB)
LINE_ROUNDS = 4  # ... fitted this many times, each without the bins far off the last fit
FLOOR_SPREAD = 3.0  # frames within this factor (4.8 dB) of a bin's low quantile lie on its floor
FLOOR_SHARE = 0.3  # a bin whose floor holds this share of its frames is noise's (noise is steady)
LEVEL_DB = 1.0  # ... and whose floor over TRACK_S stretches deviates by at most this
NOISE_SHARE = 0.2  # the noise is there when that holds in this share of the bins, ...
STEADY_BINS = 2  # ... or in this many whose mean power is at their floor besides ...
RUMBLE_HZ = 200.0  # ... below this (a rumble)
EMPTY_DB = 30.0  # bins this far under the loudest tenth are a band the recording lacks
TOOK_DB = 20.0  # in a voice, a cell whose power a voice model took this much of is noise's
TOOK_BINS = 5  # ... judged over this many bins
TOOK_FRAMES = 3
TOOK_CELLS = 20  # ... a bin with fewer such cells keeps its low quantile
OVER_DB = 0.3  # ... and the mean of those cells must lie within this over it (bins' median)
FRAMES_AT_ONCE = 4096  # power spectra computed at a time (a Cancel waits for at most these)
BINS_AT_ONCE = 128  # bins smoothed and ranked at a time (likewise)


def window(n_fft: int) -> np.ndarray:
    return np.sqrt(0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft))


def power_frames(x: np.ndarray, n_fft: int, cancel: CancelFlag | None = None, *,
                 offset: np.ndarray | None = None) -> np.ndarray:
    """Power spectra (the processing's window) of the analysis grid (hop n_fft / 2)
    lying wholly inside ``x`` less ``offset`` (per channel), FRAMES_AT_ONCE at a time
    (``cancel`` looked at between)."""
    hop = n_fft // 2
    count = (x.shape[1] - n_fft) // hop + 1
    if count < 1:
        return np.zeros((x.shape[0], 0, n_fft // 2 + 1))
    frames = np.lib.stride_tricks.sliding_window_view(x, n_fft, axis=1)[:, ::hop][:, :count]
    power = np.empty((x.shape[0], count, n_fft // 2 + 1), np.float32)
    for a in range(0, count, FRAMES_AT_ONCE):
        step(0.0, None, cancel)
        part = frames[:, a:a + FRAMES_AT_ONCE]
        if offset is not None:
            part = part - offset[:, None, None]
        spectrum = fft.rfft((part * window(n_fft)).astype(np.float32), axis=-1, workers=-1)
        power[:, a:a + FRAMES_AT_ONCE] = spectrum.real ** 2 + spectrum.imag ** 2
    return power


def profile_power(profile: np.ndarray, channels: int, n_fft: int, *, sample_rate: int):
    """The mean power per channel (or 1) and bin of a noise-only ``profile``; a
    ParameterError when it is not one frame long or has other channels."""
    profile = np.atleast_2d(profile)
    if profile.shape[0] not in (1, channels):
        raise ParameterError(f"the noise profile has {profile.shape[0]} channels; the audio has "
                         f"{channels}: mark the profile on the same file")
    power = power_frames(profile, n_fft)
    if power.shape[1] == 0:
        raise ParameterError(f"the noise profile is {profile.shape[1] / sample_rate:.3f} s "
                             f"({profile.shape[1]} samples): give at least "
                             f"{n_fft / sample_rate:.3f} s ({n_fft} samples) of noise only")
    return power.mean(axis=1), "profile from the selection"


def learnt_power(x, silent, *, n_fft, sample_rate, adaptive, tonal=False, cancel=None):
    """The noise power ``[channels, frames, bins]`` (one frame when stationary), the
    centres of those frames in samples (None when stationary), where it came from, and
    the same power before the programme was taken out of it (its low quantile alone;
    None when nothing was learnt); learnt from the frames of ``x`` free of digital
    silence. ``cancel`` is
    looked at between pieces of the work (each well under a second)."""
    hop = n_fft // 2
    power = power_frames(x, n_fft, cancel, offset=x.mean(axis=1))
    count = power.shape[1]
    starts = np.arange(count) * hop
    clear = ~np.any(np.lib.stride_tricks.sliding_window_view(
        silent.any(axis=0), n_fft)[starts], axis=1) if count else np.zeros(0, bool)
    power = power[:, clear]
    span = max(1, int(round(SMOOTH_S * sample_rate / hop)))
    if power.shape[1] < 2 * span:
        return np.zeros((x.shape[0], 1, n_fft // 2 + 1)), None, "nothing learnt", None
    smooth = _by_bins(lambda part: _smoothed(part, span), power, cancel)
    track = max(4 * span, int(round(TRACK_S * sample_rate / hop)))
    firsts = np.arange(0, max(smooth.shape[1] - track, 0) + 1, track // 2)
    lows = np.concatenate([_by_bins(lambda part: _quantile(part, QUANTILE),
                                    smooth[:, a:a + track], cancel) for a in firsts], axis=1)
    if not adaptive:
        low = _by_bins(lambda part: _quantile(part, QUANTILE), smooth, cancel)
        floor = _holds_level(_by_bins(_on_floor, smooth, cancel, low), low, lows)
        typical = smooth.mean(axis=1, keepdims=True)
        if not _noise_found(low, floor, _steady_smooth(low, typical, span, n_fft, sample_rate)):
            return np.zeros((x.shape[0], 1, n_fft // 2 + 1)), None, NOTHING_FOUND, None
        raw = low * _bias(span)
        return (_programme_removed(raw, typical, n_fft, sample_rate, tonal, floor), None,
                "profile learnt from the quietest parts", raw)
    chunks = [smooth[:, a:a + track] for a in firsts]
    low = lows
    floor = np.concatenate([_on_floor(c, low[:, i:i + 1]) for i, c in enumerate(chunks)], axis=1)
    typical = np.stack([c.mean(axis=1) for c in chunks], axis=1)
    if not _noise_found(low, floor, _steady_smooth(low, typical, span, n_fft, sample_rate)):
        return np.zeros((x.shape[0], 1, n_fft // 2 + 1)), None, NOTHING_FOUND, None
    raw = low * _bias(span)
    low = _programme_removed(raw, typical, n_fft, sample_rate, tonal, floor)
    middle = np.flatnonzero(clear)[np.minimum(firsts + track // 2, smooth.shape[1] - 1)]
    return low, middle * hop + n_fft // 2, "adaptive, learnt over time", raw


NOTHING_FOUND = "found no steady noise"


def in_voice(x, removed, within, *, n_fft, sample_rate, raw, otherwise, tonal, cancel=None):
    """The noise power ``[channels, 1, bins]`` where a voice speaks: in each bin, the mean
    power of ``x`` over the cells ``within`` the voice (``[channels, frames of 10 ms]``)
    that a voice model took for noise alone (``removed``: what it took from ``x``; its
    output there ``TOOK_DB`` under the input, over ``TOOK_BINS`` bins), at most ``raw``
    (the low quantile learnt from ``x``), ``raw`` itself in a bin with fewer than
    ``TOOK_CELLS`` such cells; its peaks brought down to the spectrum's envelope (a
    steady tone is noise with ``tonal`` only). Under speech the low quantile lies 1-3 dB
    over the noise (a voice seldom leaves a bin for long) and the model's leftovers
    1-2 dB under it (it leaves some noise in the voice); these cells are within about
    0.5 dB of it. It is ``otherwise`` (the noise learnt for the rest) unless the cells'
    mean lies at most ``OVER_DB`` over ``raw`` (the median over the bins, of every
    channel, that have enough of them): over a music bed the model takes the band as
    well, and the mean of what it took lies over the low quantile (+0.5 to +10.9 dB, 17
    takes of a voice over music under hiss); under speech it lies under it or, at 0-3
    dB SNR, at it (-2.8 to +0.1 dB, 25 takes; but brown hiss at 13-15 dB SNR, +1.3 and
    +15.4 dB, whose noise the rest learns within about 3 dB)."""
    hop = n_fft // 2
    count = max(0, (x.shape[1] - n_fft) // hop + 1)
    total = np.zeros(raw.shape[:1] + (1,) + raw.shape[2:])
    cells = np.zeros_like(total)
    for a in range(0, count, FRAMES_AT_ONCE):
        step(0.0, None, cancel)
        part = slice(a * hop, (min(count, a + FRAMES_AT_ONCE) - 1) * hop + n_fft)
        power = power_frames(x[:, part], n_fft)
        left = power_frames(x[:, part] - removed[:, part], n_fft)
        centres = (a + np.arange(power.shape[1])) * hop + n_fft // 2
        inside = within[:, np.minimum(centres * 100 // sample_rate, within.shape[1] - 1)]
        size = (1, TOOK_FRAMES, TOOK_BINS)
        alone = (ndimage.uniform_filter(left, size) <= 10 ** (-TOOK_DB / 10)
                 * ndimage.uniform_filter(power, size)) & inside[..., None]
        total += (power * alone).sum(axis=1, keepdims=True)
        cells += alone.sum(axis=1, keepdims=True)
    mean, enough = total / np.maximum(cells, 1), cells >= TOOK_CELLS
    if not enough.any() or np.median(mean[enough] / np.maximum(raw[enough], 1e-30)) > \
            10 ** (OVER_DB / 10):
        return np.broadcast_to(otherwise, total.shape)
    noise = np.minimum(np.where(enough, mean, raw), raw)
    if tonal:
        return noise
    width = 2 * int(PEAK_HZ * n_fft / sample_rate / 2) + 1
    envelope = ndimage.median_filter(noise, size=(1, 1, width), mode="nearest")
    return _line_capped(np.where(noise > PEAK * envelope, envelope, noise))


def _on_floor(smooth: np.ndarray, low: np.ndarray) -> np.ndarray:
    """Per bin, True where at least ``FLOOR_SHARE`` of the frames of ``smooth`` lie within
    ``FLOOR_SPREAD`` of its low quantile ``low``: a floor many frames sit on, as a steady
    noise makes (a clean recording's quietest moments are few, its level spread over tens
    of dB): ``[channels, 1, bins]``."""
    return ((smooth <= FLOOR_SPREAD * low).mean(axis=1, keepdims=True) >= FLOOR_SHARE) & (low > 0)


def _holds_level(floor, low, lows):
    """``floor`` where the bin's floor holds its level through the take: the low quantile
    of each stretch (``lows``: ``TRACK_S``, every half of it) within ``LEVEL_DB`` (their deviation)
    of the bin's mean over them, once the drift they share (the median over the bins on
    a floor that the recording has) is taken out. A steady noise's floor is the same all
    through, however its level drifts (white, pink, brown noise, 12 s: 0.44-0.48 dB, 96-98 %
    of the bins within 1 dB; drifting by +-6 dB, 0.51-0.55 dB), where the quietest moments
    of a programme move with it (music the project never heard, 96 clean excerpts of 12
    s: 14 judged noisy without this, 8 with it). ``floor`` as it is where the take holds
    fewer than three such stretches (under 8 s)."""
    if lows.shape[1] < 3:
        return floor
    level = 10 * np.log10(np.maximum(lows, 1e-300))
    level -= level.mean(axis=1, keepdims=True)
    pool = floor & _present(low)
    shared = np.stack([np.median(level[c][:, pool[c, 0]], axis=1) if pool[c, 0].any()
                       else np.zeros(level.shape[1]) for c in range(level.shape[0])])
    return floor & ((level - shared[..., None]).std(axis=1, keepdims=True) <= LEVEL_DB)


def _present(low: np.ndarray) -> np.ndarray:
    """The bins the recording has: its low quantile ``low`` within ``EMPTY_DB`` of the
    loudest tenth of them."""
    level = 10 * np.log10(np.maximum(low, 1e-300))
    return level > np.percentile(level, 90, axis=-1, keepdims=True) - EMPTY_DB


def _steady_smooth(low, typical, span, n_fft, sample_rate):
    """Where, below ``RUMBLE_HZ``, the mean power ``typical`` lies at the floor ``low``
    (its low quantile) and that floor is no peak above the spectrum's envelope (a rumble
    is broad and smooth; a held bass note or drone stands out of it). Above it such bins
    are a pad's or a held chord's (music the project never heard: 3 of 96 clean
    excerpts, 345-1206 Hz and 5-10 kHz, and 1 of 36 of asc-music's; no speech under
    brown hiss at 15-30 dB SNR, 128 takes, was found by them alone)."""
    width = 2 * int(PEAK_HZ * n_fft / sample_rate / 2) + 1
    envelope = ndimage.median_filter(low, size=(1, 1, width), mode="nearest")
    bass = np.arange(low.shape[-1]) <= RUMBLE_HZ * n_fft / sample_rate
    return (typical <= STEADY * _bias(span) * low) & (low <= PEAK * envelope) & bass


def _noise_found(low: np.ndarray, floor: np.ndarray, steady: np.ndarray) -> bool:
    """Whether the learnt floor is a noise's: in at least ``NOISE_SHARE`` of the bins
    the recording has (those within ``EMPTY_DB`` of its loudest tenth), or in
    ``STEADY_BINS`` of them that are ``steady`` too (their mean power at their floor:
    a rumble under the bass alone, most of it below 50 Hz), in some channel (and,
    adaptive, some stretch)."""
    present = _present(low)
    share = (floor & present).sum(axis=-1) / np.maximum(present.sum(axis=-1), 1)
    return bool((share >= NOISE_SHARE).any() or
                ((floor & present & steady).sum(axis=-1) >= STEADY_BINS).any())


def _programme_removed(low, typical, n_fft, sample_rate, tonal, floor=None):
    """The learnt noise power ``low`` (``typical``: the mean power over the same
    frames) with its peaks above the spectrum's envelope (a median over ``PEAK_HZ``)
    brought down to it (``tonal``: where they are not steady), slope-capped, and held
    near a line through it (fitted through the bins on a ``floor``; but for the steady
    peaks ``tonal`` keeps)."""
    width = 2 * int(PEAK_HZ * n_fft / sample_rate / 2) + 1
    envelope = ndimage.median_filter(low, size=(1, 1, width), mode="nearest")
    steady = typical <= STEADY * low
    peak = low > PEAK * envelope
    tone = peak & steady if tonal else np.zeros_like(peak)
    low = _slope_capped(np.where(peak & ~tone, envelope, low), steady, n_fft, sample_rate)
    return np.where(tone, low, _line_capped(low, floor))


def _line_capped(low: np.ndarray, floor: np.ndarray | None = None) -> np.ndarray:
    """``low`` at most ``LINE_DB`` above a straight line through it in (log frequency,
    dB): hiss is broad and smooth (white, pink, brown are such lines), and what stands
    well above the line is programme that never left (a bass drone, a chord held
    through the take). The line is a robust fit: bins far off it either way are left
    out and it is fitted again (a drone above it; a hole or a cut-off under it), and so
    are bins ``EMPTY_DB`` under the loudest (a band the recording never had: above an
    MP3's or a telephone's cut-off), which are left be. With ``floor``, the fit starts
    from the bins on a noise's floor (at least 8 of them), the others' floors being
    programme's."""
    x = np.log2(np.maximum(np.arange(low.shape[-1]), 1))
    level = 10 * np.log10(np.maximum(low, 1e-300))
    out = low.copy()
    bands = _present(low)
    for idx in np.ndindex(low.shape[:-1]):
        row, present = level[idx], bands[idx]
        pool = present & floor[idx] if floor is not None and \
            (present & floor[idx]).sum() >= 8 else present
        line = _robust_line(x, row, pool)
        if line is not None:
            out[idx] = np.minimum(low[idx], np.where(present, 10 ** ((line + LINE_DB) / 10),
                                                     np.inf))
    return out


def _robust_line(x: np.ndarray, row: np.ndarray, pool: np.ndarray) -> np.ndarray | None:
    """A straight line through ``row`` over ``x`` fitted on the bins of ``pool``,
    ``LINE_ROUNDS`` times, each without the bins far off the last fit; None when
    fewer than 8 bins are left to fit."""
    fitted = pool.copy()
    for _ in range(LINE_ROUNDS):
        if fitted.sum() < 8:
            return None
        slope, offset = np.polyfit(x[fitted], row[fitted], 1)
        off = np.abs(row - (slope * x + offset))
        fitted = pool & (off <= 2 * np.median(off[fitted]) + 1.0)
    return slope * x + offset


def _slope_capped(low: np.ndarray, steady: np.ndarray, n_fft: int,
                  sample_rate: int) -> np.ndarray:
    """``low`` where ``steady``; elsewhere at most the steady bins' level plus
    ``SLOPE_DB`` per (warped) octave away from them."""
    bins = np.arange(low.shape[-1])
    octave = np.log2(bins + WARP_HZ * n_fft / sample_rate) * SLOPE_DB
    level = np.where(steady & (low > 0), 10 * np.log10(np.maximum(low, 1e-300)), np.inf)
    up = np.minimum.accumulate(level - octave, axis=-1) + octave
    down = np.minimum.accumulate((level + octave)[..., ::-1], axis=-1)[..., ::-1] - octave
    cap = np.minimum(up, down)
    return np.where(steady, low, np.minimum(low, 10 ** (cap / 10)))


def _by_bins(fn, power: np.ndarray, cancel: CancelFlag | None, *beside) -> np.ndarray:
    """``fn`` (working along frames, bin by bin) over ``power`` BINS_AT_ONCE bins at a
    time, with the same bins of each of ``beside`` (per-bin arrays), ``cancel`` looked at
    between: the same as ``fn(power, *beside)``."""
    parts = []
    for b in range(0, power.shape[-1], BINS_AT_ONCE):
        step(0.0, None, cancel)
        bins = slice(b, b + BINS_AT_ONCE)
        parts.append(fn(power[..., bins], *(a[..., bins] for a in beside)))
    return np.concatenate(parts, axis=-1)


def _smoothed(power: np.ndarray, span: int) -> np.ndarray:
    return ndimage.uniform_filter1d(power, span, axis=-2, mode="nearest")


def _quantile(power: np.ndarray, q: float) -> np.ndarray:
    k = int(q * (power.shape[1] - 1))
    return np.partition(power, k, axis=1)[:, k:k + 1]


@functools.cache
def _bias(span: int) -> float:
    """The mean over the low quantile of the smoothed power of white noise, measured
    through the same analysis (it depends on the smoothing, not on the noise)."""
    n_fft, frames = 256, 4000
    noise = np.random.default_rng(0).standard_normal((1, (frames + 1) * n_fft // 2))
    smooth = _smoothed(power_frames(noise, n_fft)[:, :, 4:-4], span)
    return float(smooth.mean() / _quantile(smooth, QUANTILE).mean())


def noise_at(noise: np.ndarray, centers: np.ndarray | None, at: np.ndarray) -> np.ndarray:
    """The noise power at the frame centres ``at``: ``[channels, len(at) or 1, bins]``."""
    if centers is None:
        return noise
    i = np.clip(np.searchsorted(centers, at) - 1, 0, len(centers) - 2) if len(centers) > 1 \
        else np.zeros(len(at), int)
    if len(centers) == 1:
        return noise[:, i]
    w = np.clip((at - centers[i]) / (centers[i + 1] - centers[i]), 0.0, 1.0)[None, :, None]
    return noise[:, i] * (1 - w) + noise[:, i + 1] * w
