"""A-SPADE (Kitić, Bertin & Gribonval 2015; as evaluated by Záviška et al. 2021):
the sparsest spectrum consistent with a clipped block.

A block of ``w`` samples is analysed by the Parseval frame of the DFT at twice its
length. Each round keeps the ``k`` largest coefficients of the analysis (plus the
ADMM dual ``u``), goes back to the samples and projects them onto the consistent
set (reliable samples as they were, clipped ones between their bounds), until the
kept coefficients describe the projected block to within ``TOLERANCE``; ``k``
starts at one and grows by ``GROWTH`` of itself a round (the published ``s = 1``
grows by one: ten times the rounds for half a dB here). Batched over blocks.
"""

import numpy as np

TOLERANCE = 0.1  # residual norm at which a block is done, of blocks scaled to the clip level
GROWTH = 0.1
MAX_ROUNDS = 300


def aspade(blocks: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``blocks`` ``[B, w]`` restored between ``low`` and ``high`` (same shape; equal at the
    reliable samples), scaled so the clip level is about 1."""
    batch, w = blocks.shape
    size = 2 * w
    norm = np.sqrt(size)
    weight = np.full(w + 1, 2.0)  # a one-sided spectrum: the bins between count twice
    weight[0] = weight[-1] = 1.0
    x = np.clip(blocks, low, high)
    dual = np.zeros((batch, w + 1), complex)
    k = np.ones(batch)
    todo = np.arange(batch)
    for _ in range(MAX_ROUNDS):
        coefficients = np.fft.rfft(x[todo], size) / norm + dual[todo]
        magnitude = np.abs(coefficients)
        keep = np.minimum(k[todo].astype(int), w + 1)
        kth = -np.partition(-magnitude, keep - 1, axis=1)
        cut = np.take_along_axis(kth, (keep - 1)[:, None], 1)
        sparse = np.where(magnitude >= cut, coefficients, 0)
        back = np.fft.irfft(sparse - dual[todo], size)[:, :w] * norm
        x[todo] = np.clip(back, low[todo], high[todo])
        residual = np.fft.rfft(x[todo], size) / norm - sparse
        dual[todo] += residual
        k[todo] += np.maximum(1.0, GROWTH * k[todo])
        todo = todo[np.sqrt((weight * np.abs(residual) ** 2).sum(1)) > TOLERANCE]
        if len(todo) == 0:
            break
    return x
