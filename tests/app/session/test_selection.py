"""Selections: rectangle, lasso and harmonic masks against independent references
(Qt's polygon test), feathering and inverting, filling with a brush as one undo
step, playing a selection alone, and saving one as JSON."""

import math

import numpy as np
import pytest
import torch
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QPolygonF

from app.session.selection import Selection, fill
from engine.errors import ParameterError
from engine.model.history import History
from engine.model.resynth import masked_audio
from tests.conftest import document, peak_hz

RATE = 16000


def noise_doc(rng, seconds=2.0, channels=1):
    return document((0.1 * rng.standard_normal((channels, int(seconds * RATE)))).astype(
        np.float32), RATE)


def centres(doc, rect):
    hz = np.array([doc.hz_of(b) for b in range(rect.bin0, rect.bin1)])
    t = np.array([doc.transform.seconds_of(f) for f in range(rect.frame0, rect.frame1)])
    return hz, t


STAR = [(0.2 + 0.6 * (0.5 + (0.5 if k % 2 == 0 else 0.2) * math.cos(2 * math.pi * k / 10)),
         3000 + 2500 * (0.5 if k % 2 == 0 else 0.2) * math.sin(2 * math.pi * k / 10))
        for k in range(10)]  # a five-pointed star: not convex


def test_a_lasso_holds_the_cells_qts_polygon_test_holds(rng):
    doc = noise_doc(rng)
    sel = Selection("lasso", tuple(STAR))
    full = doc.full_rect()
    mask = sel.mask(doc, full).numpy()
    polygon = QPolygonF([QPointF(t, hz) for t, hz in STAR])
    hz, t = centres(doc, full)
    expected = np.array([[polygon.containsPoint(QPointF(x, y), Qt.FillRule.OddEvenFill)
                          for x in t] for y in hz])
    np.testing.assert_array_equal(mask == 1, expected)
    assert set(np.unique(mask)) <= {0.0, 1.0} and expected.sum() > 500
    inner = sel.cells(doc)  # the mask over its own cells is the same cells
    np.testing.assert_array_equal(sel.mask(doc).numpy(),
                                  mask[inner.bin0:inner.bin1, inner.frame0:inner.frame1])
    assert mask[:inner.bin0].sum() == 0 and mask[:, inner.frame1:].sum() == 0


def test_a_rectangle_holds_exactly_the_cells_whose_centres_are_inside(rng):
    doc = noise_doc(rng)
    sel = Selection.rect(1.3, 0.5, f_lo=2500.0, f_hi=1000.0)  # corners in any order
    full = doc.full_rect()
    hz, t = centres(doc, full)
    expected = ((hz >= 1000) & (hz <= 2500))[:, None] & ((t >= 0.5) & (t <= 1.3))[None, :]
    np.testing.assert_array_equal(sel.mask(doc, full).numpy() == 1, expected)


def test_a_harmonic_selection_follows_the_fundamental_and_its_partials(rng):
    doc = noise_doc(rng)
    sel = Selection("harmonic", ((0.4, 200.0), (1.6, 300.0)), partials=4, width_cents=50)
    full = doc.full_rect()
    mask = sel.mask(doc, full).numpy()
    hz, t = centres(doc, full)
    for j in np.flatnonzero((t > 0.45) & (t < 1.55)):
        f0 = 200 + 100 * (t[j] - 0.4) / 1.2
        for k in range(1, 5):  # each partial's nearest bin is in
            assert mask[int(np.argmin(np.abs(hz - k * f0))), j] == 1
        far = np.min(np.abs(hz[:, None] - f0 * np.arange(1, 5)[None, :]), axis=1) > \
            max(doc.transform.resolution_hz(1000), 1200 * f0 * (2 ** (50 / 1200) - 1))
        assert mask[far, j].sum() == 0  # nothing away from the partials
        assert mask[hz > 4.5 * f0, j].sum() == 0  # no fifth partial
    assert mask[:, t < 0.39].sum() == 0 and mask[:, t > 1.61].sum() == 0  # while it lasts



@pytest.mark.parametrize("transform", ["stft", "cq"])
def test_a_low_harmonic_selection_is_every_cell_near_a_partial_cell_by_cell(rng, transform):
    """Partials of a low, gliding fundamental overlap (each is at least what the
    transform resolves there): against the definition checked cell by cell."""
    doc = document((0.1 * rng.standard_normal((1, 2 * RATE))).astype(np.float32), RATE,
                   transform=transform)
    sel = Selection("harmonic", ((0.2, 45.0), (1.0, 80.0), (1.8, 60.0)), partials=12,
                    width_cents=300)
    full = doc.full_rect()
    mask = sel.mask(doc, full).numpy()
    hz, t = centres(doc, full)
    times, f0s = sel.path()
    ratio = 2 ** (300 / 1200) - 1
    covers = np.zeros(mask.shape, int)  # how many partials hold each cell
    on_edge = np.zeros(mask.shape, bool)  # exactly on a partial's edge: rounding decides
    for j, x in enumerate(t):
        if not times[0] <= x <= times[-1]:
            continue
        f0 = np.interp(x, times, f0s)
        for k in range(1, 13):
            half = max(k * f0 * ratio, doc.transform.resolution_hz(k * f0))
            covers[:, j] += np.abs(hz - k * f0) <= half
            on_edge[:, j] |= np.abs(np.abs(hz - k * f0) - half) < 1e-9 * half
    np.testing.assert_array_equal((mask == 1)[~on_edge], (covers > 0)[~on_edge])
    assert on_edge.sum() < 10
    assert set(np.unique(mask)) <= {0.0, 1.0}
    assert (covers >= 2).sum() > 100  # the case of the test: partials overlap

def test_feathering_ramps_the_edge_and_inverting_complements(rng):
    doc = noise_doc(rng)
    hard = Selection.rect(0.5, 1.5, f_lo=2000.0, f_hi=4000.0)
    soft = hard.changed(feather_ms=100.0, feather_hz=400.0)
    full = doc.full_rect()
    m = soft.mask(doc, full).numpy()
    hz, t = centres(doc, full)
    row = int(np.argmin(np.abs(hz - 3000)))
    ramp = m[row, (t > 0.3) & (t < 0.7)]
    assert ramp[0] == 0 and ramp[-1] == pytest.approx(1.0, abs=1e-6)
    assert (np.diff(ramp) >= -1e-7).all()  # rises monotonically through the edge
    edge = int(np.argmin(np.abs(t - 0.5)))
    assert 0.3 < m[row, edge] < 0.7  # half way at the drawn edge
    assert m[int(np.argmin(np.abs(hz - 3000))), int(np.argmin(np.abs(t - 1.0)))] == \
        pytest.approx(1.0, abs=1e-6)
    inverted = soft.changed(inverted=True)
    assert inverted.cells(doc) == full
    np.testing.assert_array_equal(inverted.mask(doc).numpy(), 1 - m)


def test_filling_a_selection_is_one_exact_undo_step(rng):
    doc = noise_doc(rng)
    before = doc.coefficients(0, doc.n_frames).clone()
    history = History(doc)
    sel = Selection("lasso", tuple(STAR))
    step = fill(doc, sel, "gain", params={"gain_db": -math.inf}, history=history)
    full = doc.full_rect()
    mask = torch.from_numpy(sel.mask(doc, full).numpy())
    now = doc.coefficients(0, doc.n_frames)[0]
    assert (now[mask == 1] == 0).all()  # erased inside
    assert torch.equal(now[mask == 0], before[0][mask == 0])  # every other cell, bit for bit
    assert step.label == "fill selection: gain" and len(history.steps) == 1
    history.undo()
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)


@pytest.mark.parametrize("brush,params,inverted", [("gain", {"gain_db": -20.0}, False),
                                                   ("gain", {"gain_db": -20.0}, True),
                                                   ("filter", {"cutoff": 0.1}, False)])
def test_a_fill_done_a_run_of_frames_a_step_equals_it_done_at_once(rng, monkeypatch,
                                                                    brush, params, inverted):
    """The GUI fills a step a turn: a kernel that makes each cell from those near it
    (gain) a run of frames at a time; one that filters the whole rect's 2-D spectrum
    (filter) still at once, or the runs would change its result. An inverted
    feathered selection's weights were feathered within each run alone (a run that
    cut through its inside erased a strip of what it keeps, up to 0.47 of the way)."""
    import app.session.selection as selection

    x = (0.1 * rng.standard_normal((1, 4 * RATE))).astype(np.float32)
    sel = Selection.rect(0.5, 3.5, f_lo=300.0, f_hi=5000.0, feather_ms=50.0, inverted=inverted)

    def filled(cells: int) -> torch.Tensor:
        monkeypatch.setattr(selection, "FILL_CELLS", cells)
        doc = document(x, RATE)
        fill(doc, sel, brush, params=params)
        return doc.coefficients(0, doc.n_frames)

    assert torch.equal(filled(500), filled(1 << 40))


def test_a_feathered_fill_gives_its_edge_part_of_the_effect(rng):
    doc = noise_doc(rng)
    before = doc.magnitude.clone()
    sel = Selection.rect(0.5, 1.5, f_lo=2000.0, f_hi=4000.0, feather_ms=100.0)
    fill(doc, sel, "gain", params={"gain_db": -40.0})
    full = doc.full_rect()
    weight = sel.mask(doc, full)
    ratio = doc.magnitude[0] / before[0]
    partial = (weight > 0.2) & (weight < 0.8)
    assert partial.sum() > 50
    expected = 1 - weight[partial] * (1 - 10 ** (-40 / 20))  # gain blends by coverage
    np.testing.assert_allclose(ratio[partial].numpy(), expected.numpy(), rtol=1e-3)


def test_filling_with_heal_takes_a_burst_down_and_leaves_the_rest(rng):
    """Heal acts along a stroke: the fill paints one through the selection, each dab
    limited to it, and heal attenuates what stands out there when it ends."""
    from engine.model.resynth import Resynthesizer

    x = 0.01 * rng.standard_normal(2 * RATE)
    burst = slice(int(0.8 * RATE), int(1.0 * RATE))
    spectrum = np.fft.rfft(rng.standard_normal(burst.stop - burst.start))
    f = np.fft.rfftfreq(burst.stop - burst.start, 1 / RATE)
    spectrum[(f < 1200) | (f > 1800)] = 0
    x[burst] += 0.3 * np.fft.irfft(spectrum) / np.abs(np.fft.irfft(spectrum)).max()
    doc = document(x[None].astype(np.float32), RATE)
    synth = Resynthesizer(doc)
    before_audio = synth.full().numpy()[0].copy()
    before = doc.coefficients(0, doc.n_frames).clone()
    history = History(doc)
    step = fill(doc, Selection.rect(0.6, 1.2, f_lo=1000.0, f_hi=2000.0), "heal", history=history)
    after = synth.waveform()[0]
    assert step.label == "fill selection: heal" and len(history.steps) == 1

    def band_db(y):
        spec = np.abs(np.fft.rfft(y[burst])) ** 2
        band = np.fft.rfftfreq(burst.stop - burst.start, 1 / RATE)
        return 10 * np.log10(spec[(band > 1200) & (band < 1800)].sum())

    assert band_db(after) < band_db(before_audio) - 15  # the burst comes down: 46 -> 29 dB
    outside = np.r_[0:int(0.45 * RATE), int(1.35 * RATE):2 * RATE]  # half a window, a fade
    assert np.max(np.abs(after[outside] - before_audio[outside])) < 1e-5  # the rest stays
    history.undo()
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)


def test_filling_with_a_tone_draws_it_through_the_selection_only(rng):
    doc = document(np.zeros((1, 2 * RATE), np.float32), RATE)
    sel = Selection.rect(0.5, 1.5, f_lo=900.0, f_hi=1100.0)
    fill(doc, sel, "tone", params={"level_db": -20.0})
    from engine.model.resynth import Resynthesizer

    y = Resynthesizer(doc).full().numpy()[0]
    assert peak_hz(y[int(0.7 * RATE):int(1.3 * RATE)], RATE) == pytest.approx(1000.0, rel=0.01)
    weight = sel.mask(doc, doc.full_rect())
    now = doc.coefficients(0, doc.n_frames)[0].abs()
    after_time = weight.amax(0) == 0
    assert (now[:, after_time] == 0).all()  # nothing before or after the selection
    # the tone keeps its spectral shape (a cut would click): its lines' far tails
    # reach the band's edge cells, 140 dB down
    assert now[weight == 0].max() < 1e-7 * now.max()
    assert (now[weight == 1] > 0).float().mean() > 0.3


def test_a_harmonic_selection_plays_the_partials_alone():
    t = np.arange(2 * RATE) / RATE
    voice = sum(0.1 / k * np.sin(2 * np.pi * 220 * k * t) for k in range(1, 5))
    whistle = 0.1 * np.sin(2 * np.pi * 1570 * t)  # between the 7th and 8th partial
    doc = document((voice + whistle)[None].astype(np.float32), RATE)
    sel = Selection("harmonic", ((0.0, 220.0), (2.0, 220.0)), partials=4, width_cents=30)
    rect = sel.cells(doc)
    alone = masked_audio(doc, rect, sel.mask(doc, rect), sample0=RATE // 2,
                         sample1=3 * RATE // 2)[0]
    spectrum = np.abs(np.fft.rfft(alone * np.hanning(len(alone))))
    level = lambda hz: 20 * np.log10(spectrum[round(hz * len(alone) / RATE)] + 1e-12)  # noqa
    assert abs(peak_hz(alone, RATE) - 220) < 2.2  # the fundamental is the loudest
    assert level(1570) < level(880) - 40  # the whistle is gone


def test_a_selection_round_trips_through_json_and_bad_ones_are_refused():
    sel = Selection("harmonic", ((0.1, 100.0), (0.5, 150.0)), partials=5, width_cents=20,
                    feather_ms=10, inverted=True)
    assert Selection.from_json(sel.to_json()) == sel
    for bad, words in (({"kind": "blob", "points": [[0, 1], [1, 2]]}, "unknown selection"),
                       ({"kind": "rect", "points": [[0, 1]]}, "needs 2"),
                       ({"kind": "rect", "points": [[0, float("nan")], [1, 2]]}, "finite"),
                       ({"kind": "rect", "points": [[0, 1], [1, 2]], "partials": 0},
                        "partials = 0"),
                       ({"kind": "rect", "points": [[0, 1], [1, 2]], "evil": 1}, "unknown"),
                       ("rect", "an object")):
        with pytest.raises(ParameterError, match=words):
            Selection.from_json(bad)


@pytest.mark.parametrize("analysis", [{"n_fft": 1024}, {"transform": "cq"}])
def test_a_selection_of_the_whole_file_reaches_every_cell(analysis):
    """On constant-Q, frames past the file's end (its last slice's) were left out of a
    selection from 0 to the file's length: a fill or "play alone" missed the end."""
    rng = np.random.default_rng(5)
    seconds = float(rng.uniform(1.5, 3.5))
    doc = document(rng.uniform(-0.3, 0.3, (1, int(seconds * 16000))), 16000, **analysis)
    whole = Selection.rect(0.0, doc.length / doc.sample_rate, f_lo=0.0, f_hi=doc.sample_rate / 2)
    assert whole.cells(doc) == doc.full_rect()
    assert bool(whole.mask(doc).all())
    half = Selection.rect(0.0, 0.5 * doc.length / doc.sample_rate, f_lo=0.0,
                          f_hi=doc.sample_rate / 2)
    assert not bool(half.mask(doc).all())
