"""Remove the steady tones under a stroke: find them coherently, subtract them in time.

A steady sinusoid advances by the same angle every frame in each bin it
reaches (coefficients keep absolute phase on every transform), so over a run
of frames its contribution is ``s * exp(2 pi i nu m)``: one complex number and
one rate. For each bin's run of covered frames, the rate is the peak of the
run's zero-padded DFT over frames near the bin's own frequency, ``s`` the
mean of the demodulated run. A run whose steady part holds little of its
energy is left alone: the strongest rate of a run of speech is speech.

Neighbouring bins that agree on the frequency are one tone: its amplitude and
phase are fitted to the coefficients a cosine has on this transform
(``Transform.sinusoid``), and it is subtracted from the audio itself, shaped by
how present it is in each frame. So the tone goes from every bin it reaches,
sidelobes and its start and stop included, and speech or music in the same
bins, which does not stay put, stays."""

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.repair.attenuate import runs

PAD = 8  # zero-padding factor of the rate search
REFINE = 32  # then this many steps each way between grid points,
ZOOMS = 3  # and again between those, twice: a whistle's frequency to 1e-5 of a frame rate
POLISH = 2  # Gauss-Newton steps of a tone's frequency on the samples
FIT_CHUNK = 1 << 18  # samples per chunk of those sums
SMOOTH_SECONDS = 0.2  # a partial's presence is averaged over this long
LEVEL_SECONDS = 0.002  # a tone's level is followed over this long, to place its start and stop
RAMP_SECONDS = 0.01  # around a start or stop, the subtracted tone follows the tone's level
MIN_FRAMES = 16  # shorter runs cannot tell a steady partial from the rest
SIGNIFICANT = 0.1  # a run's steady part must hold this share of its energy; the
#                    strongest of many candidate rates in a run of speech alone holds ~1 %
NOISE_TB, NOISE_POWER = 50.7, 2.5  # and more in a run short for its bin (_least_share)
MIN_TB, TONE_SHARE = 15.0, 0.95
COMB_CENTS = 10.0  # a hum's harmonic over its number agrees with the fundamental this well


def _presence(z: torch.Tensor, steady: torch.Tensor, frames_per_second: float) -> torch.Tensor:
    """Whether each frame holds the steady partial (1) or not (0): its share,
    smoothed over ``SMOOTH_SECONDS`` (speech's own share along it averages out),
    above one half, from the first such frame to the last. A whistle that starts
    or stops inside the run is subtracted only where it is; a hum under loud
    speech is subtracted everywhere."""
    share = (z * steady.conj()).real / (steady.abs() ** 2).clamp(min=1e-30)
    share = share.sum(0, keepdim=True) / z.shape[0]
    width = 2 * max(1, round(SMOOTH_SECONDS * frames_per_second / 2)) + 1
    kernel = torch.ones(1, 1, width, dtype=share.dtype, device=share.device) / width
    padded = torch.nn.functional.pad(share[None], (width // 2, width // 2), mode="replicate")
    present = (torch.nn.functional.conv1d(padded, kernel)[0] > 0.5).to(share.dtype)
    on = torch.nonzero(present[0]).flatten()
    if len(on):  # a steady tone does not pause: speech over it only hides it for a while
        present[:, on[0]:on[-1] + 1] = 1.0
    return present


def _least_share(time_bandwidth: float) -> float:
    """The share of a run's energy its steady part must hold, given the run's length
    times its bin's bandwidth. A bin passes a narrow band of noise, which over a run
    a few times its memory looks steady. The strongest rate of white noise held, at
    most (both transforms, 7 bands, 3 to 40 runs each): 0.99 of a run at 2-4, 0.95
    at 7, 0.85 at 15, 0.6 at 30, 0.37 at 60, 0.2 at 120, 0.1 at 250. So a run under
    ``MIN_TB`` is left alone; up to 60 a tone must hold more than noise can (at
    most ``TONE_SHARE``: a whistle 15 dB over its bin's rest holds 0.97); then the
    need falls to ``SIGNIFICANT`` by 120 (a hum's weak partials under speech hold
    0.1-0.2 over a whole take; noise may then lose up to a fifth of a narrow band)."""
    if time_bandwidth < MIN_TB:
        return math.inf
    need = 1.0 - math.exp(-(NOISE_TB / time_bandwidth) ** NOISE_POWER)
    return max(SIGNIFICANT, min(TONE_SHARE, need))


@dataclass
class Partial:
    """A steady sinusoid found in one bin's run of frames ``[frame0, frame1)``:
    ``z[frame0 + m] ~ value * exp(2 pi i rate m) * presence[m]``."""

    bin: int
    frame0: int
    frame1: int
    hz: float
    value: torch.Tensor  # [ch] complex: the demodulated mean, referenced to frame0
    presence: torch.Tensor  # [1, frames]: 1 where the partial is, 0 elsewhere
    power: float
    weights: torch.Tensor  # [frames]: how much each frame counts in ``value``


def find(z: torch.Tensor, covered: torch.Tensor, hz: torch.Tensor, *, span_hz: torch.Tensor,
         frames_per_second: float, bin0: int = 0, frame0: int = 0) -> list[Partial]:
    """The steady partial of each covered run of ``z [ch, bins, frames]`` (whose
    first cell is bin ``bin0``, frame ``frame0``); ``hz`` each bin's centre and
    ``span_hz`` how far from it the partial may lie."""
    found = []
    for b in range(z.shape[1]):
        for a, e in runs(covered[b].cpu().numpy()):
            n = e - a
            if n < MIN_FRAMES:
                continue
            size = PAD * (1 << math.ceil(math.log2(n)))
            spectrum = torch.fft.fft(z[:, b, a:e], n=size)  # sum z[m] exp(-2 pi i j m / size)
            rate = torch.fft.fftfreq(size, device=z.device).double()  # cycles per frame
            offset = torch.remainder(rate * frames_per_second - float(hz[b])
                                     + frames_per_second / 2, frames_per_second) \
                - frames_per_second / 2  # Hz from the bin's centre, unwrapped
            near = offset.abs() <= float(span_hz[b])
            if not near.any():
                continue
            power = (spectrum.abs() ** 2).sum(0).double()
            j = int(torch.argmax(torch.where(near, power, -1.0)))
            energy = float((z[:, b, a:e].abs() ** 2).sum())
            if energy == 0 or float(power[j]) / n / energy < \
                    _least_share(n / frames_per_second * 2 * float(span_hz[b])):
                continue  # nothing steady here (or nothing at all): leave the run alone
            m = torch.arange(n, device=z.device, dtype=torch.float64)
            # refine the rate between the neighbouring grid points, zooming in: a rate
            # off by d cycles per frame drifts d * n / 2 cycles by the run's ends
            step = torch.linspace(-1, 1, 2 * REFINE + 1, dtype=torch.float64, device=z.device)
            found_rate, width = rate[j], 1 / size
            for _ in range(ZOOMS):
                fine = found_rate + step * width
                waves = torch.exp(-2j * math.pi * fine[:, None] * m[None]).to(z.dtype)  # [r, n]
                sums = z[:, b, a:e] @ waves.T  # [ch, r]
                best = int(torch.argmax((sums.abs() ** 2).sum(0)))
                found_rate, width = fine[best], width / REFINE
            waves = waves[best]
            steady = (sums[:, best] / n)[:, None] * waves.conj()
            # a frame counts less the louder the rest of it is (speech over a hum)
            rest = ((z[:, b, a:e] - steady).abs() ** 2).sum(0).double()
            weights = 1 / (rest + (steady.abs() ** 2).sum(0).double() + 1e-30)
            demodulated = z[:, b, a:e] * waves
            value = (demodulated * weights.to(z.dtype)).sum(1) / weights.sum()
            steady = value[:, None] * waves.conj()
            hz_found = float(hz[b]) + float(offset[j]) + float(found_rate - rate[j]) \
                * frames_per_second
            found.append(Partial(b + bin0, a + frame0, e + frame0, hz_found, value,
                                 _presence(z[:, b, a:e], steady, frames_per_second),
                                 float((value.abs() ** 2).sum()), weights))
    return found


def tones(partials: list[Partial], tolerance_hz: float,
          frames_per_second: float) -> list[list[Partial]]:
    """Partials of one sinusoid grouped, strongest first: the strongest says the
    frequency; a weaker one joins when its rate per frame agrees (frequencies one
    frame rate apart advance alike, so a bin at the edge of the tone's lobe may
    have read an alias of it)."""
    groups: list[list[Partial]] = []
    for p in sorted(partials, key=lambda p: -p.power):
        for g in groups:
            apart = (p.hz - g[0].hz) / frames_per_second
            if abs(apart - round(apart)) * frames_per_second <= tolerance_hz \
                    and p.frame0 < g[0].frame1 and g[0].frame0 < p.frame1:
                g.append(p)
                break
        else:
            groups.append([p])
    return groups


def on_comb(groups: list[list[Partial]],
            lines: list[tuple[int, float, float]]) -> list[list[Partial]]:
    """The tones found along a harmonic brush's lines (``lines``: each group's harmonic
    number k, line frequency and radius in Hz) that are one hum's: of those whose
    frequency over k lies within the radius of the fundamental painted, the ones that
    agree within ``COMB_CENTS`` on the fundamental most of their power agrees on.
    Two or more such tones; or the fundamental alone, where it lies within
    ``COMB_CENTS`` of where it was painted; else none. Any one line's window may hold
    a steady note of music (a quarter-tone either side of a 60 Hz harmonic holds a
    note of the scale or two; F4 lies 4 cents from 7 x 50 Hz), which is no harmonic of
    the others: a harmonic found alone is no evidence of a hum."""
    f = [g[0].hz / k for g, (k, _, _) in zip(groups, lines, strict=True)]
    near = [i for i, (k, line, radius) in enumerate(lines)
            if abs(_cents(f[i], line / k)) <= _cents(line + radius, line)]
    if not near:
        return []
    support = {i: sum(groups[j][0].power for j in near if abs(_cents(f[j], f[i])) <= COMB_CENTS)
               for i in near}
    best = f[max(near, key=support.__getitem__)]
    kept = [i for i in near if abs(_cents(f[i], best)) <= COMB_CENTS]
    if len(kept) >= 2:
        return [groups[i] for i in kept]
    return [groups[i] for i in kept
            if lines[i][0] == 1 and abs(_cents(f[i], lines[i][1])) <= COMB_CENTS]


def _cents(a: float, b: float) -> float:
    return 1200 * math.log2(a / b)


def fit(group: list[Partial], transform, length: int) -> torch.Tensor:
    """``[ch, 2]``: (a, b) such that ``a cos(2 pi f t) + b sin(2 pi f t)`` shows, in
    each of the group's runs, the demodulated mean its partial shows (least squares
    over the runs): the cosine's own coefficients, from the transform, measured the
    same way, so a transform's quirks (a window, a slice edge) cancel."""
    f = group[0].hz
    rate = transform.phase_advance(f) / (2 * math.pi)  # cycles per frame
    bins = range(min(p.bin for p in group), max(p.bin for p in group) + 1)
    frame0, frame1 = min(p.frame0 for p in group), max(p.frame1 for p in group)
    models = [transform.sinusoid(f, 1.0, phase, bins=bins, frame0=frame0, frame1=frame1,
                                 length=length)
              for phase in (0.0, -math.pi / 2)]  # cos, sin
    rows, seen = [], []
    for p in group:
        n = p.frame1 - p.frame0
        m = torch.arange(n, dtype=torch.float64, device=models[0].device)
        carrier = torch.exp(-2j * math.pi * rate * m).to(models[0].dtype)
        cells = (p.bin - bins.start, slice(p.frame0 - frame0, p.frame1 - frame0))
        w = p.weights.to(carrier.device)
        rows.append(torch.stack([(model[cells] * carrier * w).sum() / w.sum()
                                 for model in models]))
        seen.append(p.value)
    model = torch.stack(rows).to(torch.complex128)  # [runs, 2]
    real = torch.cat([model.real, model.imag])  # [2 runs, 2]
    seen = torch.stack(seen, 1).to(torch.complex128).cpu()  # [ch, runs]
    target = torch.cat([seen.real, seen.imag], 1)  # [ch, 2 runs]
    return torch.linalg.lstsq(real.cpu().expand(len(target), *real.shape),
                              target[..., None]).solution[..., 0]


def waveform(group: list[Partial], ab: torch.Tensor, transform, *, audio: torch.Tensor,
             sample0: int) -> torch.Tensor:
    """``[ch, n]``: the group's sinusoid over the samples of ``audio`` (``[ch, n]`` from
    ``sample0``), where the strongest partial's presence says it is; each start and
    stop is placed to the sample where the tone's demodulated level in ``audio``
    crosses half its amplitude (near the frames where the presence changes), and
    around it the subtracted tone follows the tone's own level (its fade)."""
    p, sr = group[0], transform.sample_rate
    centres = [round(transform.seconds_of(p.frame0 + m) * sr) - sample0
               for m in range(p.frame1 - p.frame0)]
    present = p.presence[0].cpu().numpy() > 0.5
    level = _tone_level(audio, p.hz, sr)
    half = 0.5 * float(ab.norm(dim=1).mean())
    envelope = np.zeros(audio.shape[-1])
    ramp = round(RAMP_SECONDS * sr)
    edges = np.flatnonzero(np.diff(np.concatenate(([False], present, [False])).astype(int)))
    last = len(centres) - 1
    follow = np.clip(level / (2 * half), 0.0, 1.0)  # the tone's own fade, where it changes
    for on, off in zip(edges[::2], edges[1::2], strict=True):  # presence is off by a frame or two
        start = _crossing(level, centres[max(on - 2, 0)], centres[min(on + 1, last)], half)
        stop = _crossing(level, centres[max(off - 2, 0)], centres[min(off + 1, last)], half,
                         rising=False)
        envelope[max(start, 0):max(stop, 0)] = 1.0
        for edge in (start, stop):  # within a ramp's length of each edge, follow the level
            lo, hi = max(edge - ramp, 0), min(edge + ramp, len(envelope))
            envelope[lo:hi] = follow[lo:hi]
    weight = np.interp(np.arange(audio.shape[-1]), centres, p.weights.cpu().numpy())
    return _fitted(audio.cpu().double(), torch.from_numpy(envelope), torch.from_numpy(weight),
                   p.hz / sr, ab.cpu(), sample0)


def _fitted(audio: torch.Tensor, envelope: torch.Tensor, weight: torch.Tensor, rate: float,
            ab: torch.Tensor, sample0: int) -> torch.Tensor:
    """``envelope * (a cos + b sin)`` at ``rate`` cycles per sample, fitted to ``audio``
    by least squares where the envelope is on, each sample counting by ``weight``
    (less where the rest is loud, as the frames weigh them): ``POLISH`` Gauss-Newton
    steps on the frequency (shared by the channels), then a and b per channel. The
    frames found a whistle to about 1e-4 Hz and 0.3 % of its level, which over
    seconds leaves it 40 dB down; the samples, thousands of times as many, take it
    to the floor the rest of the sound sets. ``ab`` (the frames' fit, at absolute
    sample times) starts it. Sums are taken in chunks: a tone may last a whole file."""
    on = torch.nonzero(envelope).flatten()
    if len(on) == 0:
        return torch.zeros_like(audio)
    lo, hi = int(on[0]), int(on[-1]) + 1
    middle = (hi - lo) / 2  # times are centred on the span: the frequency decorrelates
    omega = 2 * math.pi * rate
    c0, s0 = math.cos(omega * (sample0 + lo + middle)), math.sin(omega * (sample0 + lo + middle))
    a, b = ab[:, 0] * c0 + ab[:, 1] * s0, ab[:, 1] * c0 - ab[:, 0] * s0
    for polish in range(POLISH + 1):
        size = 3 if polish < POLISH else 2
        gram = audio.new_zeros((len(audio), size, size))
        target = audio.new_zeros((len(audio), size, 1))
        for i in range(lo, hi, FIT_CHUNK):
            j = min(i + FIT_CHUNK, hi)
            rows = _tone_basis(envelope[i:j], i - lo - middle, omega, a, b, size)
            weighted = rows * weight[i:j]
            gram += weighted @ rows.transpose(1, 2)
            target += weighted @ audio[:, i:j, None]
        solved = torch.linalg.lstsq(gram, target).solution[..., 0]  # lstsq: a silent channel
        a, b = solved[:, 0], solved[:, 1]
        if size == 3:
            power = a ** 2 + b ** 2
            step = float((solved[:, 2] * power).sum() / power.sum().clamp(min=1e-300))
            limit = math.pi / (hi - lo)  # at most half a cycle's drift over the span
            omega += min(max(step, -limit), limit)
    out = torch.zeros_like(audio)
    for i in range(lo, hi, FIT_CHUNK):
        j = min(i + FIT_CHUNK, hi)
        rows = _tone_basis(envelope[i:j], i - lo - middle, omega, a, b, 2)
        out[:, i:j] = a[:, None] * rows[:, 0] + b[:, None] * rows[:, 1]
    return out


def _tone_basis(envelope: torch.Tensor, t0: float, omega: float, a: torch.Tensor,
                b: torch.Tensor, size: int) -> torch.Tensor:
    """``[ch, size, n]``: envelope times cos and sin of ``omega * t`` from ``t0``, and
    (``size`` 3) the derivative of ``a cos + b sin`` by omega, per channel."""
    t = torch.arange(len(envelope), dtype=torch.float64) + t0
    cos, sin = envelope * torch.cos(omega * t), envelope * torch.sin(omega * t)
    rows = [cos.expand(len(a), -1), sin.expand(len(a), -1)]
    if size == 3:
        rows.append(t * (b[:, None] * cos - a[:, None] * sin))
    return torch.stack(rows, 1)


def _tone_level(audio: torch.Tensor, hz: float, sr: int) -> np.ndarray:
    """Per sample, the level of ``hz`` in ``audio``: the magnitude of the audio
    demodulated by it, averaged over ``LEVEL_SECONDS`` (other sounds average out)."""
    n = torch.arange(audio.shape[-1], dtype=torch.float64)
    demodulated = (audio.double() * torch.exp(-2j * math.pi * hz / sr * n)).mean(0)
    width = max(1, round(LEVEL_SECONDS * sr))
    kernel = np.ones(width) / width
    smooth = np.convolve(demodulated.numpy(), kernel, mode="same")
    return 2 * np.abs(smooth)


def _crossing(level: np.ndarray, lo: int, hi: int, threshold: float, rising=True) -> int:
    """The first sample in ``[lo, hi]`` where ``level`` rises above (or, ``rising``
    False, the last where it stays above) ``threshold``; the middle if none."""
    lo, hi = max(lo, 0), min(hi, len(level) - 1)
    if hi <= lo:
        return lo
    above = np.flatnonzero(level[lo:hi + 1] > threshold)
    if len(above) == 0:
        return (lo + hi) // 2
    return lo + int(above[0]) if rising else lo + int(above[-1]) + 1
