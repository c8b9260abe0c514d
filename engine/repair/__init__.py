"""Restoration: headless DSP that repairs audio, shared by the repair brushes and
the modules a restoration engineer runs over a selection or a whole file
(de-noise, de-click, de-hum, de-clip).

A module is a function ``run(x, sample_rate, *, progress=None, cancel=None,
**settings) -> Outcome`` on float64 samples ``[channels, n]``: the region to
repair with some context around it. It returns the repaired samples and what it
found; when it finds nothing it returns ``x`` itself and an empty summary. The
safety contract (``engine.repair.guard``) is applied around every module and
every repair brush: nothing outside the region changes, no value is non-finite,
no 10 ms of output is louder than the input there (plus 1 dB), and a repair
that changed nothing says so.
"""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Event:
    """One thing a module repaired (a click, a clipped run): where, in samples of the
    module's input, and on which channel."""

    start: int
    length: int
    channel: int


@dataclass
class Outcome:
    samples: np.ndarray  # float64 [channels, n]: the repaired audio (x itself if nothing)
    summary: str = ""  # what was repaired, for a report line; "" when nothing was found
    events: list[Event] = field(default_factory=list)
    note: str = ""  # what it saw, when it found nothing to repair
