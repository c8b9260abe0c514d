"""A sliced constant-Q transform (a non-stationary Gabor frame) in torch: exact and local.

The signal is cut into slices of ``slice_len`` samples (about 1.5 s; a
power of two). Each slice gets the filterbank of nsgt's sliced CQ
(``nsgt.nsgfwin_sl``: Blackman-Harris bumps centred on ``fmin * 2^(k/bpo)``
with bandwidth proportional to the centre, a low-pass band at 0 Hz and a
high-pass band at Nyquist, so every frequency is covered), applied to the
slice's real FFT. Every band is sampled on the slice's one time grid of
``slice_len / hop`` frames (nsgt's "matrix form"): ``hop`` is the largest
power of two for which the widest band still fits, so the frame is painless
and its canonical dual is a division by the summed squared responses.

So a document is still ``[ch, bins, frames]`` on a uniform grid, and:
- perfect reconstruction: each slice is inverted exactly from its own frames;
- locality: frames ``[f0, f1)`` need only the slices they fall in, and a span
  of samples only the slices it overlaps; each slice is computed alone, by the
  same code whatever the request, so a span equals the full inverse bit for bit.

Slices are disjoint (a Tukey window with no transition): that keeps one
frame per grid point, where overlapping slices would store every instant
twice. The price: an atom near a slice's edge wraps around inside its slice,
which only matters for edits that end right at a slice boundary in the lowest
bands (whose atoms are about a slice long anyway).

Coefficients keep absolute phase (bands are not demodulated): band ``k``
frame ``j`` is the band-passed slice sampled at ``j * hop``, so a steady
sinusoid advances by ``2 pi f hop / sr`` per frame, as in the STFT. nsgt's
coefficients equal ours times ``exp(-2 pi i r_k j / M)`` (``r_k`` the band's
centre bin).
"""

import math

import numpy as np
import torch

from engine.errors import ParameterError
from engine.transforms.base import Transform

BPO_RANGE = (4, 96)
FMIN_RANGE = (5.0, 1000.0)
MIN_WIN = 16  # narrowest band, in FFT bins of a slice (nsgt.NSGT_sliced's min_win)
SLICES_AT_ONCE = 4  # the forward's batch: about 15 MB of buffers for stereo
FRAMES_PER_SLICE = 512  # M: frames per slice, so hop = slice_len / 512 (128 at 44.1 kHz)


def slice_length(sample_rate: int) -> int:
    """About 1.5 s, a power of two: long enough for fine low bands."""
    return 1 << max(10, round(math.log2(sample_rate * 1.5)))


def _blackharr(n: int) -> np.ndarray:
    """nsgt's ``util.blackharr`` (modified Blackman-Harris), rotated so index 0 is its peak."""
    nn = (n // 2) * 2
    k = np.arange(n)
    bh = (0.35872 - 0.48832 * np.cos(k * (2 * np.pi / nn)) + 0.14128 * np.cos(k * (4 * np.pi / nn))
          - 0.01168 * np.cos(k * (6 * np.pi / nn)))
    return np.hstack((bh[-n // 2:], bh[:-n // 2]))


def _hannwin(n: int) -> np.ndarray:
    return 0.5 * (1 + np.cos(np.arange(n) * 2 * np.pi / n))


def centre_frequencies(sample_rate: int, bpo: int, fmin: float,
                       max_spacing: float) -> tuple[np.ndarray, np.ndarray, int]:
    """The bands' centres (Hz) below Nyquist, their Q factors, and how many are log-spaced.

    ``fmin * 2^(k/bpo)`` while neighbours stay within ``max_spacing`` Hz, then
    evenly ``max_spacing`` apart (a variable-Q top: a constant-Q band near
    Nyquist would be so wide that every band needs twice the frames). The Q of
    a log band is nsgt's ``OctScale.Q()``; a linear band's Q gives it the support
    of its neighbours' spacing, two steps."""
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


def filterbank(sample_rate: int, slice_len: int, bpo: int, fmin: float, max_support: int):
    """Centre frequencies (Hz), centre bins and windows (centred: index 0 at the
    centre) of the bands, as ``nsgt.nsgfwin_sl.nsgfwin`` builds them for the
    scale of :func:`centre_frequencies`, no band wider than ``max_support`` bins
    of the slice's FFT (save a low-pass band below a high ``fmin``)."""
    nf = sample_rate / 2
    freqs, q, _ = centre_frequencies(sample_rate, bpo, fmin,
                                     max_support / 2 * sample_rate / slice_len)
    n = len(freqs)
    fb = np.concatenate(([0.0], freqs, [nf])) * slice_len / sample_rate
    mirror = (sample_rate - freqs[-1]) * slice_len / sample_rate
    m = np.zeros(n + 3)
    m[0] = 2 * fb[1]
    m[1] = fb[1] / q[0]
    for k in range(2, n):
        m[k] = fb[k + 1] - fb[k - 1]
    m[n] = fb[n] / q[-1]
    m[n + 1] = mirror - fb[n]
    m[n + 2] = m[n]  # the mirror of band n, only used to shape the Nyquist band
    m = np.maximum(np.round(m / 4).astype(int) * 4, MIN_WIN)
    windows = [_blackharr(int(s)) for s in m[:n + 2]]
    for k, nxt in ((0, m[1]), (n + 1, m[n + 2])):  # flat low-pass / high-pass ends
        if m[k] > nxt:
            w = np.ones(m[k])
            w[m[k] // 2 - nxt // 2:m[k] // 2 + math.ceil(nxt / 2)] = _hannwin(nxt)
            windows[k] = w
    centres = (np.round(fb / 2).astype(int) * 2)
    hz = np.concatenate(([0.0], freqs, [nf]))
    return hz, centres, windows


def _geometric(theta: torch.Tensor, count: int) -> torch.Tensor:
    """``sum(exp(1j * theta * m) for m in range(count))`` for each ``theta``."""
    theta = torch.remainder(theta + math.pi, 2 * math.pi) - math.pi
    near = theta.abs() < 1e-12
    safe = torch.where(near, 1.0, theta)
    value = torch.expm1(1j * safe * count) / torch.expm1(1j * safe)
    return torch.where(near, torch.full_like(value, count), value)


SEAM_GAP = 0.2  # of a slice, either side of a seam, left wholly to the other slicing


def seam_weight(at: torch.Tensor, slice_len: int) -> torch.Tensor:
    """Weight of a slicing at ``at`` samples into its slices: 0 within SEAM_GAP of a
    seam (where its bursts are), 1 within SEAM_GAP of the middle (the other
    slicing's seam), a raised cosine between; the other slicing's weight is the
    rest. Erasing a 200 Hz tone across slices left -62 dB of it at the worst seam
    (-11 dB with one slicing); weights of sin^2 over the whole slice leaked each
    slicing's bursts into the other's middle (-67 dB mid-slice of a 60 Hz tone,
    against -80 dB with the gap)."""
    d = torch.minimum(at, slice_len - at) / slice_len  # 0 at a seam, 0.5 mid-slice
    ramp = torch.clamp((d - SEAM_GAP) / (0.5 - 2 * SEAM_GAP), 0, 1)
    return torch.sin(math.pi / 2 * ramp) ** 2


class SlicedCQ(Transform):
    kind = "cq"
    confined_edits = True

    def __init__(self, sample_rate: int, bins_per_octave: int = 48, fmin: float = 32.7,
                 device: torch.device | str = "cpu", slice_len: int | None = None):
        if sample_rate <= 0:
            raise ParameterError(f"sample rate {sample_rate} Hz is not valid")
        if not BPO_RANGE[0] <= bins_per_octave <= BPO_RANGE[1]:
            raise ParameterError(f"{bins_per_octave} bins per octave is not supported; use "
                                 f"{BPO_RANGE[0]} to {BPO_RANGE[1]} (48 is usual)")
        if not (FMIN_RANGE[0] <= fmin <= FMIN_RANGE[1] and fmin < sample_rate / 4):
            raise ParameterError(f"lowest frequency {fmin} Hz is not supported; use "
                                 f"{FMIN_RANGE[0]:g} to {min(FMIN_RANGE[1], sample_rate / 4):g} Hz")
        self.sample_rate, self.bpo, self.fmin = int(sample_rate), int(bins_per_octave), float(fmin)
        self.slice_len = slice_len or slice_length(self.sample_rate)
        self.device = torch.device(device)
        hz, centres, windows = filterbank(self.sample_rate, self.slice_len, self.bpo, self.fmin,
                                          FRAMES_PER_SLICE)
        widest = max(len(w) for w in windows)  # wider than M only for a low-pass below high fmin
        self.frames_per_slice = max(FRAMES_PER_SLICE, 1 << math.ceil(math.log2(widest)))
        if self.frames_per_slice > self.slice_len // 2:
            raise ParameterError(f"{bins_per_octave} bins per octave from {fmin} Hz does not fit "
                                 f"a {self.slice_len}-sample slice; use a lower lowest frequency")
        self.hop = self.slice_len // self.frames_per_slice
        self.chunk_frames = self.frames_per_slice
        self._hz = torch.tensor(hz, dtype=torch.float64)
        _, _, n_log = centre_frequencies(self.sample_rate, self.bpo, self.fmin,
                                         FRAMES_PER_SLICE / 2 * self.sample_rate / self.slice_len)
        top = len(hz) - 2  # the last band below Nyquist; then the Nyquist band
        step = float(hz[top] - hz[top - 1]) if top > n_log else 0.0
        # for bin_of, hz_of: bin 1's centre, the last log bin and its centre, the linear
        # step above it, the top bin and its centre, Nyquist
        self._axis = (float(hz[1]), n_log, float(hz[n_log]), step, top, float(hz[top]),
                      float(hz[top + 1]))
        self._support_hz = torch.tensor([len(w) for w in windows], dtype=torch.float64) \
            * self.sample_rate / self.slice_len
        self._build(centres, windows)

    def _build(self, centres, windows) -> None:
        """The frame as sparse entries, sorted by band: the rfft bin each one reads,
        its place in the band's M-point buffer (``bin mod M``, which keeps absolute
        phase), and its analysis and dual weights. ``_ptr[k]``: band k's first entry."""
        half, m = self.slice_len // 2, self.frames_per_slice
        bins, place, weight, ptr = [], [], [], [0]
        for b, (c, w) in enumerate(zip(centres, windows, strict=True)):
            offsets = np.arange(-(len(w) // 2), len(w) - len(w) // 2)
            keep = (c + offsets >= 0) & (c + offsets <= half)
            k_bins = c + offsets[keep]
            bins.append(k_bins)
            place.append(b * m + k_bins % m)
            weight.append(w[offsets[keep] % len(w)])
            ptr.append(ptr[-1] + int(keep.sum()))
        bins, place, weight = np.concatenate(bins), np.concatenate(place), np.concatenate(weight)
        energy = np.zeros(half + 1)
        np.add.at(energy, bins, weight ** 2)
        dev = self.device
        self._bins = torch.from_numpy(bins).to(dev)
        self._place = torch.from_numpy(place).to(dev)
        self._weight = torch.from_numpy(weight).float().to(dev)
        self._dual = torch.from_numpy(weight / energy[bins]).float().to(dev)
        self._ptr = ptr

    def _entries(self, bands: slice | None, device):
        """Entries of the bands ``bands`` (all by default), places relative to the first."""
        b0, b1, _ = (bands or slice(None)).indices(self.n_bins)
        e = slice(self._ptr[b0], self._ptr[b1])
        return (b1 - b0, self._bins[e].to(device), (self._place[e] - b0 * self.frames_per_slice)
                .to(device), self._weight[e].to(device), self._dual[e].to(device))

    def __repr__(self) -> str:
        return (f"SlicedCQ(bins_per_octave={self.bpo}, fmin={self.fmin}, "
                f"slice_len={self.slice_len}, hop={self.hop})")

    def to(self, device: torch.device | str) -> "SlicedCQ":
        if torch.device(device) == self.device:
            return self  # building the filterbank takes ~35 ms
        return SlicedCQ(self.sample_rate, self.bpo, self.fmin, device, self.slice_len)

    def settings(self) -> dict:
        return {"transform": "cq", "bins_per_octave": self.bpo, "fmin": self.fmin}

    # -- shape -------------------------------------------------------------------
    @property
    def n_bins(self) -> int:
        return len(self._hz)

    def n_slices(self, n_samples: int) -> int:
        return max(1, -(-n_samples // self.slice_len))

    def n_frames(self, n_samples: int) -> int:
        return self.n_slices(n_samples) * self.frames_per_slice

    def _slices(self, frame0: int, frame1: int) -> tuple[int, int]:
        m = self.frames_per_slice
        return frame0 // m, -(-frame1 // m)

    # -- analysis -------------------------------------------------------------------
    def frame_span(self, frame0: int, frame1: int) -> tuple[int, int]:
        s0, s1 = self._slices(frame0, frame1)
        return s0 * self.slice_len, s1 * self.slice_len

    def forward_segment(self, seg: torch.Tensor, frame0: int, frame1: int,
                        bins: slice | None = None) -> torch.Tensor:
        s0, s1 = self._slices(frame0, frame1)
        m = self.frames_per_slice
        count, bins_, place, weight, _ = self._entries(bins, seg.device)
        lead, n = seg.shape[:-1], s1 - s0
        out = torch.empty(lead + (count, n, m), dtype=torch.complex64, device=seg.device)
        buffer = None
        for i in range(0, n, SLICES_AT_ONCE):  # a few slices at a time: cache-friendly
            g = min(SLICES_AT_ONCE, n - i)
            if buffer is None or buffer.shape[-2] != g:  # zeros once: the places never change
                buffer = torch.zeros(lead + (g, count * m), dtype=torch.complex64,
                                     device=seg.device)
            spectrum = torch.fft.rfft(seg[..., i * self.slice_len:(i + g) * self.slice_len]
                                      .unflatten(-1, (g, self.slice_len)))
            rows = spectrum.reshape(-1, spectrum.shape[-1])  # gather/scatter: 3x indexing's speed
            values = torch.gather(rows, 1, bins_.expand(len(rows), -1)) * weight
            buffer.view(len(rows), -1).scatter_(1, place.expand(len(rows), -1), values)
            out[..., i:i + g, :] = torch.fft.ifft(buffer.unflatten(-1, (count, m))) \
                .transpose(-3, -2)
        out = out.flatten(-2)
        first = s0 * m
        return out[..., frame0 - first:frame1 - first]

    def sinusoid(self, freq: float, amplitude: float, phase: float, bins: range,
                 frame0: int, frame1: int, length: int) -> torch.Tensor:
        """As :meth:`Transform.sinusoid`, from each slice's spectrum in closed form at
        the bins the bands read (a sum of two geometric series per bin), not from an
        FFT of the synthesized slice: a tone dab took about 3 ms, most of it the FFT.
        Computed in float64 on the CPU (MPS has no float64): a few thousand values."""
        s0, s1 = self._slices(frame0, frame1)
        m, n = self.frames_per_slice, self.slice_len
        count, bins_, place, weight, _ = self._entries(slice(bins.start, bins.stop), "cpu")
        bin_omega, weight = 2 * math.pi * bins_.double() / n, weight.double()
        omega = 2 * math.pi * freq / self.sample_rate
        out = torch.zeros((count, s1 - s0, m), dtype=torch.complex64)
        buffer = torch.zeros(count * m, dtype=torch.complex128)
        series = {}  # by the samples a slice has inside the file: whole slices share theirs
        for i, s in enumerate(range(s0, s1)):
            valid = min(n, max(0, length - s * n))
            if valid == 0:
                continue
            if valid not in series:
                series[valid] = (_geometric(omega - bin_omega, valid) * weight,
                                 _geometric(-omega - bin_omega, valid) * weight)
            up, down = series[valid]
            turn = complex(math.cos(omega * s * n + phase), math.sin(omega * s * n + phase))
            buffer.zero_()
            buffer.scatter_(0, place, 0.5 * amplitude * (up * turn + down * turn.conjugate()))
            out[:, i] = torch.fft.ifft(buffer.view(count, m)).to(torch.complex64)
        first = s0 * m
        return out.flatten(-2)[:, frame0 - first:frame1 - first].to(self.device)

    # -- synthesis --------------------------------------------------------------------
    def _inverse_slice(self, coeffs: torch.Tensor) -> torch.Tensor:
        """One slice's samples from its ``[..., bins, M]`` coefficients (the canonical dual)."""
        _, bins_, place, _, dual = self._entries(None, coeffs.device)
        rows = torch.fft.fft(coeffs).reshape(-1, coeffs.shape[-2] * coeffs.shape[-1])
        parts = torch.gather(rows, 1, place.expand(len(rows), -1)) * dual
        spectrum = coeffs.new_zeros((len(rows), self.slice_len // 2 + 1))
        spectrum.scatter_add_(1, bins_.expand(len(rows), -1), parts)
        return torch.fft.irfft(spectrum, n=self.slice_len).reshape(coeffs.shape[:-2] + (-1,))

    def inverse_span(self, frames: torch.Tensor, frame0: int, sample0: int, sample1: int,
                     length: int) -> torch.Tensor:
        fa, fb = self.given_frames(frames, frame0, sample0, sample1, length)
        m = self.frames_per_slice
        pieces = [self._inverse_slice(frames[..., f - frame0:f - frame0 + m])
                  for f in range(fa, fb, m)]  # one slice at a time: the same sums always
        y = torch.cat(pieces, -1) if len(pieces) > 1 else pieces[0]
        origin = fa // m * self.slice_len
        return y[..., sample0 - origin:sample1 - origin]

    @property
    def seam_margin(self) -> int:
        return self.slice_len // 2

    def blend_across_seams(self, heard: torch.Tensor, other: torch.Tensor, sample0: int
                           ) -> torch.Tensor:
        """Each slice is analysed as periodic, so a stroke across slices is heard with a
        burst at their ends (erasing a steady 60 Hz tone left -11 dB of it there, a
        tone drawn across them -11 to -14 dB of noise about it). The slicing shifted by
        half a slice has its ends at these slices' middles, and the same bands on the
        same time grid: the two renderings are blended by :func:`seam_weight`."""
        at = torch.arange(sample0, sample0 + heard.shape[-1], dtype=torch.float64,
                          device=heard.device) % self.slice_len
        weight = seam_weight(at, self.slice_len)
        return heard * weight + other.to(heard.device, heard.dtype) * (1 - weight)

    def without_seams(self, z: torch.Tensor, frame0: int, bins: slice, audio_of
                      ) -> torch.Tensor:
        """Near a slice's end the coefficients of a steady tone waver (up to 87 % in
        magnitude at 100 Hz, over a quarter second): where :func:`seam_weight` gives
        this slicing less than all, ``z`` is blended with the frames of the current
        audio on the slicing shifted by half a slice."""
        m, frames = self.frames_per_slice, z.shape[-1]
        at = (torch.arange(frame0, frame0 + frames, dtype=torch.float64) % m) * self.hop
        weight = seam_weight(at, self.slice_len).to(z.device, torch.float32)
        if bool((weight == 1).all()):
            return z
        start = ((frame0 * self.hop + self.seam_margin) // self.slice_len * self.slice_len
                 - self.seam_margin)  # the shifted slice frame0 is in
        first = frame0 - start // self.hop
        stop = start + -(-(first + frames) // m) * self.slice_len
        other = self.forward_frames(audio_of(start, stop), first, first + frames, bins)
        return z * weight + other * (1 - weight)

    def samples_affected(self, frame0: int, frame1: int, length: int) -> tuple[int, int]:
        start, stop = self.frame_span(frame0, frame1)
        return max(0, start), min(length, stop)

    def frames_needed(self, sample0: int, sample1: int, length: int) -> tuple[int, int]:
        m, n = self.frames_per_slice, self.slice_len
        return sample0 // n * m, min(self.n_frames(length), -(-sample1 // n) * m)

    # -- physical units ------------------------------------------------------------------
    def bin_frequencies(self) -> torch.Tensor:
        return self._hz.clone()

    def bin_of(self, hz: float) -> float:
        f1, n_log, f_log, step, top, f_top, nyquist = self._axis
        if hz <= f1:
            return hz / f1
        if hz >= f_top:
            return top + (hz - f_top) / (nyquist - f_top)
        if hz >= f_log:
            return n_log + (hz - f_log) / step
        return 1 + self.bpo * math.log2(hz / f1)

    def hz_of(self, bin_: float) -> float:
        f1, n_log, f_log, step, top, f_top, nyquist = self._axis
        if bin_ <= 1:
            return bin_ * f1
        if bin_ >= top:
            return f_top + (bin_ - top) * (nyquist - f_top)
        if bin_ >= n_log:
            return f_log + (bin_ - n_log) * step
        return f1 * 2 ** ((bin_ - 1) / self.bpo)

    def axis(self) -> dict[str, float]:
        """The pieces of :meth:`bin_of`, for the view's shader: linear up to bin 1 at
        ``f1``, log (``bpo``) up to bin ``log_top`` at ``f_log``, linear by ``step`` Hz
        up to bin ``top`` at ``f_top``, then linear to Nyquist."""
        names = ("f1", "log_top", "f_log", "step", "top", "f_top", "nyquist")
        return {"bpo": float(self.bpo)} | {k: float(v) for k, v in zip(names, self._axis,
                                                                       strict=True)}

    def resolution_hz(self, hz: float) -> float:
        k = min(max(round(self.bin_of(hz)), 0), self.n_bins - 1)
        return float(self._support_hz[k]) / 2

    @property
    def full_scale(self) -> float:
        return self.hop / 2  # |coefficient| of a unit cosine at a band's centre
