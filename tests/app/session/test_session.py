"""The editing session (app.session.session): its events, and the scripts' Editor
acting on its selection, paint channel and clipboard as the window's verbs do."""

import numpy as np
import pytest
import torch

from app.session.editor import Editor
from app.session.selection import Selection
from app.session.session import BrushSettings, Session
from app.session.spectral_clip import Clip
from app.session.time_edit import TimeClip
from engine.errors import ParameterError
from engine.io.audio import Audio
from engine.model.document import Document

SR = 16000


@pytest.fixture
def take(rng):
    t = np.arange(3 * SR) / SR
    tones = [0.2 * np.sin(2 * np.pi * rng.uniform(200, 2000) * t) for _ in range(2)]
    return (np.stack(tones) + rng.normal(0, 0.01, (2, t.size))).astype(np.float32)


def editor(x: np.ndarray) -> Editor:
    return Editor(Document(Audio(x, SR), transform="stft", device="cpu"))


def test_listeners_hear_each_change_in_order_until_they_unsubscribe():
    session, heard = Session(), []
    stop = session.events.subscribe("selection", lambda s: heard.append(("a", s)))
    session.events.subscribe("selection", lambda s: heard.append(("b", s)))
    session.events.subscribe("brush", heard.append)
    sel = Selection.rect(1.0, 2.0, f_lo=0.0, f_hi=100.0)
    session.select(sel)
    stop()
    session.select(None)
    brush = BrushSettings("gain", {"gain_db": -6.0}, label="quieter")
    session.use_brush(brush)
    assert heard == [("a", sel), ("b", sel), ("b", None), brush]
    assert session.selection is None and session.brush is brush
    with pytest.raises(ParameterError, match="no session event 'selected'"):
        session.events.subscribe("selected", heard.append)


def test_the_paint_channel_is_said_once_per_change():
    session, heard = Session(), []
    session.events.subscribe("channel", heard.append)
    for channel in (1, 1, None, None, 0):
        session.paint_on(channel)
    assert heard == [1, None, 0] and session.channel == 0


def test_a_verb_with_no_range_acts_on_the_selection_as_one_given_it(take):
    """Select, then cut: the same bits as a cut told its range; the selection, drawn on
    the file before the cut, is let go with it; the clipboard says what it holds."""
    told, selected = editor(take), editor(take)
    told.cut(start=1.0, end=2.0)
    heard = []
    selected.events.subscribe("clipboard", heard.append)
    selected.select(Selection.rect(1.0, 2.0, f_lo=0.0, f_hi=SR / 2))
    selected.cut()
    assert torch.equal(selected.doc.coefficients(0, selected.doc.n_frames),
                       told.doc.coefficients(0, told.doc.n_frames))
    assert np.array_equal(selected.audio(), told.audio())
    assert isinstance(heard[0], TimeClip)
    assert np.array_equal(heard[0].content, told.clipboard.content)
    assert selected.selection is None
    with pytest.raises(ParameterError, match="cut: nothing is selected"):
        selected.cut()
    selected.undo()
    assert np.allclose(selected.audio(), editor(take).audio(), atol=1e-6)


def test_a_band_selected_is_a_spectral_edit_on_the_paint_channel(take):
    """A band: copy takes a spectral clip; gain on it changes the paint channel's band
    only, and every other sample stays as it was."""
    ed = editor(take)
    before = ed.audio().copy()
    ed.select(Selection.rect(0.5, 2.5, f_lo=3000.0, f_hi=5000.0))
    assert isinstance(ed.copy(), Clip) and isinstance(ed.clipboard, Clip)
    ed.paint_on(1)
    ed.gain(db=-12.0)
    after = ed.audio()
    assert np.array_equal(after[0], before[0])  # the other channel: untouched
    assert np.abs(after[1] - before[1]).max() > 0  # the noise in the band went down
    assert ed.selection is not None  # a spectral edit keeps the file's time: and the selection


@pytest.mark.parametrize("call, says", [
    (lambda ed: ed.trim(start=1.0), "trim: give start and end, or neither"),
    (lambda ed: ed.delete(), "delete: nothing is selected"),
])
def test_a_verb_told_half_a_range_or_nothing_changes_nothing(take, call, says):
    ed = editor(take)
    before = ed.audio().copy()
    with pytest.raises(ParameterError, match=says):
        call(ed)
    assert np.array_equal(ed.audio(), before) and not ed.history.can_undo


def test_a_selection_outside_the_file_is_said_and_changes_nothing(take):
    ed = editor(take)
    ed.select(Selection.rect(5.0, 6.0, f_lo=0.0, f_hi=SR / 2))
    with pytest.raises(ParameterError, match="duplicate: the selection spans no time"):
        ed.duplicate()
    assert ed.doc.length == take.shape[1]


def test_the_documented_session_example_runs(capsys, monkeypatch):
    """docs/scripting.md, "The session: select, then act", as written."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    page = (root / "docs" / "scripting.md").read_text()
    section = page[page.index("### The session: select, then act"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(root)
    scope: dict = {}
    exec(compile(code, "docs/scripting.md", "exec"), scope)
    ed = scope["ed"]
    assert capsys.readouterr().out.startswith("copied 1.0 s")
    assert ed.channel == 0 and len(ed.history.steps) == 3
