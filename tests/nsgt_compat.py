"""nsgt 0.19 on today's numpy: its window code clips an int array to ``np.inf``,
which numpy >= 1.25 refuses. Tests and benchmarks call nsgt inside
:func:`numpy_clip_fixed`; the app never imports nsgt."""

import contextlib

import numpy as np


@contextlib.contextmanager
def numpy_clip_fixed():
    original = np.clip

    def clip(a, lo, hi, out=None, **kw):
        if out is not None and np.issubdtype(out.dtype, np.integer) and hi == np.inf:
            hi = np.iinfo(out.dtype).max
        return original(a, lo, hi, out=out, **kw)

    np.clip = clip
    try:
        yield
    finally:
        np.clip = original
