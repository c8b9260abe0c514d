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

AMPLIFY_AT = 16  # coefficients per sample and channel (the default STFT makes 2)
WARN_SECONDS = 20.0
WARN_BYTES = 2 << 30
PROBE_FRAMES = 32  # frames timed to learn the transform's speed
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
                f"{seconds_of_audio:.1f} s of audio will take about {_duration(self.seconds)} "
                f"and {self.bytes / 2**30:.1f} GiB (a larger hop or a smaller FFT size costs "
                "far less)")


def estimate(transform, channels: int, frames: int, resident: int) -> Cost:
    """The cost of analysing and resynthesizing ``frames`` samples of ``channels``
    with ``transform``; ``resident``: the bytes kept throughout (a document's, see
    engine.document.document_bytes). The speed is measured only for amplifying
    settings (a few ms)."""
    from engine.resynth import full_chunk

    per_sample = transform.n_bins / transform.hop
    n_frames = transform.n_frames(frames)
    chunk = min(full_chunk(transform), max(frames, 1))
    fa, fb = transform.frames_needed(0, chunk, max(frames, chunk))
    work = WORK_BYTES * channels * (fb - fa) * transform.n_bins
    if per_sample <= AMPLIFY_AT:
        return Cost(per_sample, resident + work, 0.0)
    chunks = math.ceil(frames / chunk)
    frames_done = channels * (n_frames + chunks * (fb - fa))  # forward, then inverse
    return Cost(per_sample, resident + work, frames_done * _seconds_per_frame(transform))


def confirm_cost(audio, transform, resident: int, confirm) -> None:
    """Ask ``confirm(text) -> bool`` (a front end: a warning, a question) whether to go on
    when the analysis is :attr:`Cost.heavy`; refused: Cancelled, nothing done."""
    if confirm is None:
        return
    cost = estimate(transform, audio.channels, audio.frames, resident)
    if cost.heavy and not confirm(cost.describe(transform, audio.duration)):
        raise Cancelled("not analysed: those settings cost too much; nothing was changed")


def _seconds_per_frame(transform) -> float:
    """One frame's analysis on the transform's device, timed over PROBE_FRAMES (the
    second of two runs: the first pays for warming up)."""
    start, stop = transform.frame_span(0, PROBE_FRAMES)
    x = torch.zeros(1, stop, device=transform.device)
    took = math.inf
    for _ in range(2):
        t0 = time.perf_counter()
        transform.forward_frames(x, 0, PROBE_FRAMES)
        if transform.device.type == "cuda":
            torch.cuda.synchronize(transform.device)
        took = time.perf_counter() - t0
    return took / PROBE_FRAMES


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"
