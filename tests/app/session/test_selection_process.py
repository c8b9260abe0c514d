"""Processing a selection (app.session.selection_process): gain, normalise, fades and
invert over a time range or a feathered spectral selection, against naive
references, on the STFT and the constant-Q; one undo step each, bit-exact; bad
input refused in one line with nothing changed."""

import functools
import math

import numpy as np
import pytest
import torch

from app.session.layer_ops import duplicate_layer
from app.session.selection import Selection
from app.session.selection_process import process_selection
from engine.errors import ParameterError
from engine.model.history import History
from engine.transforms import make
from tests.conftest import document

RATE = 16000
KINDS = ("stft", "cq")


@functools.cache
def analysis(kind, rate):
    """One transform of each kind and rate for the module's documents (building a
    constant-Q filterbank takes about 0.4 s here)."""
    return make(rate, kind)


def noise_doc(rng, kind, channels=1, level=0.1):
    x = level * rng.standard_normal((channels, int(1.5 * RATE)))
    return document(x.astype(np.float32), RATE, transform=analysis(kind, RATE))


def cells(doc):
    return doc.read_complex(doc.full_rect()).clone()


def frame_times(doc):
    return doc.transform.seconds_of(np.arange(doc.n_frames, dtype=np.float64))


def in_range(doc, start, end):
    t = frame_times(doc)
    return torch.from_numpy((t >= start - 1e-9) & (t <= end + 1e-9))


def applied(doc, op, **kwargs):
    """Process, check one step and bit-exact undo and redo; the cells before and after."""
    history = History(doc)
    before = cells(doc)
    step = process_selection(doc, op=op, history=history, **kwargs)
    after = cells(doc)
    assert history.steps == [step] and step.patches
    history.undo()
    assert torch.equal(cells(doc), before)
    history.redo()
    assert torch.equal(cells(doc), after)
    assert torch.isfinite(torch.view_as_real(after)).all()
    return before, after


@pytest.mark.parametrize("kind", KINDS)
def test_gain_over_a_time_range_scales_its_frames_and_nothing_else(rng, kind):
    doc = noise_doc(rng, kind, channels=2)
    before, after = applied(doc, "gain", start=0.4, end=0.9, db=-9.0, channel=1)
    inside = in_range(doc, 0.4, 0.9)
    expected = before.clone()
    expected[1][:, inside] *= 10 ** (-9 / 20)
    torch.testing.assert_close(after, expected, rtol=1e-6, atol=0)
    assert torch.equal(after[:, :, ~inside], before[:, :, ~inside])
    assert torch.equal(after[0], before[0])


@pytest.mark.parametrize("kind", KINDS)
def test_gain_over_a_feathered_selection_is_weighted_by_its_mask(rng, kind):
    doc = noise_doc(rng, kind)
    sel = Selection.rect(0.3, 0.8, f_lo=800.0, f_hi=2500.0, feather_ms=50.0, feather_hz=300.0)
    before, after = applied(doc, "gain", selection=sel, db=12.0)
    rect, w = sel.cells(doc), sel.mask(doc).double()
    expected = before.clone()
    expected[:, rect.bins, rect.frames] *= (1 + (10 ** (12 / 20) - 1) * w).float()
    torch.testing.assert_close(after, expected, rtol=1e-5, atol=0)
    assert ((w > 0) & (w < 1)).any()  # the edges got part of it


def selected_peak(doc, sel_rect, weight=None):
    """Naive reference: the whole inverse of an array holding only the selected cells."""
    coeffs = torch.zeros_like(cells(doc))
    part = cells(doc)[:, sel_rect.bins, sel_rect.frames]
    coeffs[:, sel_rect.bins, sel_rect.frames] = part if weight is None else part * weight
    return float(doc.transform.inverse(coeffs, doc.length).abs().max())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("target", (-20.0, -3.0))
def test_normalize_brings_the_selected_contents_peak_to_the_target_up_or_down(rng, kind,
                                                                            target):
    doc = noise_doc(rng, kind, level=0.05)
    sel = Selection.rect(0.3, 1.0, f_lo=500.0, f_hi=3000.0)
    rect = sel.cells(doc)
    assert 20 * math.log10(selected_peak(doc, rect, sel.mask(doc))) < -3  # so -3 raises it
    applied(doc, "normalize", selection=sel, peak_db=target)
    assert 20 * math.log10(selected_peak(doc, rect, sel.mask(doc))) == \
        pytest.approx(target, abs=0.01)


def test_normalize_of_silence_and_a_gain_of_0_db_change_nothing_and_say_so(rng):
    doc = document(np.zeros((1, RATE), np.float32), RATE)
    history = History(doc)
    step = process_selection(doc, op="normalize", start=0.2, end=0.6, history=history)
    assert "silent" in step.notice and not step.patches and not history.steps
    doc = noise_doc(rng, "stft")
    step = process_selection(doc, op="gain", db=0.0, history=history)
    assert "nothing to change" in step.notice and not step.patches and not history.steps


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op", ("fade_in", "fade_out"))
@pytest.mark.parametrize("curve", ("linear", "cosine"))
def test_fades_follow_their_curve_frame_by_frame(rng, kind, op, curve):
    doc = noise_doc(rng, kind)
    before, after = applied(doc, op, start=0.2, end=1.2, curve=curve)
    t = frame_times(doc)
    inside = in_range(doc, 0.2, 1.2).numpy()
    u = (t[inside] - 0.2) / 1.0
    u = u if op == "fade_in" else 1 - u
    g = u if curve == "linear" else 0.5 - 0.5 * np.cos(np.pi * u)
    expected = before.clone()
    expected[:, :, inside] *= torch.from_numpy(g).float()
    torch.testing.assert_close(after, expected, rtol=1e-5, atol=1e-7)
    assert torch.equal(after[:, :, ~inside], before[:, :, ~inside])


@pytest.mark.parametrize("kind", KINDS)
def test_invert_negates_exactly_and_twice_is_the_original(rng, kind):
    doc = noise_doc(rng, kind)
    sel = Selection.rect(0.2, 0.7, f_lo=300.0, f_hi=4000.0)
    before, after = applied(doc, "invert", selection=sel)
    rect = sel.cells(doc)
    hard = sel.mask(doc) == 1
    assert torch.equal(after[:, rect.bins, rect.frames][:, hard],
                       -before[:, rect.bins, rect.frames][:, hard])
    process_selection(doc, op="invert", selection=sel)
    assert torch.equal(cells(doc), before)


def test_the_whole_file_when_no_range_is_given_and_loud_gains_stay_finite(rng):
    doc = noise_doc(rng, "stft", level=1.0)
    before, after = applied(doc, "gain", db=48.0)
    torch.testing.assert_close(after, before * 10 ** (48 / 20), rtol=1e-6, atol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_bad_input_is_a_one_line_error_that_changes_nothing(rng, kind):
    doc = noise_doc(rng, kind)
    history = History(doc)
    quiet = document((1e-6 * rng.standard_normal((1, RATE // 2))).astype(np.float32), RATE,
                     transform=analysis(kind, RATE))
    sel = Selection.rect(0.2, 0.7, f_lo=300.0, f_hi=4000.0)
    for target, kwargs, match in (
            (doc, dict(op="gain", start=0.5, end=0.5), "empty"),
            (doc, dict(op="gain", start=0.5, end=0.4), "empty"),
            (doc, dict(op="gain", start=3.0, end=4.0), "holds no frame"),
            (doc, dict(op="gain", start=0.5005, end=0.5006), "holds no frame"),
            (doc, dict(op="gain", start=float("nan"), end=1.0), "not two numbers"),
            (doc, dict(op="gain", db=float("inf")), "outside"),
            (doc, dict(op="gain", db=60.0), "outside"),
            (doc, dict(op="normalize", peak_db=3.0), "outside"),
            (doc, dict(op="gain", gain=3.0), "no parameter"),
            (doc, dict(op="fade_in", curve="exp"), "curve"),
            (doc, dict(op="louder"), "unknown selection process"),
            (doc, dict(op="gain", selection=sel, start=0.1), "not both"),
            (doc, dict(op="gain", selection=Selection.rect(5.0, 6.0, f_lo=100.0,
                                                            f_hi=200.0)), "no cell"),
            (doc, dict(op="gain", channel=4), "channel 4"),
            (quiet, dict(op="normalize", peak_db=-1.0), "more than 48 dB")):
        before = cells(target)
        with pytest.raises(ParameterError, match=match) as caught:
            process_selection(target, history=history, **kwargs)
        assert "\n" not in str(caught.value)
        assert torch.equal(cells(target), before)
    assert not history.steps


@pytest.mark.parametrize("kind", KINDS)
def test_a_layered_document_is_processed_on_its_active_layer_only(rng, kind):
    doc = noise_doc(rng, kind)
    bottom = doc.layers.active.id
    duplicate_layer(doc)
    below = doc.read_complex(doc.full_rect(), layer=bottom).clone()
    before, after = applied(doc, "gain", start=0.2, end=0.6, db=6.0)
    inside = in_range(doc, 0.2, 0.6)
    torch.testing.assert_close(after[:, :, inside], before[:, :, inside] * 10 ** (6 / 20),
                               rtol=1e-6, atol=0)
    assert torch.equal(doc.read_complex(doc.full_rect(), layer=bottom), below)


def test_a_range_of_one_frame_at_the_end_of_a_mono_file_undoes_exactly(rng):
    """A one-frame read of a one-channel document is a view of the live cells: kept as
    an undo patch as it is, the next write changes the patch too."""
    doc = document((0.1 * rng.standard_normal((1, 512 * 64))).astype(np.float32), 8000)
    end = doc.length / 8000
    before, after = applied(doc, "gain", start=end - 0.005, end=end, db=-20.0)
    assert not torch.equal(after, before)
