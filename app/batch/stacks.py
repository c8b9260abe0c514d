"""What a batch paints: each file alone, or short files of one shape stacked as one
document holding all their channels where that gives each the bits it gets alone;
and the check of a batch's settings on a probe before any file.
"""

import dataclasses
import time

import numpy as np
import torch

from app.batch.jobs import STACK_SECONDS, Settings
from app.session.editor import Editor, ScriptRepair, ScriptStroke, checked_script
from app.session.script_edits import ScriptEdit
from engine.io.audio import Audio
from engine.model.document import Document

PROBE_SECONDS = 2.0  # check_settings' probe: at most this long
PROBE_TONES = 32  # steady tones in the probe, at most
_SAME_BITS: dict[tuple, bool] = {}  # a shape of stack: whether stacked gave the bits of alone


def paint_audio(audio: Audio, settings: Settings) -> np.ndarray:
    """The strokes painted on ``audio``; float32 ``[ch, n]``. What was painted other
    than asked (a stroke clipped to a shorter file) joins ``audio.notes``; the markers
    of ``audio.metadata`` follow a time edit."""
    editor = Editor(Document(audio, **settings.analysis), history_limit=0)
    editor.run_script(settings.strokes)
    audio.notes.extend(editor.warnings)
    audio.metadata.markers[:] = editor.doc.audio.metadata.markers
    wave = editor.audio()
    editor.close()  # the documents and their listeners refer to each other: let them go
    return wave


def paint_many(audios: list[Audio], settings: Settings) -> list[np.ndarray | Exception]:
    """:func:`paint_audio` of each (or the error it raised). With ``settings.stacks``,
    each run of files of one rate and length, at most STACK_SECONDS long, is painted as
    one document holding all their channels: the strokes' work is done once for up to
    ``settings.stack`` files, to the same bits as painting each alone (check_settings
    tries it on a probe, :func:`_paint_stack` on the first stack of each shape). A
    stack the device has no memory for is halved, and so are the batch's stacks from
    then on; if a stack fails otherwise, its files are painted one by one."""
    waves: list = []
    i = 0
    while i < len(audios):
        j = i + 1
        while settings.stacks and j < min(len(audios), i + settings.stack) and \
                stackable(audios[i], audios[j]):
            j += 1
        waves.extend(_paint_stack(audios[i:j], settings))
        i = j
    return waves


def stackable(a: Audio, b: Audio) -> bool:
    return a.sample_rate == b.sample_rate and a.frames == b.frames and \
        a.duration <= STACK_SECONDS


def _paint_stack(audios: list[Audio], settings: Settings) -> list:
    """Paint files as one document, the first time for each shape of stack (rates,
    lengths, channels) also one by one: stacks of that shape go on only if the bits
    agree (``_SAME_BITS``, per process: a convolution's sums can depend on the
    document's size)."""
    key = (repr(settings.strokes), repr(settings.analysis), audios[0].sample_rate,
           audios[0].frames, tuple(a.channels for a in audios))
    if len(audios) == 1 or _SAME_BITS.get(key) is False:
        return _paint_each(audios, settings)
    stack = Audio(np.concatenate([a.samples for a in audios]), audios[0].sample_rate)
    try:
        waves = np.split(paint_audio(stack, settings),
                         np.cumsum([a.channels for a in audios])[:-1])
    except torch.OutOfMemoryError:  # half as many at once, from now on, and go on
        settings.stack = min(settings.stack, max(1, len(audios) // 2))
        for a in audios:
            a.notes.append(f"out of memory on {settings.analysis.get('device') or 'the device'} "
                           f"painting {len(audios)} files at once: {settings.stack} at once "
                           "from then on")
        return paint_many(audios, settings)
    except Exception:  # noqa: BLE001 - painted alone, each file gets its own error
        return _paint_each(audios, settings)
    if key not in _SAME_BITS:
        alone = _paint_each(audios, settings)  # (and their notes)
        _SAME_BITS[key] = all(isinstance(a, np.ndarray) and np.array_equal(a, w)
                              for a, w in zip(alone, waves, strict=True))
        return alone
    for a in audios:
        a.notes.extend(stack.notes)
    return waves


def _paint_each(audios: list[Audio], settings: Settings) -> list:
    waves = []
    for a in audios:
        try:
            waves.append(paint_audio(a, settings))
        except Exception as e:  # noqa: BLE001 - recorded, the batch goes on
            waves.append(e)
    return waves


def check_settings(settings: Settings) -> None:
    """Check the stroke script (:func:`app.session.editor.checked_script`, as ``apply`` does)
    and paint it on a short probe: a bad script, preset or analysis setting raises
    here, once, instead of failing every file of the batch. Then decide
    ``settings.stacks``: whether two files painted stacked give the bits each gives
    alone (not when a stroke names a channel, or a brush weighs the channels
    together, as the steady repairs do, or the transform's sums depend on the
    channel count). The probe is at most PROBE_SECONDS long, strokes past it clipped
    to it as on a short file, so its cost does not grow with how far they reach;
    :func:`_paint_stack` checks the first stack of each shape of real files again."""
    rate = 44100
    settings.stacks = False
    checked = checked_script(settings.strokes)
    pair = _stack_probe([s for s in checked if isinstance(s, ScriptStroke)], rate)
    # a repair step's region and profile are checked on each file: the probe is shorter
    # (and an edit step's times, which the probe may not reach, on each file alone)
    probe = dataclasses.replace(settings, strokes=[
        {k: v for k, v in spec.items() if k not in ("start", "end", "profile")}
        if isinstance(step, ScriptRepair) else spec
        for spec, step in zip(settings.strokes, checked, strict=True)
        if not isinstance(step, ScriptEdit)])
    alone = [paint_audio(Audio(x, rate), probe) for x in pair]
    if any(isinstance(s, ScriptRepair | ScriptEdit) for s in checked):
        return  # a repair learns from the whole file (a hum, a noise profile): never stacked
    stacked = paint_audio(Audio(np.concatenate(pair), rate), settings)
    settings.stacks = np.array_equal(np.concatenate(alone), stacked)


def _stack_probe(strokes: list[ScriptStroke], rate: int) -> list[np.ndarray]:
    """Two takes as long as the strokes reach (at most PROBE_SECONDS), with as many
    channels as the strokes name: noise, and steady tones at the strokes' frequencies
    (at most PROBE_TONES of them) in the first, far from them in the second."""
    points = [p for s in strokes for p in s.points]
    seconds = min(PROBE_SECONDS, max([1.0] + [p.time + 0.5 for p in points]))
    hz = sorted({min(p.freq, rate / 2) for p in points} or {1000.0})
    hz = [hz[i] for i in np.linspace(0, len(hz) - 1, min(len(hz), PROBE_TONES)).astype(int)]
    channels = 1 + max([0] + [s.channel for s in strokes if s.channel is not None])
    t = np.arange(int(seconds * rate)) / rate
    rng = np.random.default_rng(0)
    takes = []
    for shift in (1.0, 2.9):
        x = 0.05 * rng.standard_normal((channels, len(t)))
        for f in hz:
            f = f * shift if f * shift < rate / 2 else f / shift
            x += 0.3 / len(hz) * np.sin(2 * np.pi * f * t)
        takes.append(x.astype(np.float32))
    return takes


def paint_items(items: list[tuple], settings: Settings) -> list[tuple]:
    """Decoded ``(job, audio, timer)`` items painted (:func:`paint_many`):
    ``(job, audio or the error painting raised, wave, timer)``; a stack's time is
    shared among its files."""
    if not items:
        return []
    t0 = time.perf_counter()
    waves = paint_many([audio for _, audio, _ in items], settings)
    share = (time.perf_counter() - t0) / len(items)
    out = []
    for (job, audio, timer), wave in zip(items, waves, strict=True):
        timer.add("paint", share)
        out.append((job, wave, None, timer) if isinstance(wave, Exception)
                   else (job, audio, wave, timer))
    return out
