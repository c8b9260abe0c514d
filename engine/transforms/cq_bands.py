"""The bands of the constant-Q filterbank: where they are, how wide, and their shape.

Centres are nsgt's ``OctScale``, ``fmin * 2^(k/bpo)``, up to where neighbours are
half of what the hop allows apart; from there evenly spaced to Nyquist (a
variable-Q top: constant Q to Nyquist would need half the hop, twice the frames).
Each band's width ``W`` is that of nsgt's sliced filterbank (``nsgfwin_sl``): two
spacings, at least ``MIN_WIDTH`` bins of the reference grid (about 1.5 s, so
10.8 Hz at 44.1 kHz). A band below 0 Hz holds a low-pass band and one at Nyquist
a high-pass band, so every frequency is covered.

Shape: a Gaussian with the spread of nsgt's Blackman-Harris bump of width ``W``
(so the picture has the same resolution), ``sigma = SPREAD * W``, cut at
``CUT`` sigma with its pedestal taken off, or nearer where the hop's bound on a
band's support says so (the top bands). The low-pass and high-pass bands are a
plateau with Gaussian edges (an erf step). A Gaussian's atom is a Gaussian in
time, which falls to -130 dB within 5.5 of its spreads: that is what makes the
transform local without a seam (a Blackman-Harris bump's atom has sidelobes at
-92 dB that decay only as 1/t^3).
"""

import math

import numpy as np
import torch

from engine.errors import ParameterError

MIN_WIDTH = 16  # narrowest band, in bins of the reference grid (nsgt.NSGT_sliced's min_win)
FRAMES_PER_REFERENCE = 512  # the hop is the reference grid over this (128 at 44.1 kHz)
CUT = 6.0  # sigma: a Gaussian ends here (e^-18: -156 dB)
TOP_CUT = 3.5  # sigma: at least this between a band's centre and the hop's bound
TAPER = 0.4  # the last part of a band's support, over which it is brought smoothly to 0
ATOM_REACH = 6.0  # an atom's spread in time is 1 / (2 pi sigma); it is kept to this many
DUAL_FLOOR = 140.0  # dB: how far the dual's ringing past the reach may reach
RING = DUAL_FLOOR / (20 * math.log10(math.e)) / math.pi ** 2


def reference_length(sample_rate: int) -> int:
    """About 1.5 s, a power of two: the grid the bands' widths and the hop are set on."""
    return 1 << max(10, round(math.log2(sample_rate * 1.5)))


def _blackman_harris_spread() -> float:
    """The spread (standard deviation of the energy) of nsgt's modified Blackman-Harris
    bump of width 1: 0.101."""
    x = np.linspace(-0.5, 0.5, 8193)
    w = (0.35872 + 0.48832 * np.cos(2 * np.pi * x) + 0.14128 * np.cos(4 * np.pi * x)
         + 0.01168 * np.cos(6 * np.pi * x)) ** 2
    return float(np.sqrt((w * x * x).sum() / w.sum()))


# a Gaussian exp(-f^2 / (2 sigma^2)) has energy spread sigma / sqrt(2)
SPREAD = math.sqrt(2) * _blackman_harris_spread()  # sigma over width: 0.143


def centre_frequencies(sample_rate: int, bpo: int, *, fmin: float,
                       max_spacing: float) -> tuple[np.ndarray, np.ndarray, int]:
    """The bands' centres (Hz) below Nyquist, their Q factors, and how many are log-spaced.

    ``fmin * 2^(k/bpo)`` while neighbours stay within ``max_spacing`` Hz, then
    evenly ``max_spacing`` apart. The Q of a log band is nsgt's ``OctScale.Q()``; a
    linear band's Q gives it the width of two steps."""
    nf = sample_rate / 2
    ratio = 2 ** (1 / bpo)
    last_log = math.log(max_spacing / (fmin * (ratio - 1)), ratio)  # spacing reaches the cap
    octaves_below_nf = math.floor(math.log2(nf / fmin) * bpo - 1e-9) / bpo
    n_log = max(1, int(round(min(octaves_below_nf * bpo, math.floor(last_log)))) + 1)
    freqs = fmin * ratio ** np.arange(n_log)
    if n_log - 1 < octaves_below_nf * bpo - 1e-9:  # capped: the linear part up to Nyquist
        steps = math.floor((nf - freqs[-1]) / max_spacing - 1e-9)
        freqs = np.concatenate((freqs, freqs[-1] + max_spacing * np.arange(1, steps + 1)))
    q = np.full(len(freqs), math.sqrt(ratio) / (ratio - 1) / 2)
    q[n_log:] = freqs[n_log:] / (2 * max_spacing)
    return freqs, q, n_log


def widths(freqs: np.ndarray, q: np.ndarray, floor: float) -> np.ndarray:
    """Each band's width in Hz as ``nsgt.nsgfwin_sl`` sets it: the first and last
    ``f / Q``, the others from neighbour to neighbour; at least ``floor``."""
    w = np.empty(len(freqs))
    w[0], w[-1] = freqs[0] / q[0], freqs[-1] / q[-1]
    w[1:-1] = freqs[2:] - freqs[:-2]
    return np.maximum(w, floor)


def spacings(freqs: np.ndarray) -> np.ndarray:
    """Each band's distance to its neighbours (the mean of the two gaps)."""
    gaps = np.diff(freqs)
    return np.concatenate(([gaps[0]], (gaps[1:] + gaps[:-1]) / 2, [gaps[-1]]))


def _smoothstep(v: torch.Tensor) -> torch.Tensor:
    """1 at 0, 0 at 1, with two derivatives zero at both ends."""
    v = v.clamp(0, 1)
    return 1 - v ** 3 * (10 - 15 * v + 6 * v * v)


class Bands:
    """The filterbank of a sample rate and scale: ``hz`` (centres, 0 Hz and Nyquist
    included), ``sigma`` (each band's Gaussian, Hz), ``plateau`` (the low-pass band's
    flat part, Hz), ``half`` (half its support, Hz), ``scale`` (the frame's window over
    :meth:`response`, which is 1 at a band's centre), ``hop`` and ``reach`` (samples an
    atom is kept to either side of its frame)."""

    def __init__(self, sample_rate: int, bpo: int, fmin: float):
        self.sample_rate = sr = sample_rate
        ref = reference_length(sr)
        freqs, q, self.n_log = centre_frequencies(
            sr, bpo, fmin=fmin, max_spacing=FRAMES_PER_REFERENCE / 2 * sr / ref)
        narrowest = SPREAD * MIN_WIDTH * sr / ref
        reach_s = ATOM_REACH / (2 * math.pi * narrowest)
        # as wide as nsgt's bands, and wide enough for their neighbours: where bands
        # are far apart for their width, the dual's spectrum ripples at their spacing
        # and its atom rings at 1 / spacing; this keeps the ringing past the reach
        # below -DUAL_FLOOR dB
        ripple = np.sqrt(RING * spacings(freqs) / reach_s)
        sigma = np.maximum(SPREAD * widths(freqs, q, MIN_WIDTH * sr / ref), ripple)
        nf = sr / 2
        self.hz = np.concatenate(([0.0], freqs, [nf]))
        self.sigma = np.concatenate(([sigma[0]], sigma, [sigma[-1]]))
        # the low-pass band holds what bands going on below fmin would: a plateau up to
        # half a step below it, at the energy they would sum to there (so the frame's
        # energy runs on smoothly into the log bands: a step in it makes the dual ring)
        below = freqs[0] * (1 - 2 ** (-1 / bpo))
        self.plateau = np.zeros(len(self.hz))
        self.plateau[0] = freqs[0] - below / 2
        self.scale = np.ones(len(self.hz))  # the frame's window over the stored response
        self.scale[0] = math.sqrt(math.sqrt(math.pi) * self.sigma[0] / below / 2)
        # the hop: a band's support may not pass sr / hop (then the frame is painless);
        # the low-pass band's plateau and edges set a shorter one below a high fmin
        needed = 2 * (self.plateau[0] + CUT * self.sigma[0]) * ref / sr
        frames = max(FRAMES_PER_REFERENCE, 1 << math.ceil(math.log2(needed)))
        if frames > ref // 2:
            raise ParameterError(f"{bpo} bins per octave from {fmin} Hz does not fit the "
                                 "frame; use a lower lowest frequency")
        self.hop = ref // frames
        bound = sr / self.hop / 2 * (1 - 1e-9)
        self.sigma = np.minimum(self.sigma, bound / TOP_CUT)
        self.half = np.minimum(self.plateau + CUT * self.sigma, bound)
        self.reach = math.ceil(reach_s * sr / self.hop) * self.hop

    def __len__(self) -> int:
        return len(self.hz)

    def response(self, k, hz: torch.Tensor) -> torch.Tensor:
        """The response of band ``k`` at ``hz`` (float64; 0 outside its support), 1 at its
        centre. ``k``: a band; a range of bands (``[bands, len(hz)]``); or a tensor of
        bands, one for each of ``hz``. The low-pass band's is a plateau with the edge of
        a sum of Gaussians' energies."""
        if isinstance(k, slice):
            k = torch.arange(len(self.hz))[k][:, None]
        centre, s, flat, half = (torch.from_numpy(a)[k] for a in (self.hz, self.sigma,
                                                                   self.plateau, self.half))
        d = (hz - centre).abs()
        # the low-pass band: sqrt of the normal distribution's integral, of spread s / sqrt(2)
        shape = torch.where(flat > 0, torch.sqrt(0.5 * torch.special.erfc((d - flat) / s)),
                            torch.exp(-0.5 * (d / s) ** 2))
        start = half - TAPER * (half - flat)
        return torch.where(d < half, shape * _smoothstep((d - start) / (half - start)), 0.0)
