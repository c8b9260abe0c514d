"""Short-time Fourier transform on ``torch.stft`` with a hand-written inverse.

Frames are centred: frame ``f`` is centred on sample ``f * hop`` and the
signal is zero-padded by ``n_fft // 2`` on both sides (librosa's
``center=True, pad_mode="constant"``), so any length works, one sample
included. The inverse is a weighted overlap-add (``irfft``, window, ``fold``,
divide by the summed squared window) written so that a span of samples
computed from only the frames that touch it equals, bit for bit, the same
span of the whole inverse: that is what makes incremental resynthesis exact.
"""

import numpy as np
import torch
import torch.nn.functional as F

from engine.errors import ParameterError
from engine.transforms.settings import BY_NAME, DEFAULT_OVERLAP
from engine.transforms.transform import Transform

# half-width of each window's main lobe, in bins: a sinusoid spreads over +-this
MAIN_LOBE_BINS = {"hann": 2, "hamming": 2, "blackman": 3, "blackman-harris": 4}


def cosine_sum(n: int, a: tuple[float, ...]) -> torch.Tensor:
    """A periodic (DFT-even) window ``sum_k (-1)^k a[k] cos(2 pi k i / n)``, float32,
    computed in float64 by numpy: the same bits in every process. (torch 2.13's
    ``hann_window``, the first cosine a process computes, had its second half wrong
    by up to 7.6e-5 in about one process in ten, one thread's part of the output:
    bench/bench_first_calls.py.)"""
    x = 2 * np.pi * np.arange(n) / n
    w = sum((-1) ** k * c * np.cos(k * x) for k, c in enumerate(a))
    return torch.from_numpy(w.astype(np.float32))


WINDOWS = {
    "hann": lambda n: cosine_sum(n, (0.5, 0.5)),
    "hamming": lambda n: cosine_sum(n, (0.54, 0.46)),
    "blackman": lambda n: cosine_sum(n, (0.42, 0.5, 0.08)),
    "blackman-harris": lambda n: cosine_sum(n, (0.35875, 0.48829, 0.14128, 0.01168)),
}


class STFT(Transform):
    kind = "stft"

    def __init__(self, sample_rate: int, n_fft: int = BY_NAME["n_fft"].default, *,
                 hop: int | None = None, window: str = BY_NAME["window"].default,
                 device: torch.device | str = "cpu"):
        n_fft, hop, window = (BY_NAME[name].check(value) for name, value in
                              (("n_fft", n_fft), ("hop", hop), ("window", window)))
        hop = n_fft // DEFAULT_OVERLAP if hop is None else hop
        if hop > n_fft // 2:
            raise ParameterError(f"hop {hop} is not supported with FFT size {n_fft}; use 1 to "
                                 f"{n_fft // 2} samples (windows must overlap by half or more)")
        if sample_rate <= 0:
            raise ParameterError(f"sample rate {sample_rate} Hz is not valid")
        self.sample_rate = int(sample_rate)
        self.n_fft, self.hop, self.window_name = n_fft, hop, window
        self.pad = self.reach = n_fft // 2
        self.shift_samples = hop  # each frame its own FFT
        self.device = torch.device(device)
        self.window = WINDOWS[window](n_fft).to(self.device)

    def __repr__(self) -> str:
        return f"STFT(n_fft={self.n_fft}, hop={self.hop}, window={self.window_name!r})"

    def to(self, device: torch.device | str) -> "STFT":
        if torch.device(device) == self.device:
            return self
        return STFT(self.sample_rate, self.n_fft, hop=self.hop, window=self.window_name,
                    device=device)

    def settings(self) -> dict:
        return {"transform": "stft", "n_fft": self.n_fft, "hop": self.hop,
                "window": self.window_name}

    @property
    def n_bins(self) -> int:
        return self.n_fft // 2 + 1

    def n_frames(self, n_samples: int) -> int:
        return 1 + n_samples // self.hop

    def analysis_chunk(self, channels: int) -> int:
        """Fewer frames at once the more channels: 256 frames of 8 channels (16 MiB of
        windowed frames at 2048 points) outgrew the caches, 4.3 ms a channel of 10 s
        against 2.9 ms in chunks of 64. Each frame's FFT is its own: the same
        coefficients whatever the chunk (tests/engine/test_stft.py)."""
        return max(64, self.chunk_frames // max(1, channels))

    def frame_span(self, frame0: int, frame1: int) -> tuple[int, int]:
        return frame0 * self.hop - self.pad, (frame1 - 1) * self.hop - self.pad + self.n_fft

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stft(x, self.n_fft, self.hop, window=self.window, center=True,
                          pad_mode="constant", return_complex=True)

    def forward_segment(self, seg: torch.Tensor, frame0: int, frame1: int,
                        *, bins: slice | None = None) -> torch.Tensor:
        coeffs = torch.stft(seg, self.n_fft, self.hop, window=self.window.to(seg.device),
                            center=False, return_complex=True)
        return coeffs if bins is None else coeffs[..., bins, :]

    def samples_affected(self, frame0: int, frame1: int, length: int) -> tuple[int, int]:
        return (max(0, frame0 * self.hop - self.pad),
                min(length, (frame1 - 1) * self.hop - self.pad + self.n_fft))

    def frames_needed(self, sample0: int, sample1: int, length: int) -> tuple[int, int]:
        first = (sample0 + self.pad - self.n_fft) // self.hop + 1
        end = -(-(sample1 + self.pad) // self.hop)
        return max(0, first), min(self.n_frames(length), end)

    def inverse_span(self, frames: torch.Tensor, frame0: int, *, sample0: int, sample1: int,
                     length: int) -> torch.Tensor:
        fa, fb = self.given_frames(frames, frame0, sample0=sample0, sample1=sample1, length=length)
        # frames-major [..., count, n_fft]: contiguous when coefficients are stored that way
        x = frames[..., fa - frame0:fb - frame0].transpose(-1, -2)
        w = self.window.to(x.device)
        y = torch.fft.irfft(x, n=self.n_fft, dim=-1).mul_(w)  # in place: no 2nd frames' copy
        if self.n_fft % self.hop == 0:
            y, env = self._overlap_add_blocks(y, fa, length)
        else:
            y, env = self._overlap_add_fold(y)
        origin = fa * self.hop - self.pad  # sample index of y[..., 0]
        span = slice(sample0 - origin, sample1 - origin)
        return y[..., span] / env[span]

    def _overlap_add_blocks(self, y: torch.Tensor, fa: int, length: int):
        """Overlap-add when hop divides n_fft: n_fft/hop shifted adds of hop-sized
        blocks, always in the same order, so any span's sums equal the full ones."""
        count, r_max, hop = y.shape[-2], self.n_fft // self.hop, self.hop
        y = y.reshape(*y.shape[:-2], count, r_max, hop)
        out = y.new_zeros(*y.shape[:-3], count + r_max - 1, hop)
        for r in range(r_max):
            out[..., r:r + count, :] += y[..., r, :]
        return out.flatten(-2), self._block_envelope(fa, count + r_max - 1, length, y.device)

    def _block_envelope(self, fa: int, rows: int, length: int, device) -> torch.Tensor:
        """The summed squared window of blocks ``fa .. fa + rows``: block j sums w2[r]
        over the frames j - r that exist in the whole signal, in the order of r. Every
        frame exists for the blocks inside the file, so they share one sum; only those
        of its first and last frames are summed each."""
        r_max, hop = self.n_fft // self.hop, self.hop
        w2 = (self.window * self.window).to(device).reshape(r_max, hop)
        inside = torch.zeros(hop, device=device)
        for r in range(r_max):
            inside += w2[r]
        env = inside.expand(rows, hop).contiguous()
        total = self.n_frames(length)
        # rows before lead or from tail on miss a frame (found on the host: no device sync)
        lead, tail = min(rows, max(0, r_max - 1 - fa)), min(rows, max(0, total - fa))
        for a, b in ((0, lead), (max(lead, tail), rows)):
            if b > a:
                blocks = torch.arange(fa + a, fa + b, device=device)
                sums = torch.zeros(b - a, hop, device=device)
                for r in range(r_max):
                    exists = (blocks - r >= 0) & (blocks - r < total)
                    sums += w2[r] * exists.to(sums.dtype)[:, None]
                env[a:b] = sums
        return env.flatten()

    def _overlap_add_fold(self, y: torch.Tensor):
        count = y.shape[-2]
        size = (count - 1) * self.hop + self.n_fft
        lead = y.shape[:-2]
        cols = y.reshape(-1, count, self.n_fft).transpose(1, 2)
        out = F.fold(cols, (1, size), (1, self.n_fft), stride=(1, self.hop)).reshape(*lead, size)
        w2 = (self.window * self.window).to(y.device)
        env = F.fold(w2[None, :, None].expand(1, self.n_fft, count), (1, size),
                     (1, self.n_fft), stride=(1, self.hop)).reshape(size)
        return out, env

    def bin_frequencies(self) -> torch.Tensor:
        return torch.arange(self.n_bins, dtype=torch.float64) * self.sample_rate / self.n_fft

    def bin_of(self, hz: float) -> float:
        return hz * self.n_fft / self.sample_rate

    def hz_of(self, bin_: float) -> float:
        return bin_ * self.sample_rate / self.n_fft

    def resolution_hz(self, hz: float) -> float:
        return MAIN_LOBE_BINS[self.window_name] * self.sample_rate / self.n_fft

    @property
    def full_scale(self) -> float:
        return float(self.window.sum()) / 2
