"""Analysis settings: each declared once, here, with its default, range, unit and help.

The transforms check their settings with these declarations; the command line's
analysis options (app/cli), the GUI's Analysis panel, batch settings, projects and
the table in docs/engine.md (``python -m engine.transforms docs/engine.md``)
are generated from them. A setting belongs to one transform ("stft" or "cq");
``transform`` itself chooses which.
"""

import math
import re
from dataclasses import dataclass

from engine.errors import ParameterError

DEFAULT_OVERLAP = 4  # frames per FFT size when the hop is not given: hop = n_fft / 4


@dataclass(frozen=True)
class Setting:
    name: str  # the keyword of engine.transforms.make, the key in projects, --name on the CLI
    transform: str  # the kind it belongs to ("stft", "cq"); "" for ``transform`` itself
    label: str  # in words, for errors and the GUI
    kind: type  # int, float or str
    default: int | float | str | None  # None: derived, as the help says
    help: str
    unit: str = ""
    low: float = -math.inf
    high: float = math.inf
    even: bool = False
    choices: tuple[str, ...] = ()  # a name among these, when not empty
    labels: tuple[str, ...] = ()  # the choices in words, for the GUI

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def allowed(self) -> str:
        """The values it takes, in words: ``256 to 16384 samples, even``."""
        if self.choices:
            return ", ".join(self.choices)
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.low:g} to {self.high:g}{unit}{', even' if self.even else ''}"

    def check(self, value):
        """``value`` as this setting takes it (from a project or a script it may be
        anything: ``"2048"``, ``511.9``, ``true``); None stays None (the default), or a
        one-line ParameterError naming the setting and what it allows."""
        if value is None:
            return None
        value = self._typed(value)
        if self.choices:
            if value not in self.choices:
                raise ParameterError(f"unknown {self.label} {value!r}; use one of "
                                     f"{self.allowed()}")
            return value
        if not self.low <= value <= self.high or (self.even and value % 2):
            usual = "" if self.default is None else f" (default {self.default})"
            raise ParameterError(f"{self.label} {_short(value)} is not supported; use "
                                 f"{self.allowed()}{usual}")
        return value

    def _typed(self, value):
        if self.kind is str:
            if not isinstance(value, str):
                raise ParameterError(f"analysis setting {self.name}: expected a name, got "
                                     f"{type(value).__name__} {_short(value)}")
            return value
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                (isinstance(value, float) and not math.isfinite(value)):
            raise ParameterError(f"analysis setting {self.name}: expected a finite number, "
                                 f"got {type(value).__name__} {_short(value)}")
        if self.kind is int:
            if isinstance(value, float) and not value.is_integer():
                raise ParameterError(f"analysis setting {self.name}: {value!r} is not a "
                                     "whole number")
            return int(value)
        return float(value)


SETTINGS = (
    Setting("transform", "", "transform", str, "stft",
            "what to paint on: stft, the short-time Fourier transform (even resolution), or "
            "cq, a constant-Q transform (fine low frequencies, sharp high-frequency timing)",
            choices=("stft", "cq"), labels=("STFT", "Constant-Q")),
    Setting("n_fft", "stft", "FFT size", int, 2048,
            "samples per frame: longer separates close frequencies, shorter sharpens timing",
            "samples", 256, 16384, even=True),
    Setting("hop", "stft", "hop", int, None,
            f"samples between frames (default the FFT size / {DEFAULT_OVERLAP}; at most "
            "half the FFT size)", "samples", 1, 8192),
    Setting("window", "stft", "window", str, "hann",
            "the frames' taper: hann and hamming resolve close tones, blackman and "
            "blackman-harris keep loud tones from leaking over quiet ones",
            choices=("hann", "hamming", "blackman", "blackman-harris")),
    Setting("bins_per_octave", "cq", "bins per octave", int, 48,
            "frequency rows per octave (48: a quarter of a semitone)", "bins", 4, 96),
    Setting("fmin", "cq", "lowest frequency", float, 32.7,
            "the lowest band (32.7 Hz: C1), below a quarter of the sample rate", "Hz",
            5.0, 1000.0),
)
BY_NAME = {s.name: s for s in SETTINGS}
KINDS = BY_NAME["transform"].choices


def of(transform: str) -> tuple[Setting, ...]:
    """The settings ``transform`` (a kind) takes."""
    return tuple(s for s in SETTINGS if s.transform == transform)


def checked(settings: dict) -> dict:
    """``{"transform": kind, ...}`` with that kind's settings checked and the missing
    ones (or None) at their defaults; settings another kind takes are left out, so one
    set of options serves both (the CLI's). No transform: stft."""
    chosen = {}
    for s in (BY_NAME["transform"], *of(settings.get("transform") or "stft")):
        value = s.check(settings.get(s.name))
        chosen[s.name] = s.default if value is None else value
    return chosen


def defaults() -> dict:
    """Every setting (of both kinds) at its default: what the CLI starts from."""
    return {s.name: s.default for s in SETTINGS}


def from_args(args) -> dict:
    """The settings of parsed command-line options (any object with one attribute per
    setting, as :data:`SETTINGS` names them), not yet checked."""
    return {s.name: getattr(args, s.name) for s in SETTINGS}


def markdown() -> str:
    """The table of docs/engine.md's "Analysis settings"."""
    rows = ["| setting | option | transform | default | allowed | what it does |",
            "|---|---|---|---|---|---|"]
    return "\n".join(rows + [
        f"| `{s.name}` | `{s.flag}` | {s.transform or 'both'} | "
        f"{'derived' if s.default is None else s.default} | {s.allowed()} | {s.help} |"
        for s in SETTINGS]) + "\n"


BEGIN = "<!-- analysis settings: generated by python -m engine.transforms -->\n"
END = "<!-- end of analysis settings -->\n"


def with_table(text: str) -> str:
    """``text`` (a page) with the table between :data:`BEGIN` and :data:`END` made new."""
    return re.sub(re.escape(BEGIN) + ".*?" + re.escape(END),
                  lambda _: BEGIN + markdown() + END, text, count=1, flags=re.S)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."

