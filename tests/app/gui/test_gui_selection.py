"""Selections in the window: lasso and harmonic tools driven with the mouse, the
panel's feather and invert, filling with the brush as one undo step, playing a
selection alone, and the selection kept in the project file."""


import numpy as np
import torch
from PySide6.QtCore import QPoint, Qt

from app.gui.services.playback import BLOCK
from app.session.selection import Selection
from engine.model.resynth import masked_audio
from tests.conftest import CallbackOutput
from tests.gui_input import lasso, pixels, point, settle


def test_a_lasso_drawn_with_the_mouse_is_outlined_and_filled_as_one_step(qtbot, window):
    doc = window.doc
    before_px = pixels(window)
    before = doc.coefficients(0, doc.n_frames).clone()
    lasso(qtbot, window)
    sel = window.canvas.selection
    assert sel.kind == "lasso" and len(sel.points) > 20
    t0, t1, f_lo, f_hi = sel.span()
    assert abs(t0 - 4.5) < 0.1 and abs(t1 - 7.5) < 0.1 and abs(f_lo - 2500) < 100
    after_px = pixels(window)
    edge = point(window, 7.5, 4000.0)
    assert not np.array_equal(after_px[edge.y(), edge.x() - 1:edge.x() + 2],
                              before_px[edge.y(), edge.x() - 1:edge.x() + 2])  # outlined
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)  # selecting edits nothing
    shown = window.grab().toImage()  # as the window composes it (alpha lines came out dark)
    at = window.canvas.mapTo(window, edge)
    brightest = max(min(shown.pixelColor(at.x() + dx, at.y() + dy).getRgb()[:3])
                    for dx in (-1, 0, 1) for dy in (-1, 0, 1))
    assert brightest > 200  # a white outline

    window.brush_panel.preset_box.setCurrentText("hard-eraser")
    window.selection_panel.fill.click()
    settle(qtbot, window)
    assert window.undo_stack.count() == 1
    assert window.undo_stack.text(0) == "fill selection: hard-eraser"
    mask = sel.mask(doc, doc.full_rect())
    now = doc.coefficients(0, doc.n_frames)[0]
    assert (now[mask == 1] == 0).all() and mask.sum() > 1000
    assert torch.equal(now[mask == 0], before[0][mask == 0])  # every other cell as it was
    window.undo_action.trigger()
    settle(qtbot, window)
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)


def test_a_lasso_filled_with_a_stroke_brush_repairs_inside_it(qtbot, window):
    """Spot-repair (heal) acts along a stroke: the fill paints one through the lasso,
    one named step, and what changes in the sound lies within the lasso's time."""
    before_audio = window.session.synth.waveform().copy()
    lasso(qtbot, window)
    window.brush_panel.preset_box.setCurrentText("spot-repair")
    window.selection_panel.fill.click()
    settle(qtbot, window)
    assert window.undo_stack.count() == 1
    assert window.undo_stack.text(0) == "fill selection: spot-repair"
    after = window.session.synth.waveform()
    rate = window.doc.sample_rate
    changed = np.flatnonzero(np.abs(after - before_audio).max(0) > 1e-4)
    assert len(changed) > 0
    assert changed.min() > 4.3 * rate and changed.max() < 7.7 * rate  # the lasso's 4.5-7.5 s


def test_the_harmonic_tool_follows_the_drag_and_plays_the_partials_alone(qtbot, window):
    window.view_panel.log.setChecked(True)
    window.selection_panel.partials.setValue(4)
    window.selection_panel.width_cents.setValue(40.0)
    window.selection.tool_actions["harmonic"].trigger()
    canvas = window.canvas
    start, end = point(window, 2.0, 440.0), point(window, 4.0, 440.0)
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    for i in range(1, 21):
        qtbot.mouseMove(canvas, start + (end - start) * i / 20)
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)
    sel = canvas.selection
    assert sel.kind == "harmonic" and sel.partials == 4 and sel.width_cents == 40.0
    times, f0s = sel.path()
    assert abs(times[0] - 2.0) < 0.05 and abs(times[-1] - 4.0) < 0.05
    dragged = canvas.view.f_of(start.y())  # 440 Hz to the pixel (20 cents a pixel here)
    assert np.all(np.abs(1200 * np.log2(f0s / dragged)) < 1)  # on the drag
    window.selection_panel.partials.setValue(3)  # the panel edits the selection
    assert canvas.selection.partials == 3

    window.player.output = CallbackOutput()  # the test pulls the blocks: the app's silent
    # output pulls on its own, and took the first block while the expected audio was made
    window.selection_panel.play.click()
    doc = window.doc
    assert window.player.playing
    assert window.player.start_frame == int(times[0] * doc.sample_rate)
    rect = canvas.selection.cells(doc)
    expected = masked_audio(doc, rect, canvas.selection.mask(doc, rect),
                            sample0=window.player.start_frame, sample1=window.player.stop_frame)
    np.testing.assert_array_equal(window.player._pull(BLOCK).T, expected[:, :BLOCK])
    window.transport.stop()


def test_feather_and_invert_apply_to_the_selection(qtbot, window):
    window.selection.tool_actions["select"].trigger()
    from tests.gui_input import drag
    drag(qtbot, window.canvas, point(window, 3.0, 5000.0), point(window, 5.0, 2000.0))
    sel = window.canvas.selection
    assert sel.kind == "rect" and not sel.inverted
    window.selection_panel.feather_ms.setValue(50.0)
    assert window.canvas.selection.feather_ms == 50.0
    qtbot.keyClick(window.canvas, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier)
    assert window.canvas.selection.inverted
    qtbot.keyClick(window.canvas, Qt.Key.Key_Escape)
    assert window.canvas.selection is None


def test_the_selection_is_saved_in_the_project(qtbot, window, tmp_path):
    sel = Selection("harmonic", ((1.0, 300.0), (2.0, 330.0)), partials=5, width_cents=30.0,
                    feather_ms=20.0)
    window.selection.set_selection(sel)
    project = tmp_path / "take.spp"
    window.files.save_project(path=project)
    qtbot.waitUntil(lambda: project.exists() and window.jobs.idle(), timeout=20000)
    window.selection.clear_selection()
    before = window.session
    window.open_path(project)
    # the project's document is in once its session is (the worker's thread ends before its
    # result reaches the window: the project path, set by the save, says nothing)
    qtbot.waitUntil(lambda: window.session is not before and window.jobs.idle(),
                    timeout=20000)
    assert window.opened.project_path == project
    assert window.canvas.selection == sel
    assert window.selection_panel.partials.value() == 5
    assert window.selection_panel.feather_ms.value() == 20.0


def test_a_selection_does_not_carry_over_to_the_next_file(qtbot, window, tmp_path):
    """It did, and Fill would have acted on it in a file it was never drawn on."""
    import soundfile as sf

    from tests.dialogs import choose, open_file

    choose(window, "Edit > Rectangle select tool")
    qtbot.mousePress(window.canvas, Qt.MouseButton.LeftButton, pos=point(window, 2.0, 3000))
    qtbot.mouseMove(window.canvas, point(window, 4.0, 1000))
    qtbot.mouseRelease(window.canvas, Qt.MouseButton.LeftButton, pos=point(window, 4.0, 1000))
    assert window.canvas.selection is not None
    other = tmp_path / "other.wav"
    sf.write(other, 0.3 * np.random.default_rng(1).standard_normal(48000), 16000)
    open_file(window, other)
    assert window.canvas.selection is None
    before = window.doc.magnitude.clone()
    choose(window, "Edit > Fill selection with the brush")
    settle(qtbot, window)
    assert window.undo_stack.count() == 0 and torch.equal(window.doc.magnitude, before)
    assert "draw a selection first" in window.statusBar().currentMessage()


def test_the_pitch_grid_thins_with_zoom_and_a_selection_never_looks_like_it(qtbot, window):
    """A chromatic grid on a log axis drew a line every 2-4 px, hatching the picture,
    in white lines like a harmonic selection's."""
    from app.gui.view.overlays import GRID_GAP_PX, GRID_KEY, GRID_NOTE
    from tests.dialogs import choose

    panel = window.view_panel
    panel.log.setChecked(True)
    panel.show_grid.setChecked(True)
    assert panel.scale.currentText() == "chromatic"

    def grid_rows(image):
        colours = [np.array([round(c * 255) for c in rgba[:3]]) for rgba in (GRID_NOTE, GRID_KEY)]
        on = sum((image[..., :3] == c).all(axis=-1) for c in colours)
        return np.flatnonzero(on.mean(axis=1) > 0.5)

    rows = grid_rows(pixels(window))
    assert len(rows) > 10 and np.diff(rows).min() >= GRID_GAP_PX - 1, np.diff(rows)
    window.canvas.view.zoom_freq(8.0)  # zoomed in: every semitone has room again
    window.area.view_changed()
    near = grid_rows(pixels(window))
    spacing = np.diff(near)
    assert spacing.min() >= GRID_GAP_PX - 1 and len(near) > 0.5 * window.canvas.height() / \
        np.median(spacing)  # the lines go on all the way: none left out where they fit
    choose(window, "Edit > Harmonic select tool")
    canvas = window.canvas
    window.canvas.fit()
    start, end = point(window, 3.0, 440.0), point(window, 6.0, 440.0)
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    for i in range(1, 11):
        qtbot.mouseMove(canvas, start + (end - start) * i / 10)
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)
    image = pixels(window)
    x0, x1 = start.x() + 5, end.x() - 5
    band = image[:, x0:x1, :3]  # the selection's dashes: light and dark along its edges
    light = (band == 255).all(axis=-1).sum(axis=1)
    dark = (band == 0).all(axis=-1).sum(axis=1)
    edges = np.flatnonzero((light > 0.3 * (x1 - x0)) & (dark > 0.3 * (x1 - x0)))
    assert len(edges) >= 2 * window.selection_panel.partials.value() - 4


def test_precise_selections_typed_select_all_and_time_or_frequency_only(qtbot, window):
    """An RX user's selections: the span as numbers to read and type, Select all, a
    time-only and a frequency-only tool, and a drag to the edges that takes them."""
    from PySide6.QtWidgets import QDoubleSpinBox

    from tests.dialogs import choose

    doc, panel = window.doc, window.selection_panel
    seconds, nyquist = doc.length / doc.sample_rate, doc.sample_rate / 2
    fields = [panel.findChild(QDoubleSpinBox, f"selection-{n}")
              for n in ("start", "end", "low", "high")]
    # nothing selected yet: the fields take a typed span (issue 50), none of it yet
    assert [f.value() for f in fields] == [0.0, 0.0, 0.0, nyquist] and \
        all(f.isEnabled() for f in fields)
    qtbot.keyClick(window, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)  # Select all
    assert window.canvas.selection.span() == (0.0, seconds, 0.0, nyquist)
    assert [round(f.value(), 3) for f in fields] == [0.0, round(seconds, 3), 0.0, nyquist]
    for field, text in zip(fields, ("2.5", "4.25", "1000", "3000"), strict=True):
        field.setFocus()
        field.selectAll()
        qtbot.keyClicks(field, text)
        qtbot.keyClick(field, Qt.Key.Key_Return)
    assert window.canvas.selection.span() == (2.5, 4.25, 1000.0, 3000.0)
    assert window.canvas.selection.kind == "rect"

    canvas = window.canvas

    def drag_with(tool, start, end):
        choose(window, f"Edit > {tool} tool")
        qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
        for i in range(1, 11):
            qtbot.mouseMove(canvas, start + (end - start) * i / 10)
        qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)
        return canvas.selection.span()

    t0, t1, lo, hi = drag_with("Time select", point(window, 3.0, 5000), point(window, 5.0, 2000))
    assert (lo, hi) == (0.0, nyquist) and abs(t0 - 3.0) < 0.05 and abs(t1 - 5.0) < 0.05
    assert [round(f.value(), 1) for f in fields[2:]] == [0.0, nyquist]
    t0, t1, lo, hi = drag_with("Frequency select", point(window, 3.0, 5000),
                               point(window, 5.0, 2000))
    assert (t0, t1) == (0.0, seconds) and abs(lo - 2000) < 60 and abs(hi - 5000) < 60
    past_left, past_right = QPoint(-30, 200), QPoint(canvas.width() + 30, 300)
    assert drag_with("Rectangle select", past_left, past_right)[:2] == (0.0, seconds)
    near_edges = QPoint(2, 200), QPoint(canvas.width() - 3, 300)  # within a few pixels
    assert drag_with("Rectangle select", *near_edges)[:2] == (0.0, seconds)
