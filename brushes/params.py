"""Brush parameters: declared once, then used to validate values and presets,
drive kernels, generate docs and (later) the GUI's sliders.

A parameter may follow inputs, as in libmypaint: its value for a dab is the
base value plus, for each input, a piecewise-linear curve of that input's
value, clamped to the declared range.
"""

import math
from dataclasses import dataclass

from engine.errors import ParameterError

INPUTS = {
    "pressure": "pen pressure, 0-1 (1 for mouse and scripts unless given)",
    "speed": "pen speed in brush radii per second, 0 and up",
    "progress": "position along the stroke, 0 at its start to 1 at its end",
    "random": "a new uniform random number in 0-1 for every dab (seeded per stroke)",
}
MAX_CURVE_POINTS = 64


@dataclass(frozen=True)
class Param:
    name: str
    default: float | str
    min: float = -math.inf
    max: float = math.inf
    unit: str = ""
    help: str = ""
    choices: tuple[str, ...] = ()  # a choice parameter when not empty
    integer: bool = False
    aliases: tuple[tuple[str, float], ...] = ()  # words accepted for numbers, e.g. "all" -> -1

    def validate(self, value, where: str) -> float | str:
        """Return ``value`` checked against this declaration, or raise naming ``where``."""
        value = dict(self.aliases).get(value, value) if isinstance(value, str) else value
        if self.choices:
            if not isinstance(value, str) or value not in self.choices:
                raise ParameterError(f"{where}: {value!r} is not one of "
                                     f"{', '.join(self.choices)}")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParameterError(f"{where}: expected a number, got {type(value).__name__} "
                                 f"{_short(value)}")
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any float
            number = math.inf if value > 0 else -math.inf
        if math.isnan(number) or not self.min <= number <= self.max:
            raise ParameterError(f"{where}: {_short(value)} is out of range; allowed "
                                 f"{_fmt(self.min)} to {_fmt(self.max)}"
                                 f"{' ' + self.unit if self.unit else ''}")
        if self.integer:
            if number != int(number):
                raise ParameterError(f"{where}: expected a whole number, got {value}")
            return int(number)
        return number

    def parse(self, text: str, where: str) -> float | str:
        """``text`` as given on a command line (``--amount 15``, ``sensitivity=6``), as
        this parameter's value, checked (:meth:`validate`): a number for a numeric
        parameter (written in ASCII digits, as 6, 0.5 or -inf), the word for a choice."""
        text = text.strip()
        if self.choices or text in dict(self.aliases):
            return self.validate(text, where)
        try:
            number = float(text) if text.isascii() and "_" not in text else None
        except ValueError:
            number = None
        if number is None:
            raise ParameterError(f"{where}: {_short(text)} is not a number (write it as 6, "
                                 f"0.5 or 1e-3; allowed {self.describe_range()}"
                                 f"{' ' + self.unit if self.unit else ''})")
        return self.validate(number, where)

    def describe_range(self) -> str:
        if self.choices:
            return " / ".join(self.choices)
        return f"{_fmt(self.min)} to {_fmt(self.max)}"


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return f"{x:g}"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


Curve = tuple[tuple[float, float], ...]


def validate_curve(points, where: str) -> Curve:
    """A curve is a list of [x, y] pairs with strictly increasing x."""
    if not isinstance(points, list) or not 2 <= len(points) <= MAX_CURVE_POINTS:
        raise ParameterError(f"{where}: expected a list of 2 to {MAX_CURVE_POINTS} [x, y] "
                             f"points, got {_short(points)}")
    curve = []
    for i, point in enumerate(points):
        if (not isinstance(point, list) or len(point) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                           and math.isfinite(v) for v in point)):
            raise ParameterError(f"{where}[{i}]: expected [x, y] with two finite numbers, "
                                 f"got {_short(point)}")
        curve.append((float(point[0]), float(point[1])))
    if any(b[0] <= a[0] for a, b in zip(curve, curve[1:], strict=False)):
        raise ParameterError(f"{where}: the x values must increase strictly")
    return tuple(curve)


def curve_value(curve: Curve, x: float) -> float:
    """Piecewise-linear interpolation, constant beyond the end points."""
    if x <= curve[0][0]:
        return curve[0][1]
    for (x0, y0), (x1, y1) in zip(curve, curve[1:], strict=False):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return curve[-1][1]


def mapped_value(param: Param, base: float, *, curves: dict[str, Curve],
                 inputs: dict[str, float]) -> float | int:
    """``base`` plus each input's curve at the input's value, clamped to the range; a
    whole-number parameter (harmonics) gets the nearest whole number, halves up."""
    value = base + sum(curve_value(c, inputs.get(name, 0.0)) for name, c in curves.items())
    value = min(max(value, param.min), param.max)
    return math.floor(value + 0.5) if param.integer else value
