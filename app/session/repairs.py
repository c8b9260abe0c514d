"""The restoration modules applied to a document: a selection (time range,
optionally a band, one channel or all) or the whole file, as one undo step.

Each module (``engine.repair.<name>.run``) gets the current audio of the
region with some context around it; its change is kept inside the region
(faded over ``EDGE_SECONDS`` at a region's ends, band-limited when a band is
given), made safe (engine.repair.guard), and written back as the analysis of
the change added to the coefficients of the frames it reaches: synthesis
inverts analysis, so the audio becomes exactly the repaired audio there,
edits painted before are kept, and every other coefficient keeps its bits.
A module that finds nothing changes nothing, makes no undo step and says so.
On a fixed-point source (16-bit, 24-bit, 8-bit) the change is rounded to the source's
step (``SOURCE_STEPS``): at most half a step from the module's, under the step of TPDF
dither a 16-bit export adds, and the step packs to a sixth to two fifths of its float32
size in a project (engine.model.history.Change).
On a document with layers a module repairs the active layer's audio alone.
The change made at each thing repaired (a click) is kept with the report, so
that one can be put back alone (:func:`put_back`), as its own undo step.

One pipeline, in three steps: :func:`plan` computes the repaired audio of the
region (writing nothing), :func:`analyse` the coefficients that make it, and
:func:`write` writes them as the undo step (:func:`repair` runs the three). The
GUI's Apply runs the first two in a worker (:func:`prepare`) and the third on its own thread; its
Preview plays what :func:`plan` computed (:meth:`Plan.heard`), the same bits.
"""

import importlib
import math
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
import torch

from brushes.params import Param
from engine.errors import ParameterError
from engine.model.document import MEMORY_SHARE, Document
from engine.model.history import Change, History, Patch, Step
from engine.model.resynth import layer_audio
from engine.progress import ProgressFn, scaled, step
from engine.region import Rect
from engine.repair import guard
from engine.runtime.memory import available_memory

EDGE_SECONDS = 0.005  # a selection's change fades in and out over this long
BAND_SLOPE_OCTAVES = 1 / 6  # a band's edges: raised-cosine over this much
EVENT_FLOOR = 1e-7  # an event's kept change ends where it falls below this (-140 dBFS)
WRITE_FRAMES = 4096  # frames analysed and written at a time (memory stays bounded)
COPY_SAMPLES = 1 << 22  # samples of each channel converted at a time (see _float64)
FULL_SCALE = 10 ** (-0.1 / 20)  # declip's gain reduction brings the peak to -0.1 dBFS
SOURCE_STEPS = {"PCM_S8": 2.0 ** -7, "PCM_U8": 2.0 ** -7, "PCM_16": 2.0 ** -15,
                "PCM_24": 2.0 ** -23}  # a fixed-point source's step, in full scale


@dataclass(frozen=True)
class Module:
    """A restoration module and every way it differs from the others: the pipeline, the
    CLI, scripts and the GUI ask these, never its name."""
    name: str
    title: str  # for menus and reports
    help: str
    params: tuple[Param, ...]
    context_s: float  # audio either side of the region the module learns from
    dsp: str  # the engine module whose run(x, sample_rate, ...) repairs (imported when run)
    louder_db: float = guard.LOUDER_DB  # how far above the input the output may peak
    headroom: str | None = None  # the Param that lets the output peak that much higher
    # bytes of working memory per sample of the region and its context, per channel, over
    # what the open document holds: bench/bench_repair_memory.py's slope (the kernel's
    # count), a fifth added
    working_bytes: int = 128
    counts: bool = False  # it repairs things it counts (clicks, clipped runs): only those in
    # the region
    learns: bool = False  # it learns from a profile (a stretch of what to remove alone)
    marks: bool = False  # what it repaired is marked in the time ruler, one by one
    nothing: str = "found nothing to repair"  # what its report says when it changed nothing

    def run(self, x: np.ndarray, sample_rate: int, settings: dict, **extra):
        return importlib.import_module(self.dsp).run(x, sample_rate, **settings, **extra)

    def louder(self, values: dict) -> float:
        """How far above the input its output may peak, with ``values`` set."""
        return self.louder_db + (values.get(self.headroom, 0.0) if self.headroom else 0.0)


MODULES = {m.name: m for m in (
    Module("denoise", "De-noise", "Reduce broadband hiss and steady noise, learnt from a "
           "noise-only profile (a selection) or from the quietest parts of the audio.",
           (Param("amount_db", 24.0, 0.0, 40.0, "dB", "the most the noise is reduced by"),
            Param("adaptive", "off", choices=("off", "on"),
                  help="on: learn the noise again every 2 s, for noise that grows, fades "
                       "or changes colour (a fan spinning up, traffic, a take moving between "
                       "rooms); off: one estimate for the whole take, best for a steady "
                       "hiss"),
            Param("tonal", "off", choices=("off", "on"),
                  help="on: learn steady tones (a fan's blade tone or whine, a machine) as "
                       "noise too, for speech or sound effects over such noise, with "
                       "adaptive on when the noise ramps; off leaves them, as music's held "
                       "notes and drones are steady too (de-hum and the tone remover take "
                       "tones)")), 0.5, "engine.repair.denoise",
           learns=True, working_bytes=56),  # 39 measured (no voice in it), 8 more where one is
    Module("declick", "De-click", "Find clicks and crackle and re-estimate their samples from "
           "the audio around them.",
           (Param("sensitivity", 5.0, 0.0, 10.0, "", "higher finds smaller clicks"),
            Param("crackle", "off", choices=("off", "on"),
                  help="on: dense small clicks (vinyl crackle)")), 0.05, "engine.repair.declick",
           counts=True, marks=True, working_bytes=51),
    Module("dehum", "De-hum", "Find mains hum (50 or 60 Hz, its drift and harmonics) and "
           "subtract it, keeping what sounds under it.",
           (Param("fundamental", "auto", choices=("auto", "50", "60"),
                  help="mains frequency, or auto to find it"),
            Param("harmonics", 40, 1, 100, "", "the most harmonics considered", integer=True)),
           1.0, "engine.repair.dehum", working_bytes=21),
    Module("declip", "De-clip", "Find clipped runs, or a saturating curve (soft clipping), "
           "and restore the peaks they cut off or bent.",
           (Param("headroom_db", 6.0, 0.0, 20.0, "dB",
                  "how far above the clip level a restored peak may reach"),
            Param("gain", "reduce", choices=("reduce", "keep"),
                  help="reduce: lower the whole region's level so restored peaks fit below "
                       "full scale")), 0.05, "engine.repair.declip", headroom="headroom_db",
           counts=True, working_bytes=71),
    Module("voice", "Voice de-noise", "Reduce the noise around a voice with a speech model "
           "(DeepFilterNet3), only where it finds a voice: music and other sounds are left "
           "as they are.",
           (Param("amount_db", 40.0, 0.0, 100.0, "dB", "the most the noise is reduced by"),),
           1.0, "engine.repair.voice", nothing="found no voice", working_bytes=47),
)}


@dataclass
class Report:
    """What a module did: ``summary`` is empty when it found nothing (then nothing
    changed and ``step`` is None); ``events`` are (seconds, length in seconds,
    channel) of each thing repaired, and ``changes`` what the repair added to the
    audio at each: (first sample, float32 samples) on the event's channel. The
    changes add up to the whole repair's (each event owns the samples nearer it
    than its neighbours on its channel)."""

    module: str
    summary: str
    events: list[tuple[float, float, int]] = field(default_factory=list)
    step: Step | None = None
    notes: list[str] = field(default_factory=list)
    changes: list[tuple[int, np.ndarray]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.step is not None

    def line(self) -> str:
        module = MODULES[self.module]
        if not self.changed:
            return "; ".join([f"{module.title}: {module.nothing}", *self.notes, "nothing changed"])
        return "; ".join([f"{module.title}: {self.summary}", *self.notes])


def get_module(name, where: str = "repair") -> Module:
    if not isinstance(name, str) or name not in MODULES:
        raise ParameterError(f"{where}: unknown repair {name!r}; use one of {', '.join(MODULES)}")
    return MODULES[name]


def settings_of(module: Module, values: dict, where: str) -> dict:
    """The module's settings: defaults overridden by ``values``, validated."""
    known = {p.name: p for p in module.params}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ParameterError(f"{where}: {module.name} has no setting(s) {', '.join(unknown)}; "
                             f"it has {', '.join(known)}")
    out = {p.name: p.default for p in module.params}
    out.update({k: known[k].validate(v, f"{where}.{k}") for k, v in values.items()})
    return {k: (v == "on") if known[k].choices == ("off", "on") else v for k, v in out.items()}


def _span(doc: Document, start: float | None, end: float | None, where: str) -> tuple[int, int]:
    """The samples ``[s0, s1)`` of the region ``start``-``end`` seconds (the file's start
    and end where None; an end past the file's is its end); a ParameterError when a
    bound is not a finite number or the region is empty or outside the file."""
    sr, n = doc.sample_rate, doc.length
    for name, value in (("start", start), ("end", end)):
        if value is not None and not math.isfinite(value):
            raise ParameterError(f"{where}: the region's {name} {value} is not a number of "
                                 f"seconds; give one within the file (0-{n / sr:g} s)")
    t0 = 0.0 if start is None else start * sr  # 1e308 s: inf samples, outside the file
    t1 = float(n) if end is None else min(end * sr, n)
    if not 0 <= t0 < n or not t1 > t0 or round(t1) <= round(t0):
        raise ParameterError(f"{where}: the region {start}-{end} s is empty or outside the "
                             f"file (0-{n / sr:g} s)")
    return round(t0), round(t1)


def _checked_band(low: float | None, high: float | None, sample_rate: int, where: str) -> None:
    """A ParameterError unless ``low``-``high`` Hz (either None: open) is a band with
    something in it: finite, ``low`` at least 0 and below Nyquist, ``high`` above ``low``."""
    nyquist = sample_rate / 2
    for name, value in (("low", low), ("high", high)):
        if value is not None and not math.isfinite(value):
            raise ParameterError(f"{where}: the band's {name} edge {value} is not a number of "
                                 f"Hz; give one from 0 to {nyquist:g} Hz")
    if (low is not None and not 0 <= low < nyquist) or (high is not None and high <= 0) or (
            low is not None and high is not None and high <= low):
        raise ParameterError(f"{where}: the band {_hz(low, 0)}-{_hz(high, nyquist)} Hz is "
                             f"empty; give a low edge below the high one, within 0-{nyquist:g} Hz")


def _hz(value: float | None, default: float) -> str:
    return f"{default if value is None else value:g}"


def _band(d: np.ndarray, sample_rate: int, low: float | None, high: float | None) -> np.ndarray:
    """``d`` ``[ch, n]`` kept within ``low``-``high`` Hz (zero-phase, raised-cosine edges)."""
    if low is None and high is None:
        return d
    size = 1 << int(math.ceil(math.log2(d.shape[-1] + sample_rate // 10)))
    f = np.fft.rfftfreq(size, 1 / sample_rate)
    octave = np.log2(np.maximum(f, 1e-3))
    gain = np.ones_like(f)
    for edge, side in ((low, 1), (high, -1)):
        if edge is not None and edge > 0:
            t = np.clip(side * (octave - math.log2(edge)) / BAND_SLOPE_OCTAVES + 0.5, 0, 1)
            gain *= np.sin(0.5 * math.pi * t) ** 2
    return np.fft.irfft(np.fft.rfft(d, size) * gain, size)[:, :d.shape[-1]]


def _kept_inside(d: np.ndarray, lo: int, hi: int, n: int, sample_rate: int) -> np.ndarray:
    """``d`` over ``[0, len)`` zeroed outside ``[lo, hi)``, faded in and out at region
    ends that are not the file's."""
    out = np.zeros_like(d)
    out[:, lo:hi] = d[:, lo:hi]
    k = min(round(EDGE_SECONDS * sample_rate), (hi - lo) // 2)
    if k > 0:
        ramp = np.sin(np.linspace(0, math.pi / 2, k + 2)[1:-1]) ** 2
        if lo > 0:
            out[:, lo:lo + k] *= ramp
        if hi < n:
            out[:, hi - k:hi] *= ramp[::-1]
    return out


@dataclass
class Cells:
    """Coefficients to write as one undo step ``label`` on ``channel`` (None: all) of
    ``layer``: each rect's cells before and after."""

    label: str
    channel: int | None
    layer: int
    rects: list[tuple[Rect, torch.Tensor, torch.Tensor]] = field(default_factory=list)
    change: Change | None = None  # see engine.model.history.Step

    def write(self, doc: Document) -> Step:
        """Write them; the undo step (before-patches). All or nothing."""
        done = Step(self.label, self.channel, layer=self.layer, written=doc.written_frames(),
                    change=self.change)
        try:
            for rect, before, after in self.rects:
                done.patches.append(Patch(rect, before))
                doc.write_complex(rect, after, channel=self.channel, layer=self.layer)
        except BaseException:
            done.undo(doc)
            raise
        return done


@dataclass
class Plan:
    """A repair computed and not yet written (:func:`plan`): what the module found
    (``report``, its ``step`` None) and the change it makes to the audio of ``layer``
    on ``chans``: float64 ``[len(chans), n]`` from sample ``a0``, nonzero only within
    ``span`` (None: it changes nothing). ``s0``-``s1`` is the region (samples),
    ``weight`` how the layer's audio counts in the mix. Apply writes it
    (:func:`analyse`, :func:`write`); Preview plays :meth:`heard`."""

    report: Report
    layer: int
    weight: float
    chans: list[int]
    s0: int
    s1: int
    a0: int
    change: np.ndarray | None = None
    span: tuple[int, int] | None = None

    def heard(self, mix: np.ndarray) -> np.ndarray:
        """The region as the repair leaves it: ``mix``, the document's sound over
        ``s0``-``s1`` (``[ch, s1 - s0]``), with the change added; float32."""
        out = np.array(mix, np.float32)
        if self.change is not None:
            d = self.change[:, self.s0 - self.a0:self.s1 - self.a0]
            out[self.chans] = (out[self.chans] + self.weight * d).astype(np.float32)
        return out


def plan(doc: Document, audio: torch.Tensor | np.ndarray, name: str, *,
         start: float | None = None, end: float | None = None, low: float | None = None,
         high: float | None = None, channel: int | None = None,
         profile: tuple[float, float] | None = None, settings: dict | None = None,
         progress: ProgressFn | None = None, cancel=None) -> Plan:
    """What module ``name`` would do to ``doc``, whose current audio is ``audio``
    (``[ch, length]``, its resynthesis); nothing is written. ``start``/``end``
    (seconds) and ``low``/``high`` (Hz) bound the region; ``channel`` None for all;
    ``profile`` (seconds) a noise-only stretch for de-noise."""
    module = get_module(name)
    values = settings_of(module, settings or {}, name)
    sr, n = doc.sample_rate, doc.length
    s0, s1 = _span(doc, start, end, name)
    _checked_band(low, high, sr, name)
    chans = list(doc.channel_indices(channel))
    ctx = round(module.context_s * sr)
    a0, a1 = max(0, s0 - ctx), min(n, s1 + ctx)
    check_memory(module, channels=len(chans), samples=a1 - a0, sample_rate=sr)
    spans = [(a0, a1)]
    extra = {}
    if profile is not None:
        if not module.learns:
            learners = ", ".join(m.name for m in MODULES.values() if m.learns)
            raise ParameterError(f"{name}: only {learners} learns from a profile")
        spans.append(_span(doc, profile[0], profile[1], f"{name}: profile"))
    if module.counts:  # the context is for learning: what it reports lies in the region
        extra["within"] = (s0 - a0, s1 - a0)
    layer = doc.layers.active  # taken once: a worker reads and writes the same layer
    weight = 1.0 if doc.layers.plain else \
        layer.factor if layer in doc.layers.state.audible() else 0.0
    region, *noise = _layer_audio(doc, audio, spans, layer.id)
    x = _float64(region, chans, cancel)
    if profile is not None:
        extra["profile"] = _float64(noise[0], chans, cancel)
    reduce_gain = values.pop("gain", "keep") == "reduce"  # declip's, applied after it
    looked = lambda: step(0.0, None, cancel)  # noqa: E731 - between whole-region passes
    outcome = module.run(x, sr, values, progress=progress, cancel=cancel, **extra)
    planned = Plan(Report(module.name, outcome.summary,
                          [((a0 + e.start) / sr, e.length / sr, chans[e.channel])
                           for e in outcome.events], notes=[outcome.note] if outcome.note else []),
                   layer.id, weight, chans, s0, s1, a0)
    if not outcome.summary:
        return planned
    report = planned.report
    looked()  # (a Cancel waits for no more than one pass over 10 minutes of stereo)
    d = _band(outcome.samples - x, sr, low, high)
    looked()
    d = _kept_inside(d, s0 - a0, s1 - a0, n - a0, sr)
    looked()
    grid = SOURCE_STEPS.get(doc.audio.subtype)
    y, put_back = guard.safe(x, x + _on_grid(d, grid), sr, louder_db=module.louder(values))
    looked()
    if put_back:
        report.notes.append(f"{put_back} window(s) of 10 ms left as they were (their repair "
                            "would have been louder than the audio)")
    peak = float(np.abs(y).max())
    if reduce_gain and peak > FULL_SCALE:
        y = x + (y * (FULL_SCALE / peak) - x) * (_kept_inside(np.ones_like(x), s0 - a0, s1 - a0,
                                                              n - a0, sr))
        report.notes.append(f"level lowered by {20 * math.log10(peak / FULL_SCALE):.1f} dB "
                            "so the restored peaks fit below full scale")
    y = x + _on_grid(y - x, grid)  # a put-back window's fades lie between two steps
    looked()
    span = guard.changed_span(x, y)
    looked()
    if span is None:
        report.summary = ""
        return planned
    planned.change, planned.span = y - x, (a0 + span[0], a0 + span[1])
    report.changes = _event_changes(planned.change, outcome.events, a0)
    return planned


def _on_grid(d: np.ndarray, grid: float | None) -> np.ndarray:
    """The change ``d`` rounded to whole steps of ``grid`` (None: as it is). A value
    between 0 and a step rounds to one of the two, so a repair faded towards the input
    (engine.repair.guard) is never rounded past its unfaded self."""
    return d if grid is None else np.round(d / grid) * grid


def _float64(rows: np.ndarray, chans: list[int], cancel) -> np.ndarray:
    """``rows[chans]`` as float64, COPY_SAMPLES at a time (``cancel`` looked at between:
    a fresh copy of 10 minutes of stereo takes seconds of page faults)."""
    out = np.empty((len(chans), rows.shape[1]), np.float64)
    for a in range(0, rows.shape[1], COPY_SAMPLES):
        step(0.0, None, cancel)
        out[:, a:a + COPY_SAMPLES] = rows[chans, a:a + COPY_SAMPLES]
    return out


def check_memory(module: Module, *, channels: int, samples: int, sample_rate: int,
                 have: int | None = None) -> int:
    """Refuse, before any work, a repair of ``samples`` on ``channels`` whose working
    memory is more than the share of the memory available (``have``: measured when
    None) that one document may take; the bytes it needs."""
    need = module.working_bytes * channels * samples
    have = available_memory() if have is None else have
    if need > MEMORY_SHARE * have:
        raise ParameterError(
            f"{module.name}: {module.title} of {samples / sample_rate / 60:.1f} min of "
            f"{channels}-channel audio needs about {need / 2**30:.1f} GiB of working memory, "
            f"more than the {MEMORY_SHARE:.0%} of the {have / 2**30:.1f} GiB available; "
            "repair a part of the file at a time (a selection; --start and --end)")
    return need


def analyse(doc: Document, planned: Plan, *, progress: ProgressFn | None = None,
            cancel=None, kept: bool = True) -> Cells | None:
    """The coefficients :func:`write` writes for ``planned`` (None: nothing); reads
    ``doc``, writes nothing (a worker may run it). ``kept``: a history will keep the
    step, so its change is packed for a project (engine.model.history.Change)."""
    if planned.change is None:
        return None
    return _cells(doc, planned.change, *planned.span, planned.a0, planned.chans,
                  MODULES[planned.report.module].title, progress, cancel, layer=planned.layer,
                  kept=kept)


def write(doc: Document, planned: Plan, cells: Cells | None, *,
          history: History | None = None) -> Report:
    """Write ``planned``'s ``cells`` (:func:`analyse`) to ``doc`` as one undo step;
    its report, whose ``step`` is that (None: nothing changed)."""
    report = planned.report
    if cells is None:
        return report
    report.step = cells.write(doc)
    if history is not None:
        history.push(report.step)
    return report


def prepare(doc: Document, audio: torch.Tensor | np.ndarray, name: str, *,
            progress: ProgressFn | None = None, cancel=None, kept: bool = True,
            **options) -> tuple[Plan, Cells | None]:
    """:func:`plan` with ``options`` (its region, profile and settings) and
    :func:`analyse` (``kept``: as there): all but the writing; a worker may run it."""
    planned = plan(doc, audio, name, progress=scaled(progress, 0, 0.8), cancel=cancel,
                   **options)
    step(0.8, progress, cancel)
    return planned, analyse(doc, planned, progress=scaled(progress, 0.8, 1.0), cancel=cancel,
                            kept=kept)


def repair(doc: Document, audio: torch.Tensor | np.ndarray, name: str, *,
           history: History | None = None, progress: ProgressFn | None = None,
           cancel=None, **options) -> Report:
    """Run module ``name`` on ``doc`` (:func:`prepare`, :func:`write`): one undo step;
    the report says what it did."""
    planned, cells = prepare(doc, audio, name, progress=progress, cancel=cancel,
                             kept=history is not None, **options)
    return write(doc, planned, cells, history=history)


def _layer_audio(doc: Document, audio, spans: list[tuple[int, int]],
                 layer: int) -> list[np.ndarray]:
    """The audio of ``layer`` over each of ``spans`` (``[ch, s1 - s0]``; ``audio``'s,
    the mix's, when the document has no layers)."""
    if doc.layers.plain:
        whole = np.asarray(audio.cpu().numpy() if isinstance(audio, torch.Tensor) else audio)
        return [whole[:, s0:s1] for s0, s1 in spans]
    return [layer_audio(doc, layer=layer, sample0=s0, sample1=s1) for s0, s1 in spans]


def _event_changes(d: np.ndarray, events, a0: int) -> list[tuple[int, np.ndarray]]:
    """Each event's share of the change ``d`` (``[chans, n]`` from sample ``a0``): the
    samples of its channel nearer it than the channel's other events, trimmed to where
    the change is above EVENT_FLOOR."""
    out: list = [None] * len(events)
    by_channel: dict[int, list[int]] = {}
    for i, e in enumerate(events):
        by_channel.setdefault(e.channel, []).append(i)
    for channel, indices in by_channel.items():
        indices.sort(key=lambda i: events[i].start)
        centres = [events[i].start + events[i].length / 2 for i in indices]
        edges = [0, *(math.ceil((a + b) / 2) for a, b in pairwise(centres)), d.shape[1]]
        for i, (lo, hi) in zip(indices, pairwise(edges), strict=True):
            part = d[channel, lo:hi]
            kept = np.flatnonzero(np.abs(part) > EVENT_FLOOR)
            first, last = (kept[0], kept[-1] + 1) if len(kept) else (0, 0)
            out[i] = (a0 + lo + int(first), part[first:last].astype(np.float32))
    return out


def put_back(doc: Document, report: Report, index: int, *,
             history: History | None = None) -> Step | None:
    """Take the repair of ``report``'s event ``index`` (a click) off ``doc``, as one undo
    step: the audio there becomes what it was before the repair (plus what was painted
    since). None when the repair changed nothing there."""
    start, change = report.changes[index]
    if not len(change):
        return None
    if all(x.id != report.step.layer for x in doc.layers.state.layers):
        raise ParameterError(f"put back: the layer {MODULES[report.module].title} repaired "
                             "is gone (deleted, merged or unmixed): undo that first")
    channel = report.events[index][2]
    title = MODULES[report.module].title
    done = _cells(doc, -change[None].astype(np.float64), start, start + len(change), start,
                  [channel], f"{title}: put back {index + 1} of {len(report.events)}",
                  None, None, layer=report.step.layer).write(doc)
    if history is not None:
        history.push(done)
    return done


def _cells(doc: Document, d: np.ndarray, c0: int, c1: int, a0: int, chans: list[int],
           label: str, progress, cancel, layer: int, kept: bool = True) -> Cells:
    """The coefficients of the frames the change ``d`` (``[len(chans), ...]`` from sample
    ``a0``, nonzero within ``[c0, c1)``) reaches on ``layer``, with its analysis added
    (``kept``: and the change packed, for the history that keeps the step; a CLI or
    batch repair keeps none)."""
    t = doc.transform
    f0, f1 = t.frames_needed(c0, c1, doc.length)
    channel = None if len(chans) == doc.channels else chans[0]
    change = torch.zeros((len(chans), doc.length), dtype=torch.float32)
    change[:, c0:c1] = torch.from_numpy(d[:, c0 - a0:c1 - a0]).float()
    step(0.0, None, cancel)
    cells = Cells(label, channel, layer, change=Change.of(
        c0, change[:, c0:c1].numpy(), lambda: step(0.0, None, cancel)) if kept else None)
    change = change.to(doc.device)
    for fa in range(f0, f1, WRITE_FRAMES):
        step((fa - f0) / max(f1 - f0, 1), progress, cancel)
        fb = min(f1, fa + WRITE_FRAMES)
        rect = Rect(0, doc.n_bins, fa, fb)
        before = doc.read_complex(rect, channel, layer=layer)
        cells.rects.append((rect, before, before + t.forward_frames(change, fa, fb)))
    return cells
