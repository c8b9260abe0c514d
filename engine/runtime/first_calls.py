"""A fix for torch 2.13's CPU math kernels, run once when the transforms load.

The first call in a process of an elementwise function such as ``cos``, ``sin``
or ``sqrt`` on a float32 tensor large enough to be split between threads
computes one thread's part of the output wrongly (up to 7.6e-5 off for ``cos``)
in about one process in ten on this machine's 2 cores (the STFT window, 20 of 200);
later calls are right.
So the same stroke painted by two processes (``specpaint batch`` and ``apply``,
or a project reopened) differed. A first call on a few elements runs on one
thread and is right, and it settles every later call: :func:`settle` makes that
first call for each such function, in float32 and float64.
bench/bench_first_calls.py counts the wrong first calls in fresh processes.
"""

import torch

# torch's elementwise float functions with vectorized CPU kernels: cos, sin and sqrt
# were seen wrong; exp, log, expm1, tanh and atan2 not, in 40 processes each
FUNCTIONS = ("acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "erfinv",
             "exp", "expm1", "floor", "lgamma", "log", "log10", "log1p", "log2", "rsqrt",
             "sigmoid", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")


def settle() -> None:
    """Call each of FUNCTIONS once, on 4 elements (one thread), in float32 and float64."""
    for dtype in (torch.float32, torch.float64):
        x = torch.full((4,), 0.5, dtype=dtype)
        for name in FUNCTIONS:
            getattr(torch, name)(x)
