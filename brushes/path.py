"""From input points to dabs: spacing along the path and inputs per dab.

As libmypaint's ``count_dabs_to``/``stroke_to``: distance is measured in dab
radii (time and frequency each scaled by their radius), a dab falls every
``spacing`` radii, the distance left over carries to the next event, and
pressure, speed, progress and a random number are interpolated or drawn
for every dab, then mapped onto the parameters that follow them.
"""

import math
import random
from dataclasses import dataclass

from brushes.dab import Dab, radius_hz
from brushes.params import Curve, mapped_value
from brushes.registry import Brush
from engine.errors import ParameterError

MAX_DABS = 100_000  # per stroke, harmonics counted: ~100 s of painting; more is a mistake
# (a radius of 1e-9 cents). A brush that paints each dab on what the one before left (warp,
# heal, tone: not batched) costs a kernel call a dab, 2.3 ms for warp: 80,000 dabs of a
# 1 Hz radius over 20 kHz took 185 s on a 1 s file. Those strokes stop at MAX_LONE_DABS.
MAX_LONE_DABS = 10_000


@dataclass(frozen=True)
class StrokePoint:
    time: float  # seconds
    freq: float  # Hz
    pressure: float = 1.0
    event_time: float | None = None  # seconds, for the speed input


def distance(a: StrokePoint, b: StrokePoint, params: dict) -> float:
    """Distance in dab radii."""
    dt = (b.time - a.time) / (params["radius_ms"] / 1000)
    df = (b.freq - a.freq) / max(radius_hz(params, (a.freq + b.freq) / 2), 1e-9)
    return math.hypot(dt, df)


def path_length(points: list[StrokePoint], params: dict) -> float:
    return sum(distance(a, b, params) for a, b in zip(points, points[1:], strict=False))


class Spacer:
    def __init__(self, brush: Brush, params: dict, curves: dict[str, dict[str, Curve]],
                 *, total_length: float | None = None, seed: int = 0, copies: int = 1,
                 one_at_a_time: str = ""):
        """``copies``: dabs painted for each dab spaced (a harmonic brush's harmonics);
        ``one_at_a_time``: the kernel's name, when it paints dab by dab (MAX_LONE_DABS)."""
        self.brush, self.params, self.curves = brush, params, curves
        self.copies, self.one_at_a_time = copies, one_at_a_time
        self.most = MAX_LONE_DABS if one_at_a_time else MAX_DABS
        self.total = total_length
        self.random = random.Random(seed)
        self.last: StrokePoint | None = None
        self.last_dab: tuple[float, float] | None = None
        self.since = 0.0  # radii travelled since the last dab
        self.travelled = 0.0
        self.count = 1  # dabs so far (the first falls where the stroke starts)

    def to(self, point: StrokePoint) -> list[Dab]:
        """Move the pen to ``point``; return the dabs that fall on the way."""
        if self.last is None:
            self.last = point
            return [self._dab(point, 0.0)]
        a, spacing = self.last, self.params["spacing"]
        seg = distance(a, point, self.params)
        speed = 0.0
        if a.event_time is not None and point.event_time is not None \
                and point.event_time > a.event_time:
            speed = seg / (point.event_time - a.event_time)
        dabs = []
        pos = spacing - self.since
        coming = math.floor((seg + 1e-9 - pos) / spacing) + 1 if seg >= pos else 0
        if (self.count + coming) * self.copies > self.most:
            each = f" ({self.copies} harmonics each)" if self.copies > 1 else ""
            lone = (f" for the {self.one_at_a_time} brush, which paints one dab at a time"
                    if self.one_at_a_time else "")
            raise ParameterError(
                f"this stroke would paint {(self.count + coming) * self.copies:,} dabs{each}, "
                f"more than {self.most:,}{lone}: it runs {self.travelled + seg:,.0f} brush "
                f"radii at a spacing of {spacing:g}; use a larger radius or spacing, or a "
                "shorter stroke")
        self.count += coming
        while seg > 0 and pos <= seg + 1e-9:
            u = pos / seg
            here = StrokePoint(a.time + u * (point.time - a.time),
                               a.freq + u * (point.freq - a.freq),
                               a.pressure + u * (point.pressure - a.pressure))
            dabs.append(self._dab(here, self.travelled + pos, speed))
            pos += spacing
        self.since = seg - (pos - spacing) if dabs else self.since + seg
        self.travelled += seg
        self.last = point
        return dabs

    def _dab(self, at: StrokePoint, travelled: float, speed: float = 0.0) -> Dab:
        progress = travelled / self.total if self.total else 0.0
        inputs = {"pressure": at.pressure, "speed": speed, "progress": min(progress, 1.0),
                  "random": self.random.random()}
        params = self.params  # shared by the dabs (read only) when no input maps a value
        if self.curves:
            params = {**self.params, **{
                name: mapped_value(self.brush.param(name), self.params[name], curves=curves,
                                   inputs=inputs)
                for name, curves in self.curves.items()}}
        step = (0.0, 0.0) if self.last_dab is None else \
            (at.time - self.last_dab[0], at.freq - self.last_dab[1])
        self.last_dab = (at.time, at.freq)
        return Dab(at.time, at.freq, params, step)
