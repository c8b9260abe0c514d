"""Pitch grids: the notes of equal temperament (A4 adjustable) or of a scale,
for drawing a note grid on the spectrogram and snapping brush frequencies to it."""

import math
from dataclasses import dataclass

from engine.errors import ParameterError

NOTE_NAMES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
SCALES = {  # semitones above the key
    "chromatic": tuple(range(12)),
    "major": (0, 2, 4, 5, 7, 9, 11),
    "natural minor": (0, 2, 3, 5, 7, 8, 10),
    "harmonic minor": (0, 2, 3, 5, 7, 8, 11),
    "major pentatonic": (0, 2, 4, 7, 9),
    "minor pentatonic": (0, 3, 5, 7, 10),
    "blues": (0, 3, 5, 6, 7, 10),
    "whole tone": (0, 2, 4, 6, 8, 10),
}
A4_RANGE = (400.0, 480.0)
MIDI_RANGE = (0, 135)  # C-1 (8.2 Hz) to D#10 (about 20 kHz at A4 = 440)


@dataclass(frozen=True)
class PitchGrid:
    """The notes of ``scale`` in ``key`` (a name from NOTE_NAMES), tuned to ``a4`` Hz."""

    a4: float = 440.0
    scale: str = "chromatic"
    key: str = "C"

    def __post_init__(self):
        if not (A4_RANGE[0] <= self.a4 <= A4_RANGE[1]):
            raise ParameterError(f"A4 = {self.a4} Hz is outside {A4_RANGE[0]:g}-"
                                 f"{A4_RANGE[1]:g} Hz")
        if self.scale not in SCALES:
            raise ParameterError(f"unknown scale '{self.scale}'; choose one of "
                                 f"{', '.join(SCALES)}")
        if self.key not in NOTE_NAMES:
            raise ParameterError(f"unknown key '{self.key}'; choose one of "
                                 f"{', '.join(NOTE_NAMES)}")

    def hz(self, midi: float) -> float:
        return self.a4 * 2 ** ((midi - 69) / 12)

    def midi(self, hz: float) -> float:
        return 12 * math.log2(hz / self.a4) + 69

    def in_scale(self, midi: int) -> bool:
        return (midi - NOTE_NAMES.index(self.key)) % 12 in SCALES[self.scale]

    def notes(self, f_lo: float, f_hi: float) -> list[tuple[float, int]]:
        """(Hz, MIDI number) of every grid note in [f_lo, f_hi], low to high."""
        if f_hi <= 0:
            return []
        lo = max(math.ceil(self.midi(max(f_lo, 1e-3))), MIDI_RANGE[0])
        hi = min(math.floor(self.midi(f_hi)), MIDI_RANGE[1])
        return [(self.hz(m), m) for m in range(lo, hi + 1) if self.in_scale(m)]

    def snap(self, hz: float) -> float:
        """The grid note nearest ``hz`` (nearest in cents); ``hz`` itself if not > 0."""
        if not hz > 0:
            return hz
        m = self.midi(hz)
        below = next(k for k in range(math.floor(m), math.floor(m) - 13, -1) if self.in_scale(k))
        above = next(k for k in range(math.ceil(m), math.ceil(m) + 13) if self.in_scale(k))
        return self.hz(below if m - below <= above - m else above)

    def name(self, hz: float) -> str:
        """The nearest equal-tempered note and the offset in cents ("A4 +10c")."""
        if not hz > 0:
            return "-"
        m = self.midi(hz)
        nearest = round(m)
        return f"{NOTE_NAMES[nearest % 12]}{nearest // 12 - 1} {round((m - nearest) * 100):+d}c"
