"""Every brush type and every parameter, declared once.

This declaration validates presets and scripts, drives the kernels,
generates ``docs/brushes.md`` (``python -m brushes.registry``) and the GUI's
sliders (app.gui.widgets.panels).
"""

import sys
from dataclasses import dataclass
from pathlib import Path

from brushes.kernels.blur import Blur
from brushes.kernels.clone import Clone
from brushes.kernels.filter import Filter
from brushes.kernels.gain import Gain
from brushes.kernels.heal import Heal
from brushes.kernels.kernel import Kernel
from brushes.kernels.noise import Noise
from brushes.kernels.restore import Restore
from brushes.kernels.tone import Tone
from brushes.kernels.warp import Warp
from brushes.params import INPUTS, Param
from engine.errors import ParameterError

COMMON = (
    Param("radius_ms", 50.0, 1.0, 10000.0, "ms", "time radius of a dab"),
    Param("radius_hz", 200.0, 1.0, 48000.0, "Hz", "frequency radius of a dab (linear axis)"),
    Param("radius_cents", 0.0, 0.0, 2400.0, "cents",
          "frequency radius on a log axis, scaling with pitch; 0 = use radius_hz"),
    Param("hardness", 0.5, 0.0, 1.0, "", "edge: the outline is where the effect is half; "
          "full inside hardness x radius, none beyond (2 - hardness) x radius; 1 = hard edge"),
    Param("opacity", 1.0, 0.0, 1.0, "", "strength of the effect at the dab centre"),
    Param("spacing", 0.25, 0.05, 4.0, "radii", "distance between dabs, in dab radii"),
    Param("channel", -1, -1, 63, "", "channel to paint: all (-1), or 0 = first/left, "
          "1 = second/right, ...", integer=True, aliases=(("all", -1),)),
)

HARMONIC_OWN = (
    Param("inner", "gain", choices=("gain", "heal", "tone", "blur", "noise", "restore"),
          help="the brush applied at every harmonic"),
    Param("harmonics", 8, 1, 64, "", "how many harmonics k = 1..N of the stroke's "
          "frequency", integer=True),
    Param("falloff", 1.0, 0.0, 1.0, "", "opacity multiplier from one harmonic to the next"),
)


@dataclass(frozen=True)
class Brush:
    name: str
    help: str
    own: tuple[Param, ...]
    kernel: Kernel | None  # None for the harmonic meta-brush

    @property
    def params(self) -> tuple[Param, ...]:
        return COMMON + self.own

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def resolve(self, values: dict, where: str) -> tuple[dict, list[str]]:
        """Defaults overridden by ``values`` (validated); returns (params, unknown keys)."""
        known = {p.name: p for p in self.params}
        out = {p.name: p.default for p in self.params}
        unknown = []
        for key, value in values.items():
            if key not in known:
                unknown.append(key)
                continue
            out[key] = known[key].validate(value, f"{where}.{key}")
        return out, unknown


KERNELS = {k.name: k for k in (Gain(), Blur(), Warp(), Filter(), Clone(), Restore(), Heal(),
                               Tone(), Noise())}
# the inner brushes' own parameters, each name once (the first declaration wins)
_INNER_PARAMS = tuple({p.name: p for name in reversed(HARMONIC_OWN[0].choices)
                       for p in KERNELS[name].params}.values())
BRUSHES: dict[str, Brush] = {k.name: Brush(k.name, k.help, k.params, k) for k in KERNELS.values()}
BRUSHES["harmonic"] = Brush("harmonic", "Apply another brush at every harmonic k * f0 of the "
                            "stroke's frequency f0, with a falloff per harmonic.",
                            HARMONIC_OWN + _INNER_PARAMS, None)


def get_brush(name, where: str = "brush") -> Brush:
    if not isinstance(name, str) or name not in BRUSHES:
        raise ParameterError(f"{where}: unknown brush {name!r}; use one of "
                             f"{', '.join(BRUSHES)}")
    return BRUSHES[name]


def markdown() -> str:
    """The reference page docs/brushes.md, generated from the declarations."""
    lines = ["# Brushes", "", "Generated from `brushes/registry.py` by "
             "`python -m brushes.registry docs/brushes.md`; do not edit by hand.", "",
             "## Parameters every brush has", "", *_table(COMMON), "",
             "## Inputs a parameter can follow", "",
             "A preset's `inputs` maps a parameter to curves: `{\"opacity\": {\"pressure\": "
             "[[0, 0.2], [1, 1]]}}` adds, to the base value, the curve's value at the input "
             "(piecewise linear, constant past its ends); the sum is clamped to the range, "
             "and a whole-number parameter (`harmonics`, `seed`) rounded to the nearest. "
             "So for opacity following pressure from 0.2 to 1, set the base `opacity` to 0. "
             "`channel` is set once per stroke and follows no input.",
             ""]
    lines += [f"- `{name}`: {text}" for name, text in INPUTS.items()]
    for brush in BRUSHES.values():
        lines += ["", f"## `{brush.name}`", "", brush.help, ""]
        lines += _table(brush.own) if brush.own else ["(no parameters of its own)"]
    return "\n".join(lines) + "\n"


def _table(params) -> list[str]:
    rows = ["| name | default | range | unit | what it does |", "|---|---|---|---|---|"]
    return rows + [f"| `{p.name}` | {p.default} | {p.describe_range()} | {p.unit} | {p.help} |"
                   for p in params]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    if target:
        target.write_text(markdown())
    else:
        print(markdown(), end="")
