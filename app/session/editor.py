"""The scripting API and stroke scripts.

    from app.session.editor import Editor
    ed = Editor.open("take.wav")
    ed.paint("hard-eraser", [(1.0, 1000), (2.0, 1000)], radius_hz=150)
    ed.undo(); ed.redo()
    ed.export("take-clean.wav")

Layers (app.session.editor_layers): ``ed.layers``, ``ed.unmix("hpss")``,
``ed.export_stems("stems/")``. Editing (app.session.editor_edits): ``ed.cut(start=1.0,
end=2.5)``, ``ed.paste(at=10.0)``, ``ed.trim``, ``ed.move``, ``ed.gain``, ...

A stroke script is a JSON list of strokes, each
``{"preset": NAME | "brush": TYPE, "set": {...}, "inputs": {...},
"points": [[t, f, pressure], ...], "channel": "all" | N}``, repair steps
``{"repair": NAME, ...}`` and edit steps ``{"edit": VERB, ...}``
(app.session.script_edits).
"""

import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.session.editor_edits import EditingVerbs
from app.session.editor_layers import EditorLayers, write_stems
from app.session.repairs import Report, get_module, put_back, repair, settings_of
from app.session.script_edits import ScriptEdit, checked_edit
from app.session.session import Session
from app.session.unmixing import separate, unmix
from brushes.params import Curve
from brushes.path import StrokePoint
from brushes.presets import expect_object, find_preset, parse_preset, read_limited
from brushes.registry import get_brush
from brushes.stroke import paint
from engine.errors import ParameterError
from engine.io.export import ExportReport, export, same_depth
from engine.model.document import Document
from engine.model.history import DEFAULT_LIMIT, History
from engine.model.resynth import Resynthesizer
from engine.region import Rect

MAX_SCRIPT_BYTES = 64 << 20


class Editor(EditingVerbs, Session):
    """The scripts' face of an editing session (app.session.session: the selection,
    the paint channel, the clipboard): a document with undo history and live
    resynthesis."""

    def __init__(self, doc: Document, history_limit: int | None = None):
        """``history_limit``: bytes of undo kept (default 1 GiB); 0 keeps no history
        (a batch: nothing to undo, nothing to hold)."""
        super().__init__()
        self._doc = doc
        self.history = None if history_limit == 0 else \
            History(doc, DEFAULT_LIMIT if history_limit is None else history_limit)
        self._synths = {doc: Resynthesizer(doc)}  # the current document's, and the last
        self.warnings: list[str] = []  # what was painted other than asked (clipped strokes)

    @property
    def doc(self) -> Document:
        """The document as it is now: a time edit (and its undo) makes another one."""
        return self._doc if self.history is None else self.history.doc

    def close(self) -> None:
        """Let the documents go (each and its resynthesizer refer to each other)."""
        for synth in self._synths.values():
            synth.close()
        self._synths.clear()

    @property
    def synth(self) -> Resynthesizer:
        """The current document's resynthesis: a time edit swaps the document, and the
        one before keeps its own, so an undo and redo of it cost no resynthesis."""
        doc = self.doc
        synth = self._synths.pop(doc, None)
        if synth is None:
            for old in list(self._synths)[:-1]:  # all but the last used
                self._synths.pop(old).close()
            synth = Resynthesizer(doc)
        self._synths[doc] = synth  # the last used, last
        return synth

    @classmethod
    def open(cls, path: str | os.PathLike, **analysis) -> "Editor":
        return cls(Document.open(path, **analysis))

    def paint(self, preset: str, points: Iterable, *, brush: str | None = None,
              channel: int | str | None = None, inputs: dict | None = None,
              **overrides) -> Rect | None:
        """Paint one stroke with ``preset`` (or a bare ``brush`` type) along
        ``points``: ``(seconds, Hz)`` or ``(seconds, Hz, pressure)``.
        ``overrides`` set parameters; ``channel``: the session's paint channel unless
        given (every channel unless set: :meth:`paint_on`); returns the rect changed."""
        name, params, curves = _brush_settings(preset, brush, overrides, inputs, "paint")
        channel = self.channel if channel is None else channel
        if channel is not None:
            params["channel"] = channel
        step = paint(self.doc, name, self._inside(_points(points, "points"), "points"),
                     params=params,
                     curves=curves, history=self.history)
        self._told(step, preset if brush is None else brush)
        return step.dirty()

    def _told(self, step, who: str) -> bool:
        """Whether ``step`` changed the document; what it tells the user (a repair that
        found nothing) goes into :attr:`warnings`."""
        if step.notice:
            self.warnings.append(f"{who}: {step.notice}")
        return bool(step.patches)

    def _inside(self, points: list[StrokePoint], where: str) -> list[StrokePoint]:
        """The points clipped to the document (its duration, 0 Hz to Nyquist); a warning
        says so, with the farthest value."""
        end, nyquist = self.doc.length / self.doc.sample_rate, self.doc.sample_rate / 2
        late = max((p.time for p in points if p.time > end), default=None)
        high = max((p.freq for p in points if p.freq > nyquist), default=None)
        if late is None and high is None:
            return points
        beyond = [f"{late:g} s is past the end ({end:g} s)" if late is not None else "",
                  f"{high:g} Hz is above Nyquist ({nyquist:g} Hz)" if high is not None else ""]
        self.warnings.append(f"{where}: clipped to the file: " + "; ".join(b for b in beyond if b))
        return [StrokePoint(min(p.time, end), min(p.freq, nyquist), p.pressure) for p in points]

    def repair(self, name: str, *, start: float | None = None, end: float | None = None,
               low: float | None = None, high: float | None = None,
               channel: int | None = None, profile: tuple[float, float] | None = None,
               progress=None, cancel=None, **settings) -> Report:
        """Run the restoration module ``name`` (denoise, declick, dehum, declip) over the
        region (seconds, Hz; the whole file by default) as one undo step, on ``channel``
        (the session's paint channel unless given); the report says what it did. One
        that finds nothing changes nothing and adds a warning."""
        report = repair(self.doc, self.audio(), name, history=self.history, start=start,
                        end=end, low=low, high=high,
                        channel=self.channel if channel is None else channel, profile=profile,
                        settings=settings, progress=progress, cancel=cancel)
        if not report.changed:
            self.warnings.append(report.line())
        return report

    def put_back(self, report: Report, index: int) -> Rect | None:
        """Take the repair of ``report``'s ``index``-th event (a click de-click repaired)
        off again, as one undo step: the audio there is as before the repair."""
        if not 0 <= index < len(report.changes):
            raise ParameterError(f"put back: the repair has events 0-{len(report.changes) - 1}, "
                                 f"not {index}")
        step = put_back(self.doc, report, index, history=self.history)
        return None if step is None else step.dirty()

    @property
    def layers(self) -> EditorLayers:
        """The document's layers and what can be done with them (made when asked: an
        editor that held them would be a cycle, freed only by the collector)."""
        return EditorLayers(self)

    def unmix(self, method: str, *, layer: int | str | None = None, marks: list | None = None,
              progress=None, cancel=None) -> list:
        """Replace a layer (the active one) by what ``method`` finds in it: "hpss" (or
        "hpss:MARGIN"), "tonal-noise" or "nmf:K"; ``marks`` steer an nmf unmix (see
        app.session.unmixing). One undo step; returns the new layers."""
        before = {x.id for x in self.layers}
        unmix(self.doc, method, layer=self.layers.id_of(layer), marks=marks,
              history=self.history, progress=progress, cancel=cancel)
        return [x for x in self.layers if x.id not in before]

    def separate(self, marks: list, *, layer: int | str | None = None, progress=None,
                 cancel=None) -> None:
        """Paint to separate: ``marks`` (app.session.unmixing) added to those of the nmf unmix
        a layer (the active one) is a part of, and the unmix run again. One undo step."""
        separate(self.doc, marks, layer=self.layers.id_of(layer), history=self.history,
                 progress=progress, cancel=cancel)

    def undo(self) -> Rect | None:
        return self._history().undo()

    def redo(self) -> Rect | None:
        return self._history().redo()

    def _history(self) -> History:
        if self.history is None:
            raise ParameterError("this editor keeps no undo history (history_limit=0)")
        return self.history

    def audio(self):
        """The edited audio, float32 ``[channels, frames]``."""
        return self.synth.waveform()

    def export(self, path: str | os.PathLike, *, layer: int | str | None = None,
               **options) -> ExportReport:
        """Write the edited audio (the mix; or one ``layer`` alone, a stem) in the
        source's bit depth unless told (``bit_depth``), with the source's metadata (tags,
        bext, markers, speaker layout; options as :func:`engine.io.export.export`)."""
        if options.get("bit_depth") is None and self.doc.audio.subtype:  # the source's depth
            options["bit_depth"] = same_depth(self.doc.audio.subtype, Path(path))
        options.setdefault("source", self.doc.audio.path)
        options.setdefault("metadata", self.doc.audio.metadata)
        options.setdefault("layout", self.doc.audio.layout)
        audio = self.audio() if layer is None else self.layers.audio(layer)
        return export(audio, self.doc.sample_rate, path, **options)

    def export_stems(self, folder: str | os.PathLike, *, stem: str | None = None,
                     suffix: str = ".wav", **options) -> list[ExportReport]:
        """Write each layer as heard (its gain and inversion; muted layers not at all),
        bottom up, into ``folder``, as ``<stem>-<n>-<layer name><suffix>`` (stem: the
        source file's name): they add up to the mix
        (:func:`app.session.editor_layers.write_stems`)."""
        folder = Path(folder)
        if not folder.is_dir():
            raise ParameterError(f"{folder}: no such folder; create it first")
        stem = stem or (Path(self.doc.audio.path).stem if self.doc.audio.path else "stem")
        return [report for _, report in write_stems(self.doc, folder, stem=stem, suffix=suffix,
                                                    **options)]

    def run_script(self, strokes: list) -> int:
        """Paint every stroke (and run every repair step) of a decoded stroke script;
        returns how many changed the document (a repair that found nothing changes
        nothing and says so in :attr:`warnings`). The whole script is checked
        (:func:`checked_script`) before the first stroke is painted."""
        changed = 0
        for item in checked_script(strokes):
            if isinstance(item, ScriptEdit):
                changed += self._run_edit(item)
                continue
            if isinstance(item, ScriptRepair):
                try:  # what depends on the file: a region outside it, a short profile
                    report = self.repair(item.module, profile=item.profile, **item.bounds,
                                         **item.settings)
                except ParameterError as e:
                    raise ParameterError(f"{item.where}: {e}") from e
                if not report.changed:
                    self.warnings[-1] = f"{item.where}: {self.warnings[-1]}"
                changed += report.changed
                continue
            step = paint(self.doc, item.brush, self._inside(item.points, item.where),
                         params=item.params, curves=item.curves, history=self.history)
            changed += self._told(step, item.where)
        return changed

    def _run_edit(self, item: ScriptEdit) -> bool:
        """Run an edit step; its warnings and errors name it. Whether it changed the
        document (a copy does not)."""
        told = len(self.warnings)
        try:
            getattr(self, item.verb)(**item.args)
        except ParameterError as e:
            raise ParameterError(f"{item.where}: {e}") from e
        self.warnings[told:] = [f"{item.where}: {w}" for w in self.warnings[told:]]
        return item.verb != "copy"


Curves = dict[str, dict[str, Curve]]


def _brush_settings(preset: str | None, brush: str | None, overrides: dict,
                    inputs: dict | None, where: str) -> tuple[str, dict, Curves]:
    """(brush type, params, input curves) from a preset or a bare brush, plus overrides."""
    if (preset is None) == (brush is None):
        raise ParameterError(f"{where}: give either a preset or a brush type")
    if not isinstance(preset or brush, str):
        raise ParameterError(f"{where}: a preset or brush is named by a string, not "
                             f"{preset or brush!r:.40}")
    if preset is not None:
        base = find_preset(preset)
        name, params, curves = base.brush, dict(base.params), dict(base.inputs)
    else:
        name, params, curves = brush, {}, {}
    params.update(overrides)
    if inputs:
        curves.update(parse_preset({"version": 1, "name": "inline", "brush": name,
                                    "inputs": inputs}, where).inputs)
    return name, params, curves


@dataclass(frozen=True)
class ScriptStroke:
    """A stroke of a script, checked: its brush, settings, input curves and points."""
    where: str  # "strokes[i]", which starts every message about it
    brush: str
    settings: dict  # the preset's and the script's "set", validated
    curves: Curves
    points: list[StrokePoint]
    channel: int | None = None  # the script's "channel" (-1: all), if it names one

    @property
    def params(self) -> dict:
        return self.settings if self.channel is None else {**self.settings,
                                                           "channel": self.channel}


@dataclass(frozen=True)
class ScriptRepair:
    """A repair step of a script, checked: ``{"repair": NAME, "set": {...}, "start": S,
    "end": S, "low": HZ, "high": HZ, "channel": N, "profile": [S, S]}``."""
    where: str
    module: str
    settings: dict
    bounds: dict  # start, end, low, high, channel: numbers or None
    profile: tuple[float, float] | None = None


def _checked_repair(spec: dict, where: str) -> ScriptRepair:
    unknown = set(spec) - {"repair", "set", "start", "end", "low", "high", "channel", "profile"}
    if unknown:
        raise ParameterError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} of a "
                             "repair step")
    module = get_module(spec["repair"], f"{where}.repair")
    settings = expect_object(spec.get("set", {}), f"{where}.set")
    settings_of(module, settings, f"{where}.set")  # raises on a bad value
    bounds = {}
    for key in ("start", "end", "low", "high", "channel"):
        value = spec.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(
                value, (int, float)) or not math.isfinite(value)):
            raise ParameterError(f"{where}.{key}: expected a number, got {value!r:.40}")
        bounds[key] = int(value) if key == "channel" and value is not None else value
    profile = spec.get("profile")
    if profile is not None and not (isinstance(profile, list) and len(profile) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in profile)):
        raise ParameterError(f"{where}.profile: expected [start, end] in seconds")
    return ScriptRepair(where, module.name, settings, bounds,
                        tuple(profile) if profile else None)


def checked_script(strokes) -> list[ScriptStroke | ScriptRepair]:
    """Every stroke of a decoded stroke script checked, as ``apply`` and ``batch`` both
    take it: keys, the preset or brush, its settings, input curves, channel and points
    (finite, seconds and Hz not negative, pressure within 0 to 1). What depends on the
    file (a channel it lacks, points past its end) is left to painting."""
    if not isinstance(strokes, list):
        raise ParameterError("a stroke script is a JSON list of strokes, not "
                             f"{type(strokes).__name__}")
    out = []
    for i, spec in enumerate(strokes):
        where = f"strokes[{i}]"
        spec = expect_object(spec, where)
        if "edit" in spec:
            out.append(checked_edit(spec, where))
            continue
        if "repair" in spec:
            out.append(_checked_repair(spec, where))
            continue
        unknown = set(spec) - {"preset", "brush", "set", "inputs", "points", "channel"}
        if unknown:
            raise ParameterError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        overrides = expect_object(spec.get("set", {}), f"{where}.set")
        name, settings, curves = _brush_settings(spec.get("preset"), spec.get("brush"),
                                                 overrides, spec.get("inputs"), where)
        brush = get_brush(name, f"{where}.brush")
        _, extra = brush.resolve(settings, f"{where}.set")  # raises on a bad value
        if extra:
            raise ParameterError(f"{where}.set: {brush.name} has no parameter(s) "
                                 f"{', '.join(extra)}")
        channel = brush.param("channel").validate(spec["channel"], f"{where}.channel") \
            if "channel" in spec else None
        out.append(ScriptStroke(where, brush.name, settings, curves,
                                _points(spec.get("points"), f"{where}.points"), channel))
    return out


def with_presets_resolved(strokes: list) -> list:
    """The strokes (checked: :func:`checked_script`) with each preset named replaced by
    what it holds now (its brush, settings and input curves), so that they paint the
    same wherever and whenever they run: on a cluster worker without this user's
    presets, or after a preset file was edited."""
    out = []
    for spec, stroke in zip(strokes, checked_script(strokes), strict=True):
        if "preset" not in spec or isinstance(stroke, ScriptRepair):
            out.append(spec)
            continue
        resolved = {k: v for k, v in spec.items() if k not in ("preset", "set", "inputs")}
        resolved.update(brush=stroke.brush, set=stroke.settings)
        if stroke.curves:
            resolved["inputs"] = {p: {src: [list(pt) for pt in c] for src, c in by.items()}
                                  for p, by in stroke.curves.items()}
        out.append(resolved)
    return out


def _points(points, where: str) -> list[StrokePoint]:
    if not isinstance(points, (list, tuple)) or not points:
        raise ParameterError(f"{where}: expected a non-empty list of [seconds, Hz] or "
                             "[seconds, Hz, pressure] points")
    out = []
    for i, p in enumerate(points):
        if (not isinstance(p, (list, tuple)) or len(p) not in (2, 3)
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p)):
            raise ParameterError(f"{where}[{i}]: expected [seconds, Hz] or [seconds, Hz, "
                                 f"pressure], got {p!r:.60}")
        t, f, *rest = p
        pressure = rest[0] if rest else 1.0
        if not all(math.isfinite(v) for v in p):
            raise ParameterError(f"{where}[{i}]: {list(p)} is not a point: seconds, Hz and "
                                 "pressure must be finite numbers")
        if not (t >= 0 and f >= 0 and 0 <= pressure <= 1):
            raise ParameterError(f"{where}[{i}]: {list(p)} is out of range: seconds and Hz must "
                                 "be >= 0 and pressure within 0 to 1")
        out.append(StrokePoint(float(t), float(f), float(pressure)))
    return out


def load_stroke_script(path: str | os.PathLike) -> list:
    return load_json_list(path, what="stroke script", items="strokes")


def load_json_list(path: str | os.PathLike, *, what: str, items: str) -> list:
    """A JSON file holding a list (of ``items``: a ``what``), read as hostile input: every
    failure is one ParameterError naming the file."""
    path = Path(path)
    data = read_limited(path, limit=MAX_SCRIPT_BYTES, what=what)
    try:
        script = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ParameterError(f"{path}: not a text file ({e})") from e
    except json.JSONDecodeError as e:
        raise ParameterError(f"{path}: not valid JSON: {e.msg} at line {e.lineno} column "
                             f"{e.colno}") from e
    except (RecursionError, ValueError) as e:  # nesting; integers of thousands of digits
        raise ParameterError(f"{path}: not a {what} ({str(e) or 'nested too deeply'})") \
            from e
    if not isinstance(script, list):
        raise ParameterError(f"{path}: a {what} is a JSON list of {items}")
    return script
