"""Selections whose bands start and end at their own times (a lasso, a feathered
or an inverted selection) filled on a constant-Q document: measured in dB,
band by band, against the take before the fill (brushes.locality.gate)."""

import numpy as np
import pytest
import torch

from app.session.selection import Selection, fill
from engine.io.audio import Audio
from engine.model.document import Document
from engine.model.history import History
from engine.model.resynth import Resynthesizer

SR = 44100
SLANTED = ((1.0, 300.0), (3.6, 300.0), (4.0, 600.0), (1.4, 600.0))  # 0.4 s per 300 Hz
RUN_440 = (1.0 + 0.4 * 140 / 300, 3.6 + 0.4 * 140 / 300)  # where it holds 440 Hz


def tones(*hz: float, seconds: float = 6.0) -> np.ndarray:
    t = np.arange(round(seconds * SR)) / SR
    return sum(0.2 * np.sin(2 * np.pi * f * t) for f in hz)


def filled(x: np.ndarray, selection: Selection, gain_db: float = -60.0):
    """The audio before and after filling ``selection`` of mono ``x`` with the gain
    brush, as the GUI's Fill does; the document and its history (one step)."""
    doc = Document(Audio(x[None].astype(np.float32), SR), transform="cq", device="cpu")
    synth, history = Resynthesizer(doc), History(doc)
    before = synth.full().numpy()[0].copy()
    fill(doc, selection, "gain", params={"gain_db": gain_db}, history=history)
    return before, synth.waveform()[0].copy(), doc, history


def levels(signal: np.ndarray, reference: np.ndarray, times) -> list[float]:
    """``signal`` over 20 ms from each of ``times``, in dB of ``reference`` there."""
    out = []
    for a in times:
        part = slice(round(a * SR), round((a + 0.02) * SR))
        out.append(10 * np.log10(np.mean(signal[part] ** 2) / np.mean(reference[part] ** 2)
                                 + 1e-30))
    return out


def band(x: np.ndarray, hz: float, width: float = 30.0) -> np.ndarray:
    """``x`` within ``width`` Hz of ``hz`` (a brick wall in one whole-signal FFT)."""
    spectrum = np.fft.rfft(x)
    freqs = np.fft.rfftfreq(len(x), 1 / SR)
    return np.fft.irfft(np.where(np.abs(freqs - hz) <= width, spectrum, 0), len(x))


def test_a_filled_lasso_on_constant_q_takes_a_tone_down_to_its_own_edges():
    """Each band of a lasso starts and ends at its own time. Filled where it was, a
    -60 dB lasso left a 440 Hz tone inside it at -7 to -18 dB within 0.1 s of its
    edges (the cells beyond it sound inside), and changed it by -10 dB outside (the
    cells inside it sound beyond). Now each band is painted over the slices that
    sound in its time and heard only in it."""
    before, after, _, _ = filled(tones(440.0), Selection("lasso", SLANTED))
    start, end = RUN_440
    inside = levels(after, before, np.arange(start + 0.02, end - 0.04, 0.02))
    assert max(inside[:5] + inside[-5:]) < -55  # measured -59.5 to -60.9
    assert max(inside) < -55
    change = after - before
    near = levels(change, before, [*np.arange(start - 0.3, start - 0.04, 0.02),
                                   *np.arange(end + 0.04, end + 0.3, 0.02)])
    assert max(near) < -50  # measured -57 at worst (a band below 440 Hz erased there)
    far = levels(change, before, [*np.arange(0.0, start - 0.3, 0.02),
                                  *np.arange(end + 0.3, 5.98, 0.02)])
    assert max(far) < -100


@pytest.mark.parametrize("hz", [320.0, 440.0])
def test_an_inverted_feathered_rectangle_on_constant_q_keeps_what_it_holds(hz):
    """Erasing all but 1-4 s x 300-600 Hz (feathered 50 ms) at -60 dB changed a tone
    kept inside by -15 dB (320 Hz) and -9 dB (440 Hz) near its time edges and left
    it at -6 dB outside them. A gate in a short-time Fourier domain kept the 440 Hz
    tone but erased the 320 Hz one (its bins are within a main lobe of the erased
    bands below 300 Hz); weighing each group of bands alone keeps both."""
    selection = Selection.rect(1.0, 4.0, f_lo=300.0, f_hi=600.0, feather_ms=50.0, inverted=True)
    before, after, doc, history = filled(tones(hz), selection)
    kept = levels(after - before, before, np.arange(1.1, 3.88, 0.02))
    assert max(kept) < -45  # measured -49 dB (320 Hz), -73 dB (440 Hz)
    erased = levels(after, before, [*np.arange(0.04, 0.88, 0.02), *np.arange(4.1, 5.98, 0.02)])
    assert max(erased) < -55  # measured -60 dB from 40 ms after the tone's onset
    assert len(history.steps) == 1


def test_an_inverted_harmonic_selection_on_constant_q_keeps_its_partials():
    """All but a 440 Hz fundamental and its second partial (50 cents each side) over
    1-4 s, erased at -60 dB: the partials kept changed by -9 and -15 dB (filled
    where it was). Now by -40 dB: what the tones have in the bands just beyond 50
    cents, which the selection erases. The 660 Hz tone between them is erased."""
    selection = Selection("harmonic", ((1.0, 440.0), (4.0, 440.0)), partials=2,
                          inverted=True)
    before, after, _, _ = filled(tones(440.0, 660.0, 880.0), selection)
    times = np.arange(1.1, 3.88, 0.02)
    for hz in (440.0, 880.0):
        kept = levels(band(after - before, hz), band(before, hz), times)
        assert max(kept) < -35, hz  # measured -39.6 and -39.7 dB
    erased = levels(band(after, 660.0), band(before, 660.0), times)
    assert max(erased) < -55  # measured -59.6 dB


def test_a_lasso_fill_on_constant_q_undoes_to_every_cell():
    """The fill paints beyond the lasso and corrects what it hears: one step, and
    undo gives every cell back."""
    doc = Document(Audio(tones(440.0, seconds=3.0)[None].astype(np.float32), SR),
                   transform="cq", device="cpu")
    history = History(doc)
    cells = doc.coefficients(0, doc.n_frames).clone()
    fill(doc, Selection("lasso", ((0.5, 300.0), (2.0, 350.0), (1.5, 900.0))), "gain",
         params={"gain_db": -60.0}, history=history)
    assert not torch.equal(doc.coefficients(0, doc.n_frames), cells)
    assert len(history.steps) == 1
    history.undo()
    assert torch.equal(doc.coefficients(0, doc.n_frames), cells)


@pytest.mark.slow
def test_a_gated_fill_done_in_parts_equals_it_done_whole(monkeypatch):
    """The end of a lasso's fill in parts of the stroke's span (so the GUI never waits
    on a long one) gives the whole's cells, to float rounding: a part decides which
    groups of bands are heard at one weight all through it."""
    import brushes.locality.confine as confine

    rng = np.random.default_rng(3)
    x = (0.1 * rng.standard_normal((1, 5 * SR))).astype(np.float32)
    lasso = Selection("lasso", ((1.0, 300.0), (3.6, 200.0), (4.0, 3000.0), (1.4, 900.0)),
                      inverted=True)

    def painted(part_samples: int) -> torch.Tensor:
        monkeypatch.setattr(confine, "PART_SAMPLES", part_samples)
        doc = Document(Audio(x, SR), transform="cq", device="cpu")
        fill(doc, lasso, "gain", params={"gain_db": -20.0})
        return doc.coefficients(0, doc.n_frames).clone()

    whole, parts = painted(1 << 30), painted(40000)
    full_scale = 64.0  # a unit cosine's coefficient (hop / 2)
    assert (whole - parts).abs().max() < 1e-6 * full_scale  # measured 1e-7 of it
