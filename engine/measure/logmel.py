"""Log-mel features of segments of audio, the numbers ``specpaint features`` stores
(app.batch.feature_jobs runs the job over many files): the settings, the items a file is
cut into, and the log-mel of a batch of them on a device."""

from dataclasses import dataclass

import numpy as np
import torch

from engine.errors import ParameterError

FLOOR_DB = -100.0


@dataclass(frozen=True)
class FeatureSettings:
    sr: int = 4096
    n_fft: int = 64
    hop: int = 16
    n_mels: int = 32
    segment: int = 1024
    segment_hop: int = 512
    subsegment: int | None = None
    subsegment_hop: int | None = None
    dtype: str = "float16"
    pool: str | None = None  # "mean" or "max": each item's frames reduced to one

    def check(self) -> None:
        ints = {"--sr": self.sr, "--n-fft": self.n_fft, "--hop": self.hop,
                "--n-mels": self.n_mels, "--segment length": self.segment,
                "--segment hop": self.segment_hop}
        if self.subsegment is not None:
            ints.update({"--subsegment length": self.subsegment,
                         "--subsegment hop": self.subsegment_hop})
        for name, value in ints.items():
            if value is None or value < 1:
                raise ParameterError(f"{name} must be a positive number of samples (got "
                                     f"{value})")
        if self.subsegment is not None and self.subsegment > self.segment:
            raise ParameterError(f"sub-segments ({self.subsegment}) must fit in a segment "
                                 f"({self.segment})")
        if self.n_fft % 2:  # an odd size frames a segment once less (1 + length // hop)
            raise ParameterError(f"--n-fft {self.n_fft}: use an even FFT size (e.g. 64)")
        if self.n_fft > self.length:
            raise ParameterError(f"--n-fft {self.n_fft} is longer than a (sub-)segment "
                                 f"({self.length} samples)")
        if self.n_mels > self.n_fft // 2 + 1:
            raise ParameterError(f"--n-mels {self.n_mels} is more than the {self.n_fft // 2 + 1} "
                                 f"FFT bins of --n-fft {self.n_fft}")
        if self.dtype not in ("float16", "float32"):
            raise ParameterError(f"--dtype {self.dtype}: use float16 or float32")
        if self.pool not in (None, "mean", "max"):
            raise ParameterError(f"--pool {self.pool}: use mean or max")

    @property
    def length(self) -> int:
        """Samples per item: a sub-segment's, or a segment's."""
        return self.subsegment or self.segment

    @property
    def frames(self) -> int:
        """Frames an item's log-mel has (before pooling)."""
        return 1 + self.length // self.hop

    @property
    def stored_frames(self) -> int:
        """Frames stored per item: one when pooled."""
        return 1 if self.pool else self.frames


def items(lengths, s: FeatureSettings) -> tuple[np.ndarray, np.ndarray]:
    """The items files of ``lengths`` samples are cut into, all at once: ``[k]`` which
    file (an index into ``lengths``) and ``[k, 3]`` (segment, sub-segment, start
    sample), file by file, segment by segment."""
    n = np.asarray(lengths, np.int64).reshape(-1)
    segments = np.where(n < s.segment, 1, 1 + (n - s.segment) // s.segment_hop)
    subs = 1 if s.subsegment is None else 1 + (s.segment - s.subsegment) // s.subsegment_hop
    counts = segments * subs
    file = np.repeat(np.arange(len(n)), counts)
    local = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    seg, sub = local // subs, local % subs
    start = seg * s.segment_hop + sub * (s.subsegment_hop or 0)
    return file, np.stack([seg, sub, start], 1).astype(np.int64)


class LogMel:
    """Log-mel (dB) of ``[batch, length]`` samples on a device: nnAudio's layer on a
    GPU, ``torch.stft`` with the layer's filterbank on the CPU (see the module notes)."""

    def __init__(self, s: FeatureSettings, device: torch.device):
        import nnAudio.features as features

        self.layer = features.mel.MelSpectrogram(sr=s.sr, n_fft=s.n_fft, n_mels=s.n_mels,
                                                 hop_length=s.hop, verbose=False).to(device)
        self.s, self.device = s, device
        self.window = torch.hann_window(s.n_fft, device=device)
        self.use_layer = device.type != "cpu"
        self.mel_rows = self.layer.mel_basis.T.contiguous()  # [bins, n_mels]

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """Log-mel of ``[batch, length]`` items, ``[batch, n_mels, frames]`` (pooled:
        ``[batch, n_mels, 1]``)."""
        with torch.no_grad():
            if self.use_layer:
                power = self.layer(x)
            else:
                spec = torch.stft(x, self.s.n_fft, self.s.hop, window=self.window, center=True,
                                  pad_mode="reflect", return_complex=True)
                power = self.layer.mel_basis @ (spec.real ** 2 + spec.imag ** 2)
            return self._pooled(self._db(power))

    def _db(self, power: torch.Tensor) -> torch.Tensor:
        return 10 * torch.log10(power.clamp(min=10 ** (FLOOR_DB / 10)))

    def _pooled(self, db: torch.Tensor) -> torch.Tensor:
        if self.s.pool == "mean":
            return db.mean(-1, keepdim=True)
        return db.amax(-1, keepdim=True) if self.s.pool == "max" else db

    def shares_frames(self, starts: np.ndarray) -> bool:
        """Whether :meth:`of_starts` applies to items at ``starts``: on the CPU path,
        items starting on the hop's grid, whose inner frames do not reach past them."""
        s, pad = self.s, self.s.n_fft // 2
        return (not self.use_layer and pad % s.hop == 0 and bool(np.all(starts % s.hop == 0))
                and pad // s.hop <= (s.length - pad) // s.hop)

    def of_starts(self, samples: np.ndarray, starts: np.ndarray) -> torch.Tensor:
        """What ``self(samples[starts[:, None] + arange(length)])`` gives (the same
        numbers, to float32 rounding; ``samples`` float32), each frame computed once:
        items overlap (sub-segments 512:256 in segments 1024:512 read each sample four
        times), so a frame inside its item (not reaching past it, where the item's ends
        are mirrored) is one of the hop grid over ``samples``, computed once for all the
        items holding it; only the frames at an item's ends are its own. Frames are rows
        here (one FFT call, one product with the filterbank)."""
        s, pad = self.s, self.s.n_fft // 2
        inner0, inner1 = pad // s.hop, (s.length - pad) // s.hop  # an item's inner frames
        g0 = int(starts.min()) // s.hop + inner0 - pad // s.hop  # grid frame of the first
        g1 = int(starts.max()) // s.hop + inner1 - pad // s.hop + 1
        head, tail = self._end_reads(inner0, inner1)
        with torch.no_grad():
            span = torch.from_numpy(samples[g0 * s.hop:(g1 - 1) * s.hop + s.n_fft])
            grid = self._rows_db(span.unfold(0, s.n_fft, s.hop))  # [g1 - g0, n_mels]
            at = (starts[:, None] - pad) // s.hop + np.arange(inner0, inner1 + 1) - g0
            ends = [self._rows_db(torch.from_numpy(samples[starts[:, None, None] + reads]))
                    for reads in (head, tail)]
            out = torch.cat([ends[0], grid[torch.from_numpy(at)], ends[1]], 1)
            return self._pooled(out.transpose(1, 2))  # [items, n_mels, frames]

    def _end_reads(self, inner0: int, inner1: int) -> tuple[np.ndarray, np.ndarray]:
        """``[frames, n_fft]``: the samples (from an item's start) that its frames before
        ``inner0`` and after ``inner1`` read, its ends mirrored as ``torch.stft`` mirrors
        them (``center=True``, ``pad_mode="reflect"``)."""
        s, pad = self.s, self.s.n_fft // 2
        frame = np.arange(s.n_fft) - pad
        head = np.abs(np.arange(inner0)[:, None] * s.hop + frame)
        tail = np.arange(inner1 + 1, s.frames)[:, None] * s.hop + frame
        return head, np.where(tail < s.length, tail, 2 * (s.length - 1) - tail)

    def _rows_db(self, frames: torch.Tensor) -> torch.Tensor:
        """``[..., n_mels]`` dB of frames ``[..., n_fft]``."""
        spec = torch.view_as_real(torch.fft.rfft(frames * self.window))
        power = spec[..., 0] ** 2 + spec[..., 1] ** 2
        return self._db(power @ self.mel_rows)
