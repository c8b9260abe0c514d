"""Log-mel features of segments of audio, the numbers ``specpaint features`` stores
(app.batch.features runs the job over many files): the settings, the items a file is
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

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            if self.use_layer:
                power = self.layer(x)
            else:
                spec = torch.stft(x, self.s.n_fft, self.s.hop, window=self.window, center=True,
                                  pad_mode="reflect", return_complex=True)
                power = self.layer.mel_basis @ (spec.real ** 2 + spec.imag ** 2)
            db = 10 * torch.log10(power.clamp(min=10 ** (FLOOR_DB / 10)))
            if self.s.pool == "mean":
                return db.mean(-1, keepdim=True)
            return db.amax(-1, keepdim=True) if self.s.pool == "max" else db
