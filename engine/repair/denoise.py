"""De-noise: reduce broadband hiss and steady tonal noise by at most ``amount_db``.

The noise power per frequency comes from a profile (the selection the user
marked as noise only) or is learnt from the quietest parts of the audio, once or
following it over time (``adaptive``): see :mod:`engine.repair.denoise_noise`.

Each STFT cell (sqrt-Hann, ~40 ms, hop 1/4) gets the MMSE log-spectral amplitude
gain (Ephraim & Malah 1985) of its decision-directed a priori SNR (alpha 0.97,
which keeps the residual from turning into musical noise; the larger of the
forward and the backward recursion, so onsets keep no lag), pulled toward the
floor ``-amount_db`` (24 dB by default) as far as the cells around it hold noise
alone (their mean a posteriori SNR: that estimate alone left the noise about
17 dB down whatever the amount); a bin keeps at least the mean gain of itself and
its two neighbours (a tone's main lobe spans them: its skirt goes with its peak).
The frames lie on one grid over the whole input, processed in blocks with the
recursion carried across: the result is the same in one block or many. Digital
silence stays exactly zero, and no 10 ms of output is let above the input's peak
around it. The reduction reported is the noise's, A-weighted.

Where a voice speaks (the voice module's detector: DeepFilterNet3's own estimate,
:func:`engine.repair.voice.found`, run over the whole input whenever a noise is
found) the rule is a speech one, faded in and out over ``VOICE_RAMP_S``: the gain
held under the larger of two masks, the share of the cells around (+-25 ms, +-250 Hz,
triangular) whose power stands ``SOUND_DB`` over the noise (noisereduce's stationary
mask) and the model's own gain there, but not under the floor; the noise there, when
learnt, is learnt again from the cells the model took for noise
alone (:func:`engine.repair.denoise_noise.in_voice`; the low quantile lies 1-3 dB
high under speech). Over a bed of programme (a voice over music, a singer over a band)
the model takes the bed too: there its gain counts only where it took no more than the
noise (:func:`_over_a_bed`, :func:`_took_programme`), and the noise is not learnt again
from what it took (a voice over music under hiss came out at 5.7 dB SI-SDR against the
mix from 20 dB). On speech under white, pink and brown hiss that rule scores
with noisereduce told the noise (PESQ-WB), where applied to music under the same hiss
it cost 3.5 dB SI-SDR: music, where the model finds no voice, keeps the rule above,
unchanged. The mask alone (without the model's gain) reached noisereduce but left
some speech takes at 15-19 dB SNR below their input by SI-SDR, as noisereduce does; the
model's gain alone fell short of it. The model runs over the whole input (about 0.3 s
of CPU a second of stereo at 44.1 kHz, 15 times the rest of de-noise), but for an
input over two minutes where it finds no voice in 3 s windows a minute apart
(:func:`engine.repair.voice.somewhere`): there the rule above holds throughout.

Alpha and the default amount were chosen on bench/bench_denoise.py's takes (seeds
1-3: pooled median PESQ-WB of the speech at 5-15 dB SNR against noisereduce's, and
SI-SDR of every music take) and checked on seeds 4-6: a higher alpha (0.98) gains
speech PESQ and costs music (one excerpt of another set lost 0.4 dB), a lower one
(0.95) the reverse; 12 dB leaves too much hiss in speech pauses for PESQ (pooled
1.31 against noisereduce's 1.23). The noise alone comes down by the amount
asked, within about 3 dB (white noise, 22.05 kHz: 12 -> 11.9, 24 -> 21.8, 30 -> 27.3,
40 -> 37.1 dB learnt, 39.4 from a profile; before, 17.3 dB for 24 and 40 alike).
The bench's figures are in docs/benchmarks.md.
"""

import functools

import numpy as np
from scipy import fft, ndimage, special

from engine.progress import scaled, step
from engine.repair import Outcome, guard, voice
from engine.repair.attenuate import runs
from engine.repair.denoise_noise import (
    NOTHING_FOUND,
    TOOK_BINS,
    TOOK_FRAMES,
    in_voice,
    learnt_power,
    noise_at,
    profile_power,
    window,
)

FRAME_S = 0.04  # STFT frame, rounded to a power of two in samples
ALPHA = 0.97  # decision-directed weight of the previous frame's estimate
XI_MIN = 10 ** (-25 / 10)  # a priori SNR floor of the recursion
NOISE_FLOOR = 1e-14  # noise power below this (-140 dB) is no noise
SILENCE_S = 0.001  # this long of exact zeros, at least 8 samples, is digital silence
BLOCK_FRAMES = 2048  # frames per processing block
MARGIN_FRAMES = 64  # frames the backward recursion runs past its block
PEAK_S = 0.01  # the level check's window
DEFAULT_AMOUNT_DB = 24.0
HEADROOM_DB = 0.5  # the output's peak may exceed the input's by this (the contract: 1 dB)
PRESENCE_FRAMES, PRESENCE_BINS = 5, 9  # the neighbourhood a cell's presence is judged over
PRESENCE_FROM = 1.3  # its mean a posteriori SNR: below this, noise alone (gain: the floor)
PRESENCE_SPAN = 0.5  # ... this much above it, sound (the LSA gain); between, geometric;
# for an amount beyond the default, wider by as many dB (more is taken for noise)
SOUND_DB = 5.85  # in a voice, a cell holds sound when its power is this far over the noise's
# mean: noisereduce's threshold, the noise's mean in dB plus 1.5 of its standard deviations
# (a Gaussian noise's power in dB: -2.51 dB mean, 5.57 dB deviation, about its mean power)
SOUND_HZ, SOUND_S = 250.0, 0.025  # ... the share of such cells within +-these (triangular)
VOICE_RAMP_S = 0.1  # the rule of a voice fades in and out over this
TOOK_OVER = 2.0  # ... and holds only where the model took at most this much more than the
# noise's power from the cells around (3 dB: the mean over 15 cells of a noise's power
# lies within about 1 dB of its own): beyond, it took programme
BED_S, BED_SHARE = 5.0, 0.1  # ... where it took programme in this share of the bins within
# this either side (a voice over a bed of music); elsewhere the model's gain holds
MODEL_SHARE = 0.9  # the share of the time (and the progress shown) the voice model takes


def run(x: np.ndarray, sample_rate: int, *, amount_db: float = DEFAULT_AMOUNT_DB,
        profile: np.ndarray | None = None, adaptive: bool = False, tonal: bool = False,
        progress=None, cancel=None) -> Outcome:
    """De-noise ``x`` (float64 ``[channels, n]``) by at most ``amount_db``, against the
    noise of ``profile`` (noise-only samples, ``[channels or 1, m]``, at least one
    frame long) or, without one, the noise learnt from ``x`` (``adaptive``: following
    it over time; ``tonal``: steady tones learnt as noise too). Each channel on its
    own. Returns ``x`` itself and no summary when there is nothing to reduce (digital
    silence, a noise floor below -140 dB)."""
    given = np.asarray(x, dtype=np.float64)
    x = np.ascontiguousarray(given)  # rows: a column-major array made every pass slow
    if amount_db <= 0 or x.shape[1] == 0:
        return Outcome(samples=given)
    n_fft = 1 << int(round(np.log2(FRAME_S * sample_rate)))
    silent = _digital_silence(x, max(8, int(SILENCE_S * sample_rate)), cancel)
    if silent.all():
        return Outcome(samples=given)
    if profile is not None:
        noise, source = profile_power(np.asarray(profile, np.float64), x.shape[0], n_fft,
                                      sample_rate=sample_rate)
        noise, centers = np.broadcast_to(noise[:, None, :], (x.shape[0], 1, noise.shape[1])), None
        raw = None
    else:
        noise, centers, source, raw = learnt_power(x, silent, n_fft=n_fft,
                                                   sample_rate=sample_rate, adaptive=adaptive,
                                                   tonal=tonal, cancel=cancel)
    if source == NOTHING_FOUND:
        return Outcome(samples=given, note=f"{NOTHING_FOUND}: the quietest parts are too few "
                       "and too varied for a noise floor; mark a noise-only selection as "
                       "a profile to reduce it anyway")
    noise = np.where(noise < NOISE_FLOOR, 0.0, noise)
    if not noise.any():
        return Outcome(samples=given)
    speech = _voice(x, sample_rate, n_fft, noise, raw if centers is None else None, tonal,
                    scaled(progress, 0.0, MODEL_SHARE), cancel)
    y, kept = _apply_gains(x, noise, centers, n_fft, sample_rate, 10 ** (-amount_db / 20),
                           scaled(progress, MODEL_SHARE, 1.0), cancel, speech)
    reduced_db = _reduction_db(noise, kept, n_fft, sample_rate)
    y[silent] = 0.0
    y = _keep_below_input(x, y, max(1, int(PEAK_S * sample_rate)))
    if reduced_db < 0.1 or not np.all(np.isfinite(y)):
        return Outcome(samples=given)
    return Outcome(samples=y, summary=f"noise reduced by {reduced_db:.1f} dB ({source})")


def _digital_silence(x: np.ndarray, shortest: int, cancel=None) -> np.ndarray:
    """True where a sample lies in a run of at least ``shortest`` exact zeros."""
    silent = np.zeros(x.shape, bool)
    for c, row in enumerate(x):
        step(0.0, None, cancel)
        for a, b in runs(row == 0.0):
            if b - a >= shortest:
                silent[c, a:b] = True
    return silent


def _frames(x: np.ndarray, first: int, count: int, hop: int, n_fft: int) -> np.ndarray:
    """Frames ``first .. first + count`` of the grid whose frame f starts at sample
    ``f * hop - (n_fft - hop)``, zero outside ``x``: ``[channels, count, n_fft]``."""
    start = first * hop - (n_fft - hop)
    length = (count - 1) * hop + n_fft
    seg = np.zeros((x.shape[0], length), np.float32)
    a, b = max(start, 0), min(start + length, x.shape[1])
    if b > a:
        seg[:, a - start:b - start] = x[:, a:b]
    return np.lib.stride_tricks.sliding_window_view(seg, n_fft, axis=1)[:, ::hop]


def _lsa_gain(xi: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """The MMSE log-spectral amplitude gain (Ephraim & Malah 1985), at most 1:
    ``xi / (1 + xi) * exp(E1(v) / 2)``, ``v = xi / (1 + xi) * gamma``, the second
    factor read from a table in log v (within 0.1 % of it)."""
    ratio = xi / (1.0 + xi)
    low, per_step, factor = _lsa_table()
    at = (np.log(np.maximum(ratio * gamma, 1e-30)) - low) * per_step + 0.5
    at = np.clip(at, 0, len(factor) - 1, out=at).astype(np.int32)
    return np.minimum(ratio * factor[at], 1.0)


@functools.cache
def _lsa_table():
    """The table of exp(E1(v) / 2): log v at entry 0, entries per unit of log v, values."""
    low, high, size = np.log(1e-8), np.log(40.0), 8192
    v = np.exp(np.linspace(low, high, size))
    return low, (size - 1) / (high - low), np.exp(0.5 * special.exp1(v)).astype(np.float32)


def _decision_directed(gamma: np.ndarray, previous: np.ndarray | None):
    """The decision-directed a priori SNR of each frame of ``gamma`` (the a posteriori
    SNR, ``[channels, frames, bins]``) in order, from ``previous`` (the last frame's
    estimated clean power over the noise power; None: none); and that of its last frame."""
    xi = np.empty_like(gamma)
    for t in range(gamma.shape[1]):
        g = gamma[:, t]
        fresh = np.maximum(g - 1.0, 0.0)
        xi_t = fresh if previous is None else ALPHA * previous + (1 - ALPHA) * fresh
        xi[:, t] = xi_t = np.maximum(xi_t, XI_MIN)
        previous = (xi_t / (1.0 + xi_t)) ** 2 * g
    return xi, previous


def _voice(x, sample_rate, n_fft, noise, raw, tonal, progress, cancel):
    """Where a voice speaks, per channel and frame of the processing's grid (0-1, faded
    over ``VOICE_RAMP_S``), and the noise's power there (``noise``, or learnt within the
    voice where ``raw``, the low quantile learnt, is given); None where no voice is found
    (on a long input, none in the windows :func:`engine.repair.voice.somewhere` hears
    first: the model over all of it costs about 20 times the rest of the de-noise)."""
    if not voice.somewhere(x, sample_rate, cancel=cancel):
        return None
    found, removed = voice.found(x, sample_rate, progress=progress, cancel=cancel)
    if not found.any():
        return None
    if raw is not None:
        noise = in_voice(x, removed, found, n_fft=n_fft, sample_rate=sample_rate,
                         raw=np.where(raw < NOISE_FLOOR, 0.0, raw), otherwise=noise,
                         tonal=tonal, cancel=cancel)
    weight = ndimage.uniform_filter1d(found.astype(np.float32), round(VOICE_RAMP_S * 100),
                                      axis=1, mode="nearest")
    hop = n_fft // 4
    centres = np.arange((x.shape[1] + n_fft - 1) // hop + 1) * hop + n_fft // 2 - (n_fft - hop)
    return weight[:, np.clip(centres * 100 // sample_rate, 0, found.shape[1] - 1)], noise, \
        x - removed


def _sound_kernel(n_fft: int, sample_rate: int):
    """Triangular weights over +-``SOUND_S`` and +-``SOUND_HZ`` of the processing's grid,
    summing to 1, and their reach in frames."""
    def triangle(k):
        return 1.0 - np.abs(np.arange(-k, k + 1)) / (k + 1)

    frames = max(1, round(SOUND_S * sample_rate / (n_fft // 4)))
    kernel = np.outer(triangle(frames), triangle(max(1, round(SOUND_HZ * n_fft / sample_rate))))
    return (kernel / kernel.sum()).astype(np.float32)[None], frames


def _apply_gains(x, noise, centers, n_fft, sample_rate, floor, progress, cancel, speech=None):
    """The de-noised samples and, per bin, the share of the noise's power the gains
    kept (summed over the frames; 1 where there is none). The a priori
    SNR is the larger of the forward and the backward recursion (no onset is lost
    to the forward one's lag, no decay to the backward one's); the backward one
    starts ``MARGIN_FRAMES`` past each block, from where its start no longer shows.
    Where a voice speaks (``speech``: per channel and frame, how far; the noise's power
    there; the voice model's output) the gain is :func:`_voice_gain`'s instead."""
    hop = n_fft // 4
    taper = window(n_fft)
    taper32 = taper.astype(np.float32)
    total = (x.shape[1] + n_fft - 1) // hop + 1
    y = np.zeros_like(x)
    previous = tail = None
    span = PRESENCE_SPAN * max(1.0, 10 ** (-DEFAULT_AMOUNT_DB / 20) / floor)
    kernel, reach = _sound_kernel(n_fft, sample_rate)
    noise_sum = kept_sum = 0.0  # per bin: the noise's power, and what the gains keep of it
    bed = None if speech is None else _over_a_bed(x, speech, centers, n_fft, sample_rate,
                                                  cancel)
    for first in range(0, total, BLOCK_FRAMES):
        step(first / total, progress, cancel)
        count = min(BLOCK_FRAMES, total - first)
        ahead = min(count + MARGIN_FRAMES, total - first)
        frames = _frames(x, first, ahead, hop, n_fft) * taper32
        spectrum = fft.rfft(frames, axis=-1, workers=-1)
        centres = (first + np.arange(ahead)) * hop - (n_fft - hop) + n_fft // 2
        power_n = np.broadcast_to(noise_at(noise, centers, centres), spectrum.shape)
        weight = None if speech is None else speech[0][:, first:first + ahead, None]
        if weight is not None and weight.any():
            power_n = power_n ** (1 - weight) * np.broadcast_to(
                noise_at(speech[1], centers, centres), spectrum.shape) ** weight
        gamma = (spectrum.real ** 2 + spectrum.imag ** 2) / np.maximum(power_n, 1e-30,
                                                                       dtype=np.float32)
        forward, previous = _decision_directed(gamma[:, :count], previous)
        backward, _ = _decision_directed(gamma[:, ::-1], None)
        xi = np.maximum(forward, backward[:, ::-1][:, :count])
        lead, start, tail = _with_tail(gamma, count, tail, max(PRESENCE_FRAMES // 2, reach))
        presence = _presence(lead, start, count, span)
        gain = _lsa_gain(xi, gamma[:, :count]) ** presence * np.float32(floor) ** (1 - presence)
        gain = np.clip(gain, floor, 1.0)
        gain = np.maximum(gain, ndimage.uniform_filter1d(gain, 3, axis=-1, mode="nearest"))
        if weight is not None and weight.any():
            said, programme = _took_programme(x, speech, centers, first, count, n_fft)
            weight = weight[:, :count]
            gain = gain ** (1 - weight) * _voice_gain(
                lead, start, gain, floor, kernel, (spectrum[:, :count], said),
                programme & bed[:, first:first + count, None]) ** weight
        power_n = power_n[:, :count]
        noise_sum += power_n.sum(axis=(0, 1), dtype=np.float64)
        kept_sum += (gain ** 2 * power_n).sum(axis=(0, 1), dtype=np.float64)
        out = fft.irfft(spectrum[:, :count] * gain, n_fft, axis=-1, workers=-1) * (taper / 2)
        _overlap_add(y, out, first * hop - (n_fft - hop), hop)
    step(1.0, progress, cancel)
    return y, np.where(noise_sum > 0, kept_sum / np.maximum(noise_sum, 1e-300), 1.0)


def _voice_gain(lead, start, gain, floor, kernel, spectra, programme):
    """The gain where a voice speaks: ``gain`` (the rule elsewhere) at most the larger of
    the share of the cells around holding sound (``SOUND_DB`` over the noise in ``lead``,
    the a posteriori SNR from frame ``start``; noisereduce's mask) and the voice model's
    own gain (``spectra``: the input's and the model's output's), at least ``floor``;
    ``gain`` itself where the model took ``programme`` (:func:`_took_programme`)."""
    sound = ndimage.convolve((lead > 10 ** (SOUND_DB / 10)).astype(np.float32), kernel,
                             mode="constant")[:, start:start + gain.shape[1]]
    given, said = (s.real ** 2 + s.imag ** 2 for s in spectra)
    model = np.sqrt(np.minimum(said / np.maximum(given, 1e-30), 1.0))
    return np.minimum(gain, np.where(programme, 1.0, np.maximum(np.maximum(sound, model),
                                                                floor)))


def _took_programme(x, speech, centers, first, count, n_fft):
    """The voice model's output (``speech[2]``) over frames ``first .. first + count`` of
    the processing's grid (spectra), and where it took more than the noise from a cell
    of ``x``: what it took over the noise's power there (``speech[1]``), the mean over
    the cells around (``TOOK_FRAMES`` by ``TOOK_BINS``), above ``TOOK_OVER``. Under a
    voice the model takes the noise, about as much as there is; over a band (a singer,
    a voice over a music bed) it takes the band too, which the mask, knowing only the
    noise, let it take (a voice over music under hiss at 20 dB SNR came out at 5.7 dB
    SI-SDR against the mix)."""
    hop, r = n_fft // 4, TOOK_FRAMES // 2
    taper = window(n_fft).astype(np.float32)
    heard, said = (fft.rfft(_frames(v, first - r, count + 2 * r, hop, n_fft) * taper, axis=-1,
                            workers=-1) for v in (x, speech[2]))
    centres = (first - r + np.arange(count + 2 * r)) * hop - (n_fft - hop) + n_fft // 2
    taken = heard - said
    over = (taken.real ** 2 + taken.imag ** 2) / np.maximum(noise_at(speech[1], centers,
                                                                      centres), 1e-30)
    programme = ndimage.uniform_filter(over, (1, TOOK_FRAMES, TOOK_BINS)) > TOOK_OVER
    return said[:, r:r + count], programme[:, r:r + count]


def _over_a_bed(x, speech, centers, n_fft, sample_rate, cancel):
    """``[channels, frames]`` of the processing's grid: where the voice speaks over a bed
    of programme, the share of the bins :func:`_took_programme` finds over the voiced
    frames within ``BED_S`` either side above ``BED_SHARE``. Under a voice over hiss the
    model takes programme in 2-7 % of the bins (the voice's own fricatives and breaths,
    which the old rule took and PESQ-WB rewards; brown hiss at 10-19 dB SNR 6-29 %),
    over a music bed in 14-86 % (12 takes)."""
    hop = n_fft // 4
    total = (x.shape[1] + n_fft - 1) // hop + 1
    share = np.zeros((x.shape[0], total))
    for first in range(0, total, BLOCK_FRAMES):
        step(0.0, None, cancel)
        count = min(BLOCK_FRAMES, total - first)
        share[:, first:first + count] = _took_programme(x, speech, centers, first, count,
                                                        n_fft)[1].mean(axis=-1)
    voiced = speech[0] > 0.5
    width = 2 * round(BED_S * sample_rate / hop) + 1
    heard = ndimage.uniform_filter1d(voiced.astype(np.float64), width, axis=1, mode="constant")
    took = ndimage.uniform_filter1d(share * voiced, width, axis=1, mode="constant")
    return took > BED_SHARE * heard


def _with_tail(gamma: np.ndarray, count: int, tail: np.ndarray | None, reach: int):
    """The a posteriori SNR ``gamma`` of a block's first ``count`` frames and ``reach``
    frames either side (``tail``: those before, the last block's), where its first
    frame lies in that, and the tail for the next block."""
    lead = gamma[:, :count + reach] if tail is None else \
        np.concatenate([tail, gamma[:, :count + reach]], axis=1)
    return lead, 0 if tail is None else tail.shape[1], gamma[:, max(0, count - reach):count]


def _presence(lead: np.ndarray, start: int, count: int, span: float) -> np.ndarray:
    """How much each of ``count`` frames' cells from ``start`` holds sound besides the
    noise, 0 to 1, from the mean a posteriori SNR ``lead`` around it (``PRESENCE_FRAMES``
    by ``PRESENCE_BINS``). Where the noise is alone the gain is the floor: the
    decision-directed estimate alone leaves it about 17 dB down whatever the amount."""
    local = ndimage.uniform_filter(lead, (1, PRESENCE_FRAMES, PRESENCE_BINS), mode="nearest")
    return np.clip((local[:, start:start + count] - PRESENCE_FROM) / span, 0, 1)


def _reduction_db(noise: np.ndarray, kept: np.ndarray, n_fft: int, sample_rate: int) -> float:
    """How far the noise's loudness came down, in dB: its power weighted as the ear
    weighs it (A-weighting, IEC 61672), so a rumble left alone under 50 Hz does not hide
    hiss taken down by 24 dB, nor does a band the recording lacks count."""
    f = np.fft.rfftfreq(n_fft, 1 / sample_rate)
    f2 = f ** 2
    weight = (12194.0 ** 2 * f2 ** 2 / ((f2 + 20.6 ** 2) * (f2 + 12194.0 ** 2))) ** 2 / \
        ((f2 + 107.7 ** 2) * (f2 + 737.9 ** 2))
    heard = (noise.mean(axis=(0, 1)) * weight).sum()
    return float(10 * np.log10(heard / max((noise.mean(axis=(0, 1)) * weight * kept).sum(),
                                           1e-300))) if heard > 0 else 0.0


def _overlap_add(y: np.ndarray, frames: np.ndarray, start: int, hop: int) -> None:
    n_fft = frames.shape[-1]
    for j in range(n_fft // hop):  # frames j, j + k, ... do not overlap one another
        chunk = frames[:, j::n_fft // hop]
        if chunk.shape[1] == 0:
            continue
        a = start + j * hop
        flat = chunk.reshape(y.shape[0], -1)
        lo, hi = max(a, 0), min(a + flat.shape[1], y.shape[1])
        if hi > lo:
            y[:, lo:hi] += flat[:, lo - a:hi - a]


def _keep_below_input(x: np.ndarray, y: np.ndarray, window: int) -> np.ndarray:
    """``y`` turned down (smoothly) in each ``window`` of the grid whose peak exceeds
    the input's peak over it and one window either side by more than ``HEADROOM_DB``."""
    peak_x, peak_y = guard.window_peaks(x, window), guard.window_peaks(y, window)
    count = peak_x.shape[1]
    allowed = ndimage.maximum_filter1d(peak_x, 3, axis=1) * 10 ** (HEADROOM_DB / 20)
    if not (peak_y > allowed).any():
        return y
    ratio = np.minimum(allowed / np.maximum(peak_y, 1e-300), 1.0)
    ratio = ndimage.minimum_filter1d(ratio, 3, axis=1)  # neighbours ramp within it
    centres = np.arange(count) * window + window / 2
    out = y.copy()
    for c, r in enumerate(ratio):  # the gain is 1 but in the windows about one below 1
        for a, b in runs(ndimage.binary_dilation(r < 1.0)):
            at = np.arange(a * window, min(b * window, x.shape[1]))
            out[c, at[0]:at[-1] + 1] *= np.interp(at, centres, r)
    return out
