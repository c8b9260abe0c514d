"""A constant-Q transform in torch: a filterbank with one hop, computed in blocks.

Band ``k`` (:mod:`engine.transforms.cq_bands`: Gaussian bumps of constant Q,
a low-pass and a high-pass band) filters the whole signal, and frame ``j`` is the
filtered signal at sample ``j * hop``:

    c[k, j] = sum over frequencies f of H_k(f) X(f) exp(2 pi i f j hop / sr)

so the frame is time-invariant (a steady sinusoid gives steady magnitudes, and
advances by ``2 pi f hop / sr`` per frame in every band: absolute phase), and
since no band is wider than ``sr / hop`` it is painless: the canonical dual
divides by ``S(f) = sum_k |H_k(f)|^2``, another filterbank.

A band's atom (its impulse response) lasts: it is kept to ``reach`` samples
either side (0.56 s at 44.1 kHz, where the narrowest band's Gaussian atom is
below -150 dB). So frames ``[b M, (b + 1) M)`` (a block, ``M = block_frames``)
are computed from the samples ``[b T - reach, (b + 1) T + reach)`` (``T = M hop``)
by one FFT of them (overlap-save), and output samples ``[b T, (b + 1) T)`` from
the frames there are. A frame or a sample is always computed by its block from
the same inputs, so a span of either equals the whole transform's bit for bit,
and a frame depends on ``T + 2 reach`` samples at most.

Ends: before sample 0 the signal is its mirror image (``x[-t] = x[t]``), whose
frames are those after sample 0 conjugated (``c[k, -j] = conj(c[k, j])``), so no
frame before 0 is stored; after the last sample it is zero, and frames go on
while their atoms reach the file (``reach`` past its end).

Coefficients keep nsgt's scale: a full-scale cosine at a band's centre is
``hop / 2``. A band that passes 0 Hz or Nyquist reads the mirror half of the
spectrum there (a real signal's), so its response is smooth across them.
"""

import math

import numpy as np
import torch

from engine.errors import ParameterError
from engine.transforms.cq_bands import SPREAD, Bands
from engine.transforms.settings import BY_NAME
from engine.transforms.transform import Transform

WINDOW_OVER_REACH = 2  # a block's FFT over both its margins: T = 76288 samples at 44.1 kHz
BLOCKS_AT_ONCE = 2  # blocks a batch of the forward: about 15 MB of buffers for stereo


class ConstantQ(Transform):
    kind = "cq"
    confined_edits = True
    atom_sum = 4.5  # measured: 2.0 for most bands, up to 4.31 for the low- and high-pass ones

    def __init__(self, sample_rate: int, bins_per_octave: int = BY_NAME["bins_per_octave"].default,
                 *, fmin: float = BY_NAME["fmin"].default, device: torch.device | str = "cpu"):
        if sample_rate <= 0:
            raise ParameterError(f"sample rate {sample_rate} Hz is not valid")
        bins_per_octave = BY_NAME["bins_per_octave"].check(bins_per_octave)
        fmin = BY_NAME["fmin"].check(fmin)
        if fmin >= sample_rate / 4:
            raise ParameterError(f"lowest frequency {fmin} Hz is not supported at {sample_rate} "
                                 f"Hz; use {BY_NAME['fmin'].low:g} to below {sample_rate / 4:g} Hz")
        self.sample_rate, self.bpo, self.fmin = int(sample_rate), int(bins_per_octave), float(fmin)
        self.device = torch.device(device)
        self.bands = Bands(self.sample_rate, self.bpo, self.fmin)
        self.hop, self.reach = self.bands.hop, self.bands.reach
        self.edge = self.reach // self.hop  # frames an atom reaches either side
        # a block's FFT: a power of two, at least twice its margins (a block's work per
        # sample is least near there, for a whole file and for an edit's splice alike)
        self.length = 1 << math.ceil(math.log2(2 * WINDOW_OVER_REACH * self.reach))  # L
        self.window_frames = self.length // self.hop
        self.block_frames = self.chunk_frames = self.window_frames - 2 * self.edge
        self.block = self.block_frames * self.hop  # T: samples a block
        self.shift_samples = self.block  # a frame's bits are its whole block's
        hz = self.bands.hz
        self._hz = torch.tensor(hz, dtype=torch.float64)
        top = len(hz) - 2  # the last band below Nyquist; then the Nyquist band
        n_log = self.bands.n_log
        step = float(hz[top] - hz[top - 1]) if top > n_log else 0.0
        # for bin_of, hz_of: bin 1's centre, the last log bin and its centre, the linear
        # step above it, the top bin and its centre, Nyquist
        self._axis = (float(hz[1]), n_log, float(hz[n_log]), step, top, float(hz[top]),
                      float(hz[top + 1]))
        self._build()

    def _build(self) -> None:
        """The frame as sparse entries, sorted by band: the bin of a block's half spectrum
        each reads (a bin past 0 Hz or Nyquist reads its mirror, conjugated: ``_mirrored``),
        its place in the band's buffer of ``window_frames`` points (``bin mod`` that, which
        keeps absolute phase), and its analysis and dual weights. ``_ptr[k]``: band k's
        first entry."""
        n, m, sr = self.length, self.window_frames, self.sample_rate
        half, bands = n // 2, self.bands
        lo = torch.from_numpy(np.ceil((bands.hz - bands.half) * n / sr)).long()
        counts = torch.from_numpy(np.floor((bands.hz + bands.half) * n / sr)).long() - lo + 1
        band = torch.repeat_interleave(torch.arange(len(bands)), counts)
        first = torch.cumsum(counts, 0) - counts
        b = lo[band] + torch.arange(len(band)) - first[band]  # every bin each band spans
        w = bands.response(band, b.double() * sr / n)
        keep = w > 0
        band, b, w = band[keep], b[keep], w[keep]
        per_band = torch.bincount(band, minlength=len(bands))
        if int(per_band.max()) > m:
            raise AssertionError("a band is wider than the frame allows")
        ptr = [0] + torch.cumsum(per_band, 0).tolist()
        reads = torch.where(b < 0, -b, torch.where(b > half, n - b, b))
        mirrored = (b < 0) | (b > half)
        place, weight = band * m + b % m, w
        scale = torch.from_numpy(bands.scale)[band] ** 2
        energy = torch.zeros(half + 1, dtype=torch.float64)
        energy.index_add_(0, reads, scale * weight ** 2)  # on the CPU: entry by entry
        if not bool((energy > 0).all()):
            raise AssertionError("the bands leave a frequency uncovered")
        dev = self.device
        self._layers: dict[torch.device, list] = {}  # built for a device when used there
        self._reads = reads.to(dev)
        self._mirrored = mirrored  # (on the CPU: only where they are is used)
        self._place = place.to(dev)
        # the FFTs' scaling folded in (they run unnormalized): 1 / window_frames for the
        # analysis's inverse FFT, 1 / block length for the synthesis's inverse real FFT
        self._weight = (weight / m).float().to(dev)
        self._dual = (scale * weight / energy[reads] / n).float().to(dev)
        self._ptr = ptr
        self._all = (self.n_bins, self._reads, self._place, self._weight, self._dual,
                     torch.nonzero(self._mirrored).flatten().to(dev))

    def _entries(self, bands: slice | None, device):
        """Entries of the bands ``bands`` (all by default), places relative to the first,
        and which of them read a mirrored bin."""
        b0, b1, _ = (bands or slice(None)).indices(self.n_bins)
        if (b0, b1) == (0, self.n_bins) and device == self.device:
            return self._all
        e = slice(self._ptr[b0], self._ptr[b1])
        return (b1 - b0, self._reads[e].to(device),
                (self._place[e] - b0 * self.window_frames).to(device),
                self._weight[e].to(device), self._dual[e].to(device),
                torch.nonzero(self._mirrored[e]).flatten().to(device))

    def __repr__(self) -> str:
        return (f"ConstantQ(bins_per_octave={self.bpo}, fmin={self.fmin}, hop={self.hop}, "
                f"reach={self.reach})")

    def to(self, device: torch.device | str) -> "ConstantQ":
        if torch.device(device) == self.device:
            return self  # building the filterbank takes ~60 ms
        return ConstantQ(self.sample_rate, self.bpo, fmin=self.fmin, device=device)

    def settings(self) -> dict:
        return {"transform": "cq", "bins_per_octave": self.bpo, "fmin": self.fmin}

    # -- shape -------------------------------------------------------------------
    @property
    def n_bins(self) -> int:
        return len(self._hz)

    def n_frames(self, n_samples: int) -> int:
        """Frames up to the last whose atom reaches the signal."""
        return -(-max(n_samples, 1) // self.hop) + self.edge

    def _blocks(self, frame0: int, frame1: int) -> tuple[int, int]:
        m = self.block_frames
        return frame0 // m, -(-frame1 // m)

    # -- analysis -------------------------------------------------------------------
    def frame_span(self, frame0: int, frame1: int) -> tuple[int, int]:
        b0, b1 = self._blocks(frame0, frame1)
        return b0 * self.block - self.reach, b1 * self.block + self.reach

    def forward_segment(self, seg: torch.Tensor, frame0: int, frame1: int,
                        *, bins: slice | None = None) -> torch.Tensor:
        b0, b1 = self._blocks(frame0, frame1)
        if b0 == 0:  # before sample 0: its mirror image
            r = self.reach
            seg = torch.cat((seg[..., r + 1:2 * r + 1].flip(-1), seg[..., r:]), -1)
        m, e = self.block_frames, self.edge
        count, reads, place, weight, _, mirrored = self._entries(bins, seg.device)
        lead, n = seg.shape[:-1], b1 - b0
        out = torch.empty(lead + (count, n, m), dtype=torch.complex64, device=seg.device)
        buffer = None
        for i in range(0, n, BLOCKS_AT_ONCE):
            g = min(BLOCKS_AT_ONCE, n - i)
            if buffer is None or buffer.shape[-2] != g:  # zeros once: the places never change
                buffer = torch.zeros(lead + (g, count * self.window_frames),
                                     dtype=torch.complex64, device=seg.device)
            part = seg[..., i * self.block:(i + g) * self.block + 2 * self.reach]
            spectrum = torch.fft.rfft(part.unfold(-1, self.length, self.block))
            rows = spectrum.reshape(-1, spectrum.shape[-1])
            values = torch.gather(rows, 1, reads.expand(len(rows), -1))
            values[:, mirrored] = values[:, mirrored].conj()
            values *= weight
            buffer.view(len(rows), -1).scatter_(1, place.expand(len(rows), -1), values)
            frames = torch.fft.ifft(buffer.unflatten(-1, (count, self.window_frames)),
                                    norm="forward")
            out[..., i:i + g, :] = frames[..., e:e + m].transpose(-3, -2)
        first = b0 * m
        return out.flatten(-2)[..., frame0 - first:frame1 - first]

    def sinusoid(self, freq: float, amplitude: float, phase: float, *, bins: range,
                 frame0: int, frame1: int, length: int) -> torch.Tensor:
        """As :meth:`Transform.sinusoid`, in closed form: the frame is time-invariant, so a
        cosine's coefficients are each band's response at ``freq`` (and at its mirror,
        for the bands that pass 0 Hz or Nyquist) turning at ``freq``. This is the cosine
        as if it went on past the file's ends: within ``reach`` of them the file's own
        analysis differs (a mirror image before sample 0, zeros after the last)."""
        sr = self.sample_rate
        f = torch.tensor([freq, freq - sr, -freq, sr - freq], dtype=torch.float64)
        responses = self.bands.response(slice(bins.start, bins.stop), f)
        up, down = responses[:, :2].sum(1), responses[:, 2:].sum(1)
        turn = 2 * math.pi * freq / sr * self.hop * torch.arange(frame0, frame1,
                                                                 dtype=torch.float64) + phase
        rotor = torch.polar(torch.ones_like(turn), turn)
        coeffs = amplitude * self.full_scale * (up[:, None] * rotor + down[:, None] * rotor.conj())
        return coeffs.to(torch.complex64).to(self.device)

    # -- synthesis --------------------------------------------------------------------
    def _window(self, frames: torch.Tensor, frame0: int, block: int, total: int
                ) -> torch.Tensor:
        """The ``window_frames`` frames an output block is made from (those before frame
        0 mirrored, those from ``total`` on zero), from ``frames`` (starting at
        ``frame0``)."""
        first = block * self.block_frames - self.edge
        out = frames.new_zeros(frames.shape[:-1] + (self.window_frames,))
        lo, hi = max(first, 0), min(first + self.window_frames, total)
        out[..., lo - first:hi - first] = frames[..., lo - frame0:hi - frame0]
        if first < 0:  # c[-j] = conj(c[j])
            out[..., :-first] = frames[..., 1 - frame0:1 - first - frame0].flip(-1).conj()
        return out

    def _layers_on(self, device: torch.device) -> list[tuple[torch.Tensor, torch.Tensor]]:
        if device not in self._layers:  # ~50 ms: not where unused
            self._layers[device] = [(bins.to(device), entries.to(device))
                                    for bins, entries in _layers(self._reads.cpu())]
        return self._layers[device]

    def _inverse_blocks(self, windows: torch.Tensor) -> torch.Tensor:
        """Output blocks from their frames ``[..., bins, blocks, window_frames]`` (the
        canonical dual), ``[..., blocks * block]``."""
        _, reads, place, _, dual, mirrored = self._entries(None, windows.device)
        rows = torch.fft.fft(windows.transpose(-3, -2))  # [..., blocks, bins, window]
        lead = rows.shape[:-2]
        rows = rows.reshape(-1, rows.shape[-2] * rows.shape[-1])
        parts = torch.gather(rows, 1, place.expand(len(rows), -1)) * dual
        parts[:, mirrored] = parts[:, mirrored].conj()
        if windows.device.type == "cpu":  # entry by entry, in order: a fixed order here
            spectrum = rows.new_zeros((len(rows), self.length // 2 + 1))
            spectrum.scatter_add_(1, reads.expand(len(rows), -1), parts)
        else:  # atomic adds elsewhere (CUDA): layers instead, the same sums in that order
            spectrum = _sum_by_bin(parts, self._layers_on(windows.device))
        y = torch.fft.irfft(spectrum, n=self.length, norm="forward")[
            :, self.reach:self.reach + self.block]
        return y.reshape(lead + (-1,)).flatten(-2)

    def inverse_span(self, frames: torch.Tensor, frame0: int, *, sample0: int, sample1: int,
                     length: int) -> torch.Tensor:
        self.given_frames(frames, frame0, sample0=sample0, sample1=sample1, length=length)
        total = self.n_frames(length)
        b0, b1 = sample0 // self.block, -(-sample1 // self.block)
        pieces = [self._inverse_blocks(self._window(frames, frame0, b, total)[..., None, :])
                  for b in range(b0, b1)]  # one block at a time: the same sums always
        y = torch.cat(pieces, -1) if len(pieces) > 1 else pieces[0]
        origin = b0 * self.block
        return y[..., sample0 - origin:sample1 - origin]

    def samples_affected(self, frame0: int, frame1: int, length: int) -> tuple[int, int]:
        """The output blocks whose frames include ``[frame0, frame1)`` (or, near sample 0,
        their mirror images)."""
        m, e = self.block_frames, self.edge
        b0 = max(0, (frame0 - e) // m)
        b1 = -(-(frame1 + e) // m)
        return min(b0 * self.block, length), min(b1 * self.block, length)

    def frames_needed(self, sample0: int, sample1: int, length: int) -> tuple[int, int]:
        m, e = self.block_frames, self.edge
        b0, b1 = sample0 // self.block, -(-sample1 // self.block)
        return max(0, b0 * m - e), min(self.n_frames(length), b1 * m + e)

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
        """Half the width of the band at ``hz`` (of nsgt's Blackman-Harris bump with its
        spread: 3.5 sigma of its Gaussian, where it is at -53 dB)."""
        k = min(max(round(self.bin_of(hz)), 0), self.n_bins - 1)
        return float(self.bands.plateau[k] + self.bands.sigma[k] / (2 * SPREAD))

    @property
    def full_scale(self) -> float:
        return self.hop / 2  # |coefficient| of a unit cosine at a band's centre


def _layers(reads: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The entries reading each bin of the half spectrum, as layers: layer ``r`` holds
    each bin's ``r``-th entry (in entry order), as (bins, entries), bins ascending and
    each once; layer 0 holds every bin (:meth:`ConstantQ._build` checks each is read)."""
    order = torch.sort(reads, stable=True).indices
    sorted_bins = reads[order]
    starts = torch.searchsorted(sorted_bins, sorted_bins, side="left")
    rank = torch.arange(len(order)) - starts
    layers = []
    for r in range(int(rank.max()) + 1):
        at = rank == r
        layers.append((sorted_bins[at], order[at]))
    return layers


def _sum_by_bin(values: torch.Tensor, layers) -> torch.Tensor:
    """``[..., bins]``: the sum of the entries' ``values [..., entries]`` that read each
    bin, each bin's entries added in entry order (layer by layer), so every run gives
    the same bits (an atomic scatter-add on CUDA does not), those of a CPU
    ``scatter_add_``, which adds entry by entry (and stays there: its one pass beat
    the few dozen gathers about twice on this 2-core CPU)."""
    _, entries = layers[0]
    total = values.index_select(-1, entries)  # every bin once, in order
    for bins, entries in layers[1:]:  # each bin at most once a layer: no two adds race
        total.index_copy_(-1, bins, total.index_select(-1, bins) +
                          values.index_select(-1, entries))
    return total

