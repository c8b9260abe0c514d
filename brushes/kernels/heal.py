"""Heal: repair what is under the brush from what surrounds it.

- ``attenuate`` (the default): per cell, bring only what stands above the
  surrounding level down to it, keeping the rest and its phase; the level is
  learnt outside the stroke (see engine.repair.attenuate).
- ``steady``: the steady tones under the stroke (a hum, a whistle, a bleep)
  are found, fitted and subtracted from the audio itself (see engine.repair.steady);
  what does not stay put, speech or music in the same bins, stays. A tone that
  still stands out along the stroke after that (one that glides, or a whistle's
  vibrato, which a steady fit takes only part of) is followed and subtracted
  from what is left (engine.repair.track).
- ``replace``: magnitude interpolated across the brush from both sides in
  time, phase continuing the left side's advance (steady partials run on).
- ``declick``: a time-domain repair of the few samples of a click under the
  brush (see engine.repair.declick), written back as the coefficients of the
  frames those samples reach, so the view, resynthesis and undo stay exact.

``attenuate`` and ``steady`` need the whole stroke: they are applied when it
ends (:meth:`Heal.finishing`); until then a dab only records what it covers.
"""

import math
from collections.abc import Generator

import numpy as np
import torch

from brushes.dab import radius_hz
from brushes.kernels.kernel import DabContext, Kernel, blend_complex, blend_magnitude
from brushes.locality.confine import confining, covered_frames, frame_parts
from brushes.params import Param
from engine.progress import off_thread
from engine.region import Rect
from engine.repair import attenuate, declick, guard, steady

TRACK_MIN_SECONDS = 0.1  # a shorter stroke gives no track to follow
TRACK_PAD_SECONDS = 0.05  # the tone's fade beyond the stroke's ends goes with it
HUM_LEFT_RATIO = 1.5  # a hum is followed where the steady fit leaves this much more of it
TONE_TOLERANCE_HZ = 0.5  # neighbouring bins whose steady partials agree this well are one tone
NO_CLICK = ("no click found under the stroke, nothing changed: paint across the click itself "
            "(zoom in: a click is a thin vertical line), or raise the brush's radius_ms")
NO_TONE = ("no steady tone under the stroke, nothing removed: paint along more of the tone "
           "(a tone is told from noise over about 15 / its bandwidth: 0.4 s at 2.5 kHz)")


class Heal(Kernel):
    name = "heal"
    help = ("Repair from the surroundings: attenuate what stands out (coughs, thumps), "
            "subtract steady tones (whistles, hum), replace by interpolation, or declick "
            "in the time domain.")
    params = (Param("mode", "attenuate", choices=("attenuate", "steady", "replace", "declick"),
                    help="attenuate: only what stands above its surroundings comes down to "
                         "them; steady: subtract the steady tone under the stroke (hum, "
                         "whistle); replace: interpolate across in time; declick: re-estimate "
                         "the samples of a click under the brush"),
              Param("direction", "auto", choices=("auto", "time", "frequency", "both"),
                    help="attenuate: learn the level from before/after (time), from "
                         "below/above (frequency), the lower of both, or, per cell, across "
                         "the stroke's local shape (auto)"),
              Param("context_ms", 40.0, 5.0, 2000.0, "ms",
                    "how much audio on each side the repair is learnt from"))
    batchable = False

    def region(self, surface, rect: Rect, params: dict) -> Rect:
        if params["mode"] != "declick":
            return rect
        t = surface.transform  # every bin of every frame that the brush's samples reach
        s0, s1 = t.samples_affected(rect.frame0, rect.frame1, surface.length)
        return Rect(0, surface.n_bins, *t.frames_needed(s0, s1, surface.length))

    def effect(self, ctx: DabContext):
        mode = ctx.params["mode"]
        if mode == "declick":
            return self._declick(ctx)
        if mode == "replace":
            return self._replace(ctx)
        if mode == "steady":  # which lines were painted: one tone is removed along each
            dab = ctx.dabs[0]
            radius = radius_hz(dab.params, dab.freq)
            reach = max(radius, ctx.surface.transform.resolution_hz(dab.freq))
            state = ctx.canvas.state
            state.painted.add((round(dab.freq, 3), reach))
            if "harmonics" in dab.params:  # a harmonic brush's comb: its lines are one hum's
                state.comb.append((dab.time, dab.freq, radius))
            else:
                state.track.append((dab.time, dab.freq, reach))
        return None  # attenuate, steady: at the stroke's end

    # -- attenuate, steady --------------------------------------------------------------
    def finishing(self, surface, canvas, params: dict) -> Generator[None, None, Rect | None]:
        """The repair of attenuate and steady, worked out off the GUI thread (a 20 s
        stroke on constant-Q: 1-2 s); the document is written in the steps."""
        rect, frames = canvas.covered_rect(), covered_frames(canvas)
        if params["mode"] == "declick" and not any(
                v is not None for v in canvas.state.repairs.values()):
            canvas.state.notice = NO_CLICK
            canvas.forget()  # nothing repaired: the stroke is no undo step
            return None
        if params["mode"] not in ("attenuate", "steady") or frames is None:
            return None  # nothing covered (a stroke at opacity 0): nothing to repair
        coverage = canvas.coverage(rect)
        if params["mode"] == "steady":  # its dabs write nothing: all is done here
            removed = yield from off_thread(lambda: _tones_removed(
                surface, canvas, rect, coverage, painted=canvas.state.painted,
                comb=canvas.state.comb, path=canvas.state.track))
            if removed is None:
                canvas.state.notice = NO_TONE
                canvas.forget()  # no tone found: the stroke is no undo step
                return None
            region, coeffs = removed
            return (yield from _written_in_parts(
                surface, canvas, region, lambda cols: coeffs[..., cols]))
        mag, phase = yield from off_thread(
            lambda: _attenuated(surface, canvas, rect, params, coverage))
        written = yield from _written_in_parts(
            surface, canvas, rect, lambda cols: torch.polar(mag[..., cols], phase[..., cols]))
        # heard only within the stroke's time, on any transform: an attenuation's atoms
        # reach half a window (or, on constant-Q, up to its reach) beyond it
        kept = yield from confining(doc=surface, canvas=canvas, rect=rect, frames=frames)
        return written.union(kept)

    # -- replace ----------------------------------------------------------------------
    def _replace(self, ctx: DabContext):
        surface, r = ctx.surface, ctx.rect
        k = max(2, math.ceil(surface.frame_of(ctx.params["context_ms"] / 1000)))
        left = Rect(r.bin0, r.bin1, r.frame0 - k, r.frame0).clip(surface.n_bins, surface.n_frames)
        right = Rect(r.bin0, r.bin1, r.frame1, r.frame1 + k).clip(surface.n_bins, surface.n_frames)
        if left.empty and right.empty:
            return None
        sides = [ctx.canvas.before(s) for s in (left, right) if not s.empty]
        level = [s[0].mean(-1, keepdim=True) for s in sides]
        start, end = level[0], level[-1]
        width = r.frame1 - r.frame0
        t = (torch.arange(width, device=start.device) + 0.5) / width
        mag = start + (end - start) * t
        phase = _continued_phase(surface, r, sides[0] if not left.empty else None, width)
        return blend_complex(ctx, torch.polar(mag, phase))

    # -- declick ------------------------------------------------------------------------
    def _declick(self, ctx: DabContext):
        surface, r = ctx.surface, ctx.rect
        sr, dab = surface.sample_rate, ctx.dabs[0]
        radius = dab.params["radius_ms"] / 1000
        key = (r, round((dab.time - radius) * sr), round((dab.time + radius) * sr))
        done = ctx.canvas.state.repairs
        if key not in done:  # the dabs of a vertical stroke share one repair
            done[key] = self._repaired(ctx, key[1], key[2])
        return done[key]  # None: no click here, nothing written

    def _repaired(self, ctx: DabContext, c0: int, c1: int):
        """Repair the current audio (earlier dabs' repairs included) around samples
        ``[c0, c1)``; the new coefficients of the rect, or None if no click is there."""
        surface, r = ctx.surface, ctx.rect
        wave, start = _resynthesized(surface, ctx.canvas.channel, r.frame0, r.frame1)
        audio = wave.numpy()
        c0, c1 = max(c0 - start, 0), min(c1 - start, audio.shape[-1])
        margin = round(ctx.params["context_ms"] / 1000 * surface.sample_rate)
        w0, w1 = max(0, c0 - margin), min(audio.shape[-1], c1 + margin)
        changed = False
        for channel in audio:
            fixed = declick.repair_click(channel[w0:w1], slice(c0 - w0, c1 - w0),
                                         surface.sample_rate) if c1 > c0 else None
            if fixed is not None:
                channel[w0:w1], changed = fixed, True
        if not changed:
            return None
        return surface.transform.forward_segment(wave.float().to(surface.device), r.frame0,
                                                 r.frame1)


def _written_in_parts(surface, canvas, rect: Rect, coefficients) -> Generator[None, None, Rect]:
    """Write ``coefficients(cols)`` (the new cells of ``rect``'s frame columns ``cols``)
    a run of frames (about 3 s of audio) a step, each run's tiles saved for undo first
    (``rect`` may hold tiles no dab reached); the rect written."""
    written = None
    for fa, fb in frame_parts(surface.transform, rect.frame0, rect.frame1):
        part = Rect(rect.bin0, rect.bin1, fa, fb)
        canvas.touch(part)
        cols = slice(fa - rect.frame0, fb - rect.frame0)
        written = surface.write_complex(part, coefficients(cols), channel=canvas.channel) \
            .union(written)
        yield
    return written


def _resynthesized(surface, channel, frame0: int, frame1: int) -> tuple[torch.Tensor, int]:
    """The current audio that frames ``[frame0, frame1)`` are analysed from (float64
    ``[ch, n]`` on the CPU, zero outside the file) and the sample it starts at."""
    t = surface.transform
    start, stop = t.frame_span(frame0, frame1)
    lo, hi = max(start, 0), min(stop, surface.length)
    fa, fb = t.frames_needed(lo, hi, surface.length)
    coeffs = surface.read_complex(Rect(0, surface.n_bins, fa, fb), channel)
    wave = torch.zeros(coeffs.shape[0], stop - start, dtype=torch.float64)
    wave[:, lo - start:hi - start] = t.inverse_span(coeffs, fa, sample0=lo, sample1=hi,
                                                    length=surface.length).double().cpu()
    return wave, start


def _tones_removed(surface, canvas, rect: Rect, coverage: torch.Tensor, *, painted: set,
                   comb: list, path: list) -> tuple[Rect, torch.Tensor] | None:
    """The steady tones along the painted lines subtracted from the audio, or a tone
    followed along the stroke's ``path`` and subtracted (engine.repair.track): the
    followed one where the steady fit leaves a tone the follower still finds along the
    path and its own removal leaves less (a whistle's vibrato, of which a steady fit
    takes only part); on a harmonic brush, the hum followed as de-hum follows one
    (:func:`_hum_removed`) where the steady fit leaves clearly more of it (a drifting
    hum; a steady one the steady fit takes with less of what sounds under it). The
    rect of frames to rewrite (every bin of them) and its new coefficients, or None
    when none found a tone. Reads only."""
    from engine.repair import dehum, track  # here: they load scipy.ndimage (0.2-0.5 s a start)

    t, sr = surface.transform, surface.sample_rate
    groups = _steady_tones(surface, canvas, rect, coverage, painted, comb)
    spans = {}
    if groups:
        frames = (min(g[0].frame0 for g in groups), max(g[0].frame1 for g in groups))
        spans["steady"] = t.frames_needed(
            max(round(t.seconds_of(frames[0]) * sr), 0),
            min(round(t.seconds_of(frames[1] - 1) * sr) + 1, surface.length), surface.length)
    if comb and groups:  # a harmonic brush's: a hum, followed where de-hum finds it
        times = [time for time, _, _ in comb]
        n = surface.length
        spans["hum"] = t.frames_needed(max(0, round(min(times) * sr)),
                                       min(n, round(max(times) * sr) + 1), n)
    points = sorted(path)
    if len(points) >= 2 and points[-1][0] - points[0][0] >= TRACK_MIN_SECONDS:
        spans["followed"] = t.frames_needed(
            max(0, round((points[0][0] - TRACK_PAD_SECONDS) * sr)),
            min(surface.length, round((points[-1][0] + TRACK_PAD_SECONDS) * sr)), surface.length)
    if not spans:
        return None
    frame0, frame1 = min(a for a, _ in spans.values()), max(b for _, b in spans.values())
    wave, start = _resynthesized(surface, canvas.channel, frame0, frame1)
    x = wave.numpy()
    removals = {}
    if groups:
        removals["steady"] = wave.clone()
        for g in groups:
            ab = steady.fit(g, t, surface.length)
            removals["steady"] -= steady.waveform(g, ab, t, audio=wave, sample0=start)
        removals["steady"] = removals["steady"].numpy()
    if "hum" in spans:
        hum = _hum_removed(x, sr, comb, [g[0].hz for g in groups])
        if hum is not None and HUM_LEFT_RATIO * dehum.left(hum[0], sr, f0=hum[1], ks=hum[2]) \
                < dehum.left(removals["steady"], sr, f0=hum[1], ks=hum[2]):
            removals = {"hum": hum[0]}
    if "followed" in spans:
        times, freqs, reach = (np.array(v, float) for v in zip(*points, strict=True))
        along = {"path_t": times - start / sr, "path_f": freqs, "reach": reach}
        followed = track.follow(x, sr, **along)
        if followed is not None and (
                "steady" not in removals or
                followed.left_in(followed.subtracted) <
                followed.left_in(removals["steady"])):
            removals = {"followed": guard.safe(x, followed.cleaned(), sr, neighbours=2)[0]}
    if not removals:
        return None
    (kind, y), = removals.items()
    a, b = t.frame_span(*spans[kind])  # only the frames of what it removed change
    region = Rect(0, surface.n_bins, *spans[kind])
    return region, t.forward_segment(torch.from_numpy(y[:, a - start:b - start]).float()
                                     .to(surface.device), region.frame0, region.frame1)


def _steady_tones(surface, canvas, rect: Rect, coverage: torch.Tensor, painted: set,
                  comb: list) -> list:
    """The steady tone along each painted line (the strongest within the brush's reach
    of it; on a harmonic brush's ``comb``, only tones that are harmonics of one
    fundamental: engine.repair.steady.on_comb), as groups of partials."""
    t = surface.transform
    hz = t.bin_frequencies()[rect.bins]
    span = torch.tensor([t.resolution_hz(float(f)) for f in hz], dtype=torch.float64)
    z = canvas.complex_before(rect)
    partials = steady.find(z, coverage > 0, hz, span_hz=span, frames_per_second=1 / t.seconds_of(1),
                           bin0=rect.bin0,
                           frame0=rect.frame0)
    groups = steady.tones(partials, TONE_TOLERANCE_HZ, 1 / t.seconds_of(1))
    chosen, lines = [], []
    for hz_line, reach in sorted(painted):
        near = [g for g in groups if abs(g[0].hz - hz_line) <= reach and g not in chosen]
        if near:
            chosen.append(max(near, key=lambda g: g[0].power))
            lines.append(hz_line)
    return steady.on_comb(chosen, _harmonic_lines(lines, comb)) if comb and chosen else chosen


def _hum_removed(x: np.ndarray, sr: int, comb: list,
                 steady_hz: list) -> tuple[np.ndarray, float, list[int]] | None:
    """``x`` less the hum whose fundamental a harmonic brush's ``comb`` painted (its
    dabs' (time, Hz, radius)), found within the brush's radius of it and followed as
    de-hum follows one (engine.repair.dehum: its drift tracked, each harmonic held at
    its median level): a steady fit takes a drifting hum's harmonics only in part.
    Only the harmonics that de-hum finds standing out as a series from the bottom and
    the steady fit found on the comb (``steady_hz``, engine.repair.steady.on_comb: a
    bass note near the mains frequency is no hum) are taken. The removal, the
    fundamental and those harmonics' numbers; None where there are none (or the stroke
    is shorter than dehum.MIN_SECONDS)."""
    from engine.repair import dehum

    lowest = min(comb, key=lambda line: line[1])
    lines = {round(hz / lowest[1]) for _, hz, _ in comb}
    found = dehum.find(x.mean(0), sr, fundamental=str(lowest[1]), max_harmonics=max(lines),
                       search_hz=lowest[2])
    if found is None:
        return None
    f0, ks = found
    ks = sorted(set(ks) & {round(hz / f0) for hz in steady_hz})
    if not ks:
        return None
    taken = dehum.removed(x, sr, f0=f0, ks=ks)
    if taken is None:
        return None
    return guard.safe(x, taken, sr, neighbours=2)[0], f0, ks


def _harmonic_lines(lines: list[float], comb: list) -> list[tuple[int, float, float]]:
    """(harmonic number, frequency, radius in Hz) of each painted line of a harmonic
    brush's ``comb`` (its dabs' (time, Hz, radius)): a line is k times the fundamental
    painted at the same time, the lowest of them."""
    fundamental: dict[float, float] = {}
    for time, hz, _ in comb:
        fundamental[time] = min(hz, fundamental.get(time, math.inf))
    known = {round(hz, 3): (max(1, round(hz / fundamental[time])), radius)
             for time, hz, radius in comb}
    return [(known[line][0], line, known[line][1]) for line in lines]


def _attenuated(surface, canvas, rect: Rect, params: dict, coverage: torch.Tensor):
    """Magnitude and phase over ``rect`` after attenuation (brushes.attenuate),
    learnt from the before-stroke state around it, blended by ``coverage``."""
    frame_seconds = surface.transform.seconds_of(1)
    k = attenuate.context_frames(frame_seconds, params["context_ms"])
    wide = rect.grow(rect.bin1 - rect.bin0, k).clip(surface.n_bins, surface.n_frames)
    covered = (canvas.coverage(wide) > 0).cpu().numpy()
    hz = surface.transform.bin_frequencies()[wide.bins].numpy()
    target = attenuate.target(canvas.magnitude_before(wide).cpu().numpy(), covered, hz,
                              frame_seconds=frame_seconds, context_frames=k,
                              direction=params["direction"])
    inner = (slice(None), slice(rect.bin0 - wide.bin0, rect.bin1 - wide.bin0),
             slice(rect.frame0 - wide.frame0, rect.frame1 - wide.frame0))
    mag, phase = canvas.before(rect)
    target = torch.from_numpy(np.ascontiguousarray(target[inner])).to(mag.device)
    return blend_magnitude(mag, target, coverage), phase


def _continued_phase(surface, r: Rect, left, width: int) -> torch.Tensor:
    hz = surface.transform.bin_frequencies()[r.bin0:r.bin1]
    nominal = surface.transform.phase_advance(hz).to(device=surface.device, dtype=torch.float32)
    if left is None or left[1].shape[-1] < 2:
        advance, last = nominal[None, :, None], torch.zeros_like(nominal)[None, :, None]
    else:
        ph = left[1]
        deviation = torch.remainder(ph[..., -1:] - ph[..., -2:-1] - nominal[:, None] + math.pi,
                                    2 * math.pi) - math.pi
        advance, last = nominal[:, None] + deviation, ph[..., -1:]
    steps = torch.arange(1, width + 1, device=surface.device, dtype=torch.float32)
    return last + advance * steps
