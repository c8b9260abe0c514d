"""What an analysis will cost, known before it starts: settings that amplify.

An STFT makes ``n_fft / 2 + 1`` coefficients every ``hop`` samples: about 2 per sample
and channel at the defaults, 8193 at FFT size 16384 and hop 1. A 957-byte project
asking for that on 1 s of audio opened in 7.8 s at 2.9 GB and took 292 s at 8.3 GB to
resynthesize, with no word (issue 37). So before analysing, the front ends ask
:func:`estimate` for the memory (the coefficients, the recording and its
resynthesis, and a chunk of resynthesis at work) and the time (from the measured
speed of this transform on this device over a few frames), and when the settings
amplify (more than AMPLIFY_AT coefficients per sample) and it comes to more than
WARN_SECONDS or WARN_BYTES, they say so with the figures first: a warning line on
the CLI, a question in the GUI.
"""

import math
import time
from dataclasses import dataclass

import torch

from engine.errors import Cancelled

FULL_CHUNK_FRAMES = 1024  # frames per chunk of a full resynthesis (fastest on CPU)

AMPLIFY_AT = 16  # coefficients per sample and channel (the default STFT makes 2)
WARN_SECONDS = 20.0
WARN_BYTES = 2 << 30
PROBE_FRAMES = 32  # frames timed to learn the transform's speed, at least
PROBE_CELLS = 1 << 19  # and at least this many coefficients
# analysis and resynthesis move every frame's coefficients through memory several times
# beyond its FFT (a new store, the inverse, the overlap-add): opening and resynthesizing
# took 2 to 14 times the bare FFT probe's time per frame in bench/bench_cost.py's cases,
# as the load on the machine went (docs/benchmarks.md)
BEYOND_FFT = 6
MARGIN = 1.1  # on the bytes: measured peaks came to 4 % above the document and the chunk
WORK_BYTES = 16  # per coefficient of a resynthesis chunk: its inverse frames (float32,
# twice as many samples as bins) and what torch holds beside them (measured peaks, less
# the process's own 0.35 GiB, stayed below: docs/benchmarks.md)


@dataclass(frozen=True)
class Cost:
    per_sample: float  # coefficients per sample and channel
    bytes: int  # at the peak
    seconds: float  # analysis and resynthesis, about

    @property
    def heavy(self) -> bool:
        """Worth a word before starting: amplifying settings, and a lot of time or memory."""
        return self.per_sample > AMPLIFY_AT and (self.seconds > WARN_SECONDS or
                                                 self.bytes > WARN_BYTES)

    def describe(self, transform, seconds_of_audio: float) -> str:
        return (f"{transform!r} makes {self.per_sample:,.0f} coefficients per sample: "
                f"{seconds_of_audio:.1f} s of audio will take about "
                f"{describe_seconds(self.seconds)} and {self.bytes / 2**30:.1f} GiB (a larger "
                "hop or a smaller FFT size costs far less)")


def estimate(transform, channels: int, *, frames: int, resident: int) -> Cost:
    """The cost of analysing and resynthesizing ``frames`` samples of ``channels``
    with ``transform``; ``resident``: the bytes kept throughout (a document's, see
    engine.model.document.document_bytes). The speed is measured only for amplifying
    settings (a few ms)."""
    per_sample = transform.n_bins / transform.hop
    n_frames = transform.n_frames(frames)
    chunk = min(full_chunk(transform), max(frames, 1))
    fa, fb = transform.frames_needed(0, chunk, max(frames, chunk))
    peak = int(MARGIN * (resident + WORK_BYTES * channels * (fb - fa) * transform.n_bins))
    if per_sample <= AMPLIFY_AT:
        return Cost(per_sample, peak, 0.0)
    chunks = math.ceil(frames / chunk)
    frames_done = channels * (n_frames + chunks * (fb - fa))  # forward, then inverse
    return Cost(per_sample, peak, BEYOND_FFT * frames_done * _seconds_per_frame(transform))


def confirm_cost(audio, transform, *, resident: int, confirm) -> None:
    """Ask ``confirm(text) -> bool`` (a front end: a warning, a question) whether to go on
    when the analysis is :attr:`Cost.heavy`; refused: Cancelled, nothing done."""
    if confirm is None:
        return
    cost = estimate(transform, audio.channels, frames=audio.frames, resident=resident)
    if cost.heavy and not confirm(cost.describe(transform, audio.duration)):
        raise Cancelled("not analysed: those settings cost too much; nothing was changed")


def _seconds_per_frame(transform) -> float:
    """One frame's analysis on the transform's device: the difference between timing
    ``2k`` and ``k`` frames (the calls' own overhead cancels), ``k`` enough for a few
    ms of work; each timed three times, the fastest kept (the first pays for warming up,
    the others for what else the machine does)."""
    k = max(PROBE_FRAMES, PROBE_CELLS // transform.n_bins)
    start, stop = transform.frame_span(0, 2 * k)
    x = torch.zeros(1, stop, device=transform.device)

    def took(frames: int) -> float:
        best = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            transform.forward_frames(x, 0, frames)
            if transform.device.type == "cuda":
                torch.cuda.synchronize(transform.device)
            best = min(best, time.perf_counter() - t0)
        return best

    small, large = took(k), took(2 * k)
    return max(large - small, large / 4) / k  # load on the machine can make it negative


def describe_seconds(seconds: float) -> str:
    """``seconds`` as a person reads them: 40 s, 12 min, 2.5 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def full_chunk(transform) -> int:
    """Samples a chunk of a full resynthesis: FULL_CHUNK_FRAMES frames' worth, or as
    many frames as one sample needs where that is more (a hop far below the FFT size),
    so no frame is computed more than twice. (At FFT size 16384 and hop 1 a chunk of
    1024 samples computed 17 times the frames: 292 s for 1 s of audio.)"""
    far = 1 << 40  # a sample inside a long signal: the frames any sample needs
    fa, fb = transform.frames_needed(far, far + 1, 2 * far)
    return transform.hop * max(FULL_CHUNK_FRAMES, fb - fa)
