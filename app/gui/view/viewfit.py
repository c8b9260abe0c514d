"""The frequency span a file opens on: up to where its content ends, so a 96 kHz
recording of a chord is not squashed into the bottom row of a 0-48 kHz axis."""

import math

from engine.model.document import Document

BELOW_PEAK_DB = 80.0  # content: within this of the file's loudest cell
SHARE = 0.05  # ... in this share of the file at least,
LEAST_BLOCKS = 3  # and in more blocks than the two an abrupt start and end click in
HEADROOM = 1.1  # shown above the content's top
MOST_OF_THE_BAND = 0.5  # content reaching past this share of Nyquist: the whole band


def content_top(doc: Document) -> float:
    """The top of the frequency axis a file opens on (Hz): a round value a little above
    the highest bin that comes within BELOW_PEAK_DB of the loudest cell in SHARE of the
    file, or Nyquist when the content reaches most of the band (or the file is
    silent). In a worker: it reads the overview, which a worker builds."""
    nyquist = doc.sample_rate / 2
    counts, blocks = doc.loud_blocks(BELOW_PEAK_DB)
    bins = (counts >= max(SHARE * blocks, LEAST_BLOCKS)).nonzero()
    if not len(bins):
        return nyquist
    top = doc.hz_of(int(bins.max()) + 1) * HEADROOM
    return nyquist if top > MOST_OF_THE_BAND * nyquist else min(nyquist, _round_up(top))


def _round_up(hz: float) -> float:
    """The next of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten at or above
    ``hz`` (at most 1.25 times it)."""
    power = 10 ** math.floor(math.log10(hz))
    return next(m * power for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if m * power >= hz)
