"""Analysis and resynthesis streamed chunk by chunk, for work that paints nothing
(``specpaint roundtrip``): no document, so memory is the audio in and out plus
one chunk, and no magnitude/phase round trip through ``torch.polar``.

Each chunk of output samples is made from the frames it needs, analysed from the
samples those need: the same frames, and so the same samples, as a document's
full resynthesis (engine.model.resynth) gives."""

import numpy as np
import torch

from engine.measure.metrics import ratio_db
from engine.progress import CancelFlag, ProgressFn, step
from engine.runtime.cost import full_chunk


def roundtrip(samples: np.ndarray, transform, *, progress: ProgressFn | None = None,
              cancel: CancelFlag | None = None) -> tuple[np.ndarray, float]:
    """``samples`` float32 ``[ch, n]`` analysed and resynthesized; returns the output
    (float32 ``[ch, n]``) and its SNR against the input in dB, summed as it goes."""
    x = torch.from_numpy(samples).to(transform.device)
    n = samples.shape[-1]
    out = np.empty_like(samples)
    chunk = full_chunk(transform)  # as a document's full resynthesis
    signal = noise = 0.0
    for s0 in range(0, n, chunk):
        step(s0 / n, progress, cancel)
        s1 = min(n, s0 + chunk)
        fa, fb = transform.frames_needed(s0, s1, n)
        coeffs = transform.forward_frames(x, fa, fb)
        y = transform.inverse_span(coeffs, fa, sample0=s0, sample1=s1, length=n).cpu().numpy()
        out[:, s0:s1] = y
        r = np.ascontiguousarray(samples[:, s0:s1]).ravel()
        e = y.ravel() - r  # exact in float32: the two are within a factor of 2 (Sterbenz)
        signal, noise = signal + float(r @ r), noise + float(e @ e)  # a chunk's sum in float32
    step(1.0, progress, None)
    return out, ratio_db(signal, noise)
