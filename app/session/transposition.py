"""Cells moved in frequency and stretched in time as a phase vocoder with identity
phase locking does it (Laroche & Dolson 1999), on any transform whose coefficients
keep absolute phase (a steady sinusoid at ``f`` advances ``2 pi f hop / sr`` a frame).

Each frame's peaks are found; every bin belongs to its nearest peak. A peak's
frequency is its instantaneous frequency (the phase advance from the frame before);
its region of bins is translated, as a whole, by the distance in bins between that
frequency and the new one (a fractional distance through a Lanczos kernel), and
resampled to the width a tone's lobe has there (``Transform.resolution_hz``), so a
transposed tone is the tone the transform would give at its new pitch: on a
short-time Fourier transform lobes are as wide in bins everywhere, on the constant-Q
in its constant-Q part, and wider below it. Phases are re-accumulated from the first
frame at the new frequency, and each bin keeps its phase relative to its peak
(both measured about the frame's centre: :func:`centre_phase`). Stretching in time
interpolates magnitudes between frames and accumulates the phase advance of the
frame the position falls in."""

import math

import torch

from engine.transforms.transform import Transform
from engine.unmix import one_thread

LANCZOS_TAPS = 5  # taps each side of the kernel that moves cells by a fraction of a bin
SILENT = 1e-7  # cells this far below the loudest are not moved (their frequency is noise)
MAX_SCALE = 4.0  # the most a lobe is widened or narrowed by (constant-Q: below its Q part)
OVERSAMPLE = 8  # positions a bin in the table of a tone's response
COMB = 4  # bins between the tones measured at once (their lobes barely touch)


def moved(cells: torch.Tensor, *, transform: Transform, bin0: int, ratio: float = 1.0,
          shift_hz: float = 0.0, stretch: float = 1.0) -> tuple[int, torch.Tensor]:
    """``cells``: complex ``[ch, bins, frames]``, bins ``bin0 ..`` of ``transform``'s.
    Returns the first bin and the cells of the content at ``f * ratio + shift_hz`` and
    ``stretch`` times as long (complex64, on the CPU; what falls off the axis's ends is
    dropped). On one torch thread: a region's arrays are small, and a second thread
    took 1.1 s against 37 ms for 1 s x 1 kHz on the constant-Q (2 cores, load 2.2)."""
    if ratio == 1.0 and shift_hz == 0.0 and stretch == 1.0:
        return bin0, cells.cpu().clone()
    with one_thread(torch.device("cpu")):  # small arrays: a second thread costs more
        return _moved(cells, transform, bin0, ratio, shift_hz, stretch)


def _moved(cells: torch.Tensor, transform: Transform, bin0: int, ratio: float,
           shift_hz: float, stretch: float) -> tuple[int, torch.Tensor]:
    hz, centred = transform.bin_frequencies(), centre_phase(transform)
    hop, sample_rate = transform.hop, transform.sample_rate
    turn = torch.polar(torch.ones_like(centred), -centred)  # phases about the frame's centre
    x = cells.cpu().to(torch.complex128) * turn[bin0:bin0 + cells.shape[1], None]
    mag, ph = x.abs(), x.angle()
    advance = 2 * math.pi * hop / sample_rate  # radians a frame per Hz
    centre = hz[bin0:bin0 + x.shape[1]].to(torch.float64)[:, None]
    step = ph[..., 1:] - ph[..., :-1]
    step = torch.cat([step[..., :1], step], -1) if x.shape[-1] > 1 else centre * advance
    inst = centre + _princarg(step - centre * advance) / advance  # Hz, per cell
    frames = x.shape[-1]
    out_frames = max(1, round(frames * stretch))
    pos = (torch.arange(out_frames, dtype=torch.float64) / stretch).clamp(max=frames - 1)
    i0 = pos.floor().long()
    a = pos - i0
    i1 = (i0 + 1).clamp(max=frames - 1)
    mag = mag[..., i0] * (1 - a) + mag[..., i1] * a
    ref = ph[..., pos.round().long()]
    old = inst[..., i1]
    new = old * ratio + shift_hz
    accumulated = ph[..., :1] + torch.cumsum(
        torch.cat([torch.zeros_like(new[..., :1]), new[..., 1:] * advance], -1), -1)
    peak = _nearest_peak(mag)
    rotation = torch.gather(accumulated - ref, 1, peak)
    out = torch.polar(mag, ref + rotation)
    if ratio == 1.0 and shift_hz == 0.0:
        first = bin0
    else:
        # a peak's lobe: moved from its frequency to the new one, widened or narrowed
        # as the lobes at its bin and where its bin's centre goes (steady for noise,
        # whose instantaneous frequencies scatter)
        width = _lobe_bins(transform)
        rows = centre[:, 0]
        scale = (_at(width, _position(hz, rows * ratio + shift_hz)) /
                 width[bin0:bin0 + len(rows)]).clamp(1 / MAX_SCALE, MAX_SCALE)
        at, to = _position(hz, old), _position(hz, new)
        here = torch.arange(bin0, bin0 + x.shape[1], dtype=torch.float64)[None, :, None]
        scale = scale[peak]
        start, to = (torch.gather(v, 1, peak) for v in (at, to))
        target = to + (here - start) * scale
        first, moved_once = _splatted(out, target, scale, len(hz))
        # each peak's cell made what a tone's holds there: where lobes are narrower
        # than a bin (the constant-Q's from 1 to 2.5 kHz) interpolation cannot say it
        held = _at(_tone_response(transform), torch.stack([start, to]) * OVERSAMPLE)
        top = ((to + 0.5).floor().long() - first).clamp(0, max(0, moved_once.shape[1] - 1))
        made = torch.gather(moved_once.abs(), 1, top) if moved_once.shape[1] else top * 0.0
        want = torch.gather(mag, 1, peak) * held[1] / held[0]
        gain = torch.where(made > 0, want / made, 1.0).nan_to_num(1.0).clamp(1 / 4, 4)
        first, out = _splatted(out * gain, target, scale, len(hz))
    back = turn[first:first + out.shape[1], None].conj()
    return first, (out * back).to(torch.complex64)


def centre_phase(transform: Transform) -> torch.Tensor:
    """Each bin's phase for an impulse at its frame's centre (float64 ``[bins]``):
    what a bin's phase is measured from. A short-time Fourier frame starts half a
    window before its centre (``pi k`` in bin ``k``); a constant-Q frame is centred
    (zero). Taken out, a tone's bins share its phase, so its lobe can be moved by a
    fraction of a bin."""
    key = (repr(transform), transform.sample_rate)
    if key not in _centres:
        frame = math.ceil(transform.reach / transform.hop) + 1
        impulse = torch.zeros((1, frame * transform.hop + transform.reach + 1))
        impulse[0, frame * transform.hop] = 1.0
        response = transform.to("cpu").forward_frames(impulse, frame, frame + 1)[0, :, 0]
        _centres[key] = response.to(torch.complex128).angle()
    return _centres[key]


_centres: dict[tuple[str, int], torch.Tensor] = {}
_widths: dict[tuple[str, int], torch.Tensor] = {}
_responses: dict[tuple[str, int], torch.Tensor] = {}


def _princarg(phase: torch.Tensor) -> torch.Tensor:
    return torch.remainder(phase + math.pi, 2 * math.pi) - math.pi


def _nearest_peak(mag: torch.Tensor) -> torch.Tensor:
    """For each cell of ``[ch, bins, frames]``, the bin of the nearest local maximum
    of its frame (itself where the frame has none: silence)."""
    bins = mag.shape[1]
    low = torch.full_like(mag[:, :1], -1.0)
    below = torch.cat([low, mag[:, :-1]], 1)
    above = torch.cat([mag[:, 1:], low], 1)
    is_peak = (mag > below) & (mag >= above)
    index = torch.arange(bins)[None, :, None].expand_as(mag)
    prev = torch.where(is_peak, index, -1).cummax(1).values
    nxt = torch.where(is_peak, index, 2 * bins).flip(1).cummin(1).values.flip(1)
    use_prev = (prev >= 0) & ((index - prev <= nxt - index) | (nxt >= bins))
    nearest = torch.where(use_prev, prev, nxt)
    return torch.where(nearest >= bins, index, nearest)


def _position(hz: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    """Fractional bin of each frequency in ``f`` on the axis of bin centres ``hz``
    (linear between neighbouring centres, extended past the ends)."""
    k = torch.searchsorted(hz, f.contiguous()).clamp(1, len(hz) - 1)
    lo, hi = hz[k - 1], hz[k]
    return (k - 1) + (f - lo) / (hi - lo)


def _splatted(values: torch.Tensor, target: torch.Tensor, scale: torch.Tensor,
              n_bins: int) -> tuple[int, torch.Tensor]:
    """Each cell of ``values`` (``[ch, bins, frames]``) added at its fractional bin
    ``target`` through a Lanczos kernel ``scale`` bins wide (its neighbours in the
    source land ``scale`` bins away): every bin reached is interpolated from the cells
    about it, so a lobe resampled at its new width keeps its height. Cells below
    ``SILENT`` of the loudest are left out (their frequency is noise). The first bin
    and the cells of the bins reached."""
    channels, _, frames = values.shape
    mag = values.abs()
    keep = mag > SILENT * mag.max()
    c, _, j = torch.nonzero(keep, as_tuple=True)
    values, target, scale = values[keep], target[keep], scale[keep]
    reach = math.ceil(LANCZOS_TAPS * max(float(scale.max()), 1.0)) if len(values) else 0
    base = target.floor()
    first = max(0, int(base.min()) - reach + 1) if len(values) else 0
    size = max(0, min(n_bins, int(base.max()) + reach + 1) - first) if len(values) else 0
    if size == 0:  # silence, or all of it beyond the axis
        return first, torch.zeros((channels, 0, frames), dtype=torch.complex64)
    taps = range(1 - reach, reach + 1)
    target, scale = (v.float() for v in (target - base, scale))
    weights = [_lanczos((target - q) / scale) for q in taps]
    # spread over one bin or more: each cell's weights made to add up to its scale
    # exactly (a whole-bin move is a copy); narrower, they interpolate as they are
    norm = torch.where(scale >= 1, scale / sum(weights), 1.0)
    parts = torch.view_as_real(values.to(torch.complex64))  # [cells, 2]
    out = torch.zeros((channels * size * frames, 2))
    row = base.long() - first
    cell = c * (size * frames) + j
    for q, w in zip(taps, weights, strict=True):
        k = row + q
        w = w * norm * ((k >= 0) & (k < size))
        out.index_add_(0, cell + k.clamp(0, size - 1) * frames, parts * w[:, None])
    return first, torch.view_as_complex(out).reshape(channels, size, frames)


def _tone_response(transform: Transform) -> torch.Tensor:
    """What the nearest bin holds of a unit cosine at every ``1 / OVERSAMPLE`` of a bin
    (float64 ``[bins * OVERSAMPLE]``), measured once per analysis: ``COMB`` bins apart,
    a channel of tones each offset."""
    key = (repr(transform), transform.sample_rate)
    if key not in _responses:
        t = transform.to("cpu")
        pos = torch.arange(t.n_bins * OVERSAMPLE, dtype=torch.float64) / OVERSAMPLE
        hz = torch.tensor([t.hz_of(float(p)) for p in pos], dtype=torch.float64)
        frame = math.ceil(t.reach / t.hop) + 1
        n = torch.arange(-frame * t.hop, t.reach + 1, dtype=torch.float64)
        groups = (pos.long() % COMB) * OVERSAMPLE + torch.arange(len(pos)) % OVERSAMPLE
        x = torch.stack([torch.cos(2 * math.pi / t.sample_rate * hz[groups == g, None] * n)
                         .sum(0) for g in range(COMB * OVERSAMPLE)])
        cells = t.forward_frames(x.float(), frame, frame + 1)[..., 0].abs().double()
        nearest = (pos + 0.5).long().clamp(max=t.n_bins - 1)
        _responses[key] = cells[groups, nearest]
    return _responses[key]


def _lobe_bins(transform: Transform) -> torch.Tensor:
    """How many bins a tone's lobe spans at each bin (float64 ``[bins]``): the
    transform's resolution over the spacing of its bins there."""
    key = (repr(transform), transform.sample_rate)
    if key not in _widths:
        hz = transform.bin_frequencies()
        spacing = torch.gradient(hz)[0]
        res = torch.tensor([transform.resolution_hz(float(f)) for f in hz], dtype=torch.float64)
        _widths[key] = res / spacing
    return _widths[key]


def _at(table: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """``table`` (per bin) at fractional bins ``pos``, linearly, held past its ends."""
    pos = pos.clamp(0, len(table) - 1)
    k = pos.floor().long().clamp(max=len(table) - 2)
    a = pos - k
    return table[k] * (1 - a) + table[k + 1] * a


def _lanczos(x: torch.Tensor) -> torch.Tensor:
    return torch.sinc(x) * torch.sinc(x / LANCZOS_TAPS) * (x.abs() < LANCZOS_TAPS)
