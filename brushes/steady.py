"""Remove the steady partials under a stroke by coherent subtraction.

A steady sinusoid advances by the same angle every frame in each bin it
reaches (coefficients keep absolute phase on every transform), so over a run
of frames its contribution is ``s * exp(2 pi i nu m)``: one complex number and
one rate. For each bin's run of covered frames, the rate is the peak of the
run's zero-padded DFT over frames near the bin's own frequency, ``s`` the
mean of the demodulated run; subtracting them removes the hum or whistle and
leaves everything that does not stay put (speech, music) where it was. A run
whose steady part holds little of its energy is left alone: the strongest
rate of a run of speech is speech."""

import math

import torch

PAD = 8  # zero-padding factor of the rate search
REFINE = 32  # then this many steps each way between grid points
SMOOTH = 9  # frames over which a partial's presence is averaged
MIN_FRAMES = 16  # shorter runs cannot tell a steady partial from the rest
SIGNIFICANT = 0.1  # a run's steady part must hold this share of its energy; the
#                    strongest of many candidate rates in a run of speech alone holds ~1 %


def _runs(row: torch.Tensor):
    edges = torch.nonzero(torch.diff(torch.nn.functional.pad(row.to(torch.int8), (1, 1))))
    edges = edges.flatten().tolist()
    return zip(edges[::2], edges[1::2], strict=True)


def _presence(z: torch.Tensor, steady: torch.Tensor) -> torch.Tensor:
    """How much of the steady partial each frame holds, 0..1, smoothed over
    ``SMOOTH`` frames: a whistle that starts or stops inside the run is not
    subtracted where it is not (speech's own share along it averages out)."""
    share = (z * steady.conj()).real / (steady.abs() ** 2).clamp(min=1e-30)
    share = share.sum(0, keepdim=True) / z.shape[0]
    kernel = torch.ones(1, 1, SMOOTH, dtype=share.dtype, device=share.device) / SMOOTH
    padded = torch.nn.functional.pad(share[None], (SMOOTH // 2, SMOOTH // 2), mode="replicate")
    return torch.nn.functional.conv1d(padded, kernel)[0].clamp(0.0, 1.0)


def subtract(z: torch.Tensor, covered: torch.Tensor, hz: torch.Tensor, span_hz: torch.Tensor,
             frames_per_second: float) -> torch.Tensor:
    """``z [ch, bins, frames]`` less the steady partial of each covered run; ``hz``
    each bin's centre and ``span_hz`` how far from it the partial may lie."""
    out = z.clone()
    for b in range(z.shape[1]):
        for a, e in _runs(covered[b]):
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
            if power[j] / n < SIGNIFICANT * float((z[:, b, a:e].abs() ** 2).sum()):
                continue  # nothing steady here: leave the run alone
            m = torch.arange(n, device=z.device, dtype=torch.float64)
            # refine the rate between the neighbouring grid points: a rate off by
            # d cycles per frame drifts d * n / 2 cycles by the run's ends
            fine = rate[j] + torch.linspace(-1, 1, 2 * REFINE + 1, dtype=torch.float64,
                                            device=z.device) / size
            waves = torch.exp(-2j * math.pi * fine[:, None] * m[None]).to(z.dtype)  # [r, n]
            sums = z[:, b, a:e] @ waves.T  # [ch, r]
            best = int(torch.argmax((sums.abs() ** 2).sum(0)))
            carrier = waves[best].conj()
            steady = (sums[:, best:best + 1] / n) * carrier  # [ch, n]
            out[:, b, a:e] -= steady * _presence(z[:, b, a:e], steady)
    return out
