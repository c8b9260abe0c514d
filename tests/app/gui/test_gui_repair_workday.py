"""The Repair menu in a working day: Preview plays what Apply then writes, bit for
bit, for every module and random regions (one pipeline, app.session.repairs.plan); a
whole-file repair of a stereo file repairs every channel (one channel only when the
View panel's Paint channel names it, and the dialog says so); the dialogs are not
modal: learn a noise profile, select what to clean on the canvas with the dialog
open, apply (the profile kept with the document when the dialog closes), and
Compare (Ctrl+B) from the dialog during a Preview plays the region unprocessed."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

import app.gui.actions.repairactions as repairactions
from app.gui.services.playback import BLOCK
from app.session.repairs import MODULES, plan
from tests.conftest import CallbackOutput
from tests.gui_input import point, settle
from tests.repair_window import SR, apply, dialog_for, hum, opened, speech

SECONDS = 3.0


def damaged(rng) -> np.ndarray:
    """Stereo: a vibrato tone with hum, hiss and clicks, clipped: every module finds
    something in a second of it."""
    n = round(SECONDS * SR)
    t = np.arange(n) / SR
    f0 = rng.uniform(150, 300)
    tone = sum(0.25 / k * np.sin(2 * np.pi * f0 * k * t + 3 * np.sin(2 * np.pi * 5 * t))
               for k in range(1, 6))
    x = np.stack([tone, np.roll(tone, 300)]) + 2 * hum(n, rng) + rng.normal(0, 0.01, (2, n))
    for s in rng.choice(np.arange(SR // 5, n - SR // 5), 20, replace=False):
        x[rng.integers(2), s:s + rng.integers(1, 4)] += rng.choice([-1, 1]) * 0.3
    level = 0.7 * np.abs(x).max()
    return np.clip(x, -level, level)


def material(rng, name: str) -> np.ndarray:
    """What module ``name`` finds something in: the damaged take, or for the voice model
    (which acts only where it finds a voice) a voice under hiss."""
    if name != "voice":
        return damaged(rng)
    return np.stack([speech(SECONDS, rng)] * 2) + rng.normal(0, 0.03, (2, round(SECONDS * SR)))


def select(qtbot, window, t0, t1, f_hi, f_lo):
    """A rectangle drawn on the canvas with the select tool (in the top lane)."""
    canvas = window.canvas
    canvas.update()  # a stereo file opens in lanes: the view's height is a lane's from the
    qtbot.waitUntil(lambda: canvas.view.height == canvas.lane_height())  # next frame
    window.selection.tool_actions["select"].trigger()
    a, b = point(window, t0, f_hi), point(window, t1, f_lo)
    qtbot.mousePress(window.canvas, Qt.MouseButton.LeftButton, pos=a)
    qtbot.mouseMove(window.canvas, b)
    qtbot.mouseRelease(window.canvas, Qt.MouseButton.LeftButton, pos=b)


def pull(player, frames: int) -> np.ndarray:
    """What the audio callback would be given next: ``[ch, frames]``."""
    blocks = [player._pull(BLOCK) for _ in range(-(-frames // BLOCK))]
    return np.concatenate(blocks)[:frames].T


def start_preview(qtbot, window, dialog):
    window.player.output = CallbackOutput()  # the test pulls the blocks
    qtbot.mouseClick(dialog.preview, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.repairs.preview_dialog is dialog and window.player.playing,
                    timeout=60000)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MODULES))
def test_preview_plays_what_apply_then_writes_bit_for_bit(qtbot, window, tmp_path, rng,
                                                          monkeypatch, name):
    """Two random regions (a band or not) of a damaged stereo take, each previewed,
    applied and undone."""
    opened(qtbot, window, tmp_path, material(rng, name))
    paint_channel = window.view_panel.paint_channel
    paint_channel.setCurrentIndex(paint_channel.findText("All"))  # both channels
    written, write = [], repairactions.write
    monkeypatch.setattr(repairactions, "write", lambda doc, planned, cells: written.append(
        planned) or write(doc, planned, cells))  # what Apply writes
    for _ in range(2):
        t0 = rng.uniform(0.2, 1.6)
        f_hi = rng.choice([SR / 2 * 0.999, rng.uniform(3000, 8000)])
        select(qtbot, window, t0, t0 + rng.uniform(0.6, 1.2), f_hi,
               rng.choice([1.0, rng.uniform(20, 40)]))
        edited = window.session.synth.waveform().copy()
        dialog = dialog_for(qtbot, window, name)
        start_preview(qtbot, window, dialog)
        player = window.player
        s0, s1 = player.start_frame, player.stop_frame
        stream = pull(player, s1 - s0 + BLOCK)
        heard = stream[:, :s1 - s0]
        assert np.array_equal(stream[:, s1 - s0:], heard[:, :BLOCK])  # looped
        assert not np.array_equal(heard, edited[:, s0:s1])
        qtbot.mouseClick(dialog.preview, Qt.MouseButton.LeftButton)  # stop
        apply(qtbot, window, dialog)
        assert window.undo_stack.count() == 1
        planned = written.pop()
        assert (planned.s0, planned.s1) == (s0, s1)
        assert np.array_equal(planned.heard(edited[:, s0:s1]), heard)  # the same bits
        after = window.session.synth.waveform()
        assert np.abs(after[:, s0:s1] - heard).max() < 1e-5  # what it wrote sounds so
        assert np.abs(np.delete(after - edited, np.s_[s0:s1], axis=1)).max() < 1e-5
        window.undo_action.trigger()
        settle(qtbot, window)


@pytest.mark.parametrize("name", ["denoise", "dehum"])
def test_a_whole_file_repair_of_a_stereo_file_repairs_every_channel(qtbot, window, tmp_path,
                                                                     rng, name):
    """No selection: every channel, wherever the last press was; a channel named in the
    View panel's Paint channel: that one alone, and the dialog says so."""
    n = round(SECONDS * SR)
    x = np.stack([speech(SECONDS, rng) + hum(n, rng) for _ in range(2)])
    opened(qtbot, window, tmp_path, x + rng.normal(0, 0.01, x.shape))
    select(qtbot, window, 1.0, 1.5, 4000, 100)  # a press in the top lane
    dialog = dialog_for(qtbot, window, name)
    assert dialog.scope.text().endswith(", channel L")
    window.activateWindow()  # back to the window (the dialog stays open), Escape there
    qtbot.waitUntil(window.isActiveWindow)
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Edit")
    next(a for a in menu.actions() if a.text() == "Clear selection").trigger()
    assert window.canvas.selection is None and window.paint_channel() == 0
    dialog.activateWindow()  # back to the dialog: it says what Apply will act on
    qtbot.waitUntil(dialog.isActiveWindow)
    assert dialog.scope.text() == "Acts on: the whole file, all channels"
    before = window.session.synth.waveform().copy()
    apply(qtbot, window, dialog)
    assert window.undo_stack.count() == 1
    both = window.session.synth.waveform().copy()
    assert (np.abs(both - before).max(axis=1) > 1e-3).all()  # each channel repaired
    window.undo_action.trigger()
    settle(qtbot, window)
    paint_channel = window.view_panel.paint_channel
    paint_channel.setCurrentIndex(paint_channel.findText("R"))  # with the dialog open
    assert dialog.scope.text() == "Acts on: the whole file, channel R"
    apply(qtbot, window, dialog)
    right = window.session.synth.waveform()
    assert np.array_equal(right[0], before[0])
    assert np.abs(right[1] - before[1]).max() > 1e-3


def test_learn_a_profile_select_and_apply_with_the_dialog_open(qtbot, window, tmp_path, rng):
    """RX's workflow: open De-noise, select noise alone, Learn, select what to clean
    (the dialog stays open: it is not modal), Apply: the profile learnt is what it
    used. Closed and opened again, the dialog still has it."""
    n = round(SECONDS * SR)
    x = rng.normal(0, 0.02, n) * (1 + np.arange(n) / n)  # hiss growing louder: a profile
    x[round(SR):] += speech(SECONDS - 1, rng)  # of its start differs from the quietest parts
    doc = opened(qtbot, window, tmp_path, x)
    dialog = dialog_for(qtbot, window, "denoise")
    assert dialog.windowModality() == Qt.WindowModality.NonModal
    select(qtbot, window, 0.1, 0.8, SR / 2 * 0.999, 1.0)
    learnt = tuple(window.canvas.selection.span()[:2])
    qtbot.mouseClick(dialog.learn, Qt.MouseButton.LeftButton)
    assert dialog.profile_label.text() == \
        f"Noise profile: {learnt[0]:.2f}-{learnt[1]:.2f} s"
    select(qtbot, window, 1.2, 2.8, SR / 2 * 0.999, 1.0)
    t0, t1 = window.canvas.selection.span()[:2]
    assert dialog.scope.text().startswith(f"Acts on: the selection {t0:.2f}-{t1:.2f} s")
    edited = window.session.synth.waveform().copy()
    expected, quietest = (plan(doc, edited, "denoise", start=t0, end=t1, profile=p)
                          for p in (learnt, None))
    s0, s1 = expected.s0, expected.s1
    apply(qtbot, window, dialog)
    after = window.session.synth.waveform()
    assert np.abs(after[:, s0:s1] - expected.heard(edited[:, s0:s1])).max() < 1e-5
    assert np.abs(after[:, s0:s1] - quietest.heard(edited[:, s0:s1])).max() > 1e-3
    close = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Close)
    qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.repairs.repair_dialog is None)
    again = dialog_for(qtbot, window, "denoise")
    assert again.profile_label.text() == f"Noise profile: {learnt[0]:.2f}-{learnt[1]:.2f} s"


def test_compare_from_the_dialog_plays_the_preview_unprocessed(qtbot, window, tmp_path, rng):
    """Ctrl+B with the dialog active (not modal): the next block crosses over to the
    region unprocessed, the one after is it."""
    n = round(SECONDS * SR)
    opened(qtbot, window, tmp_path, speech(SECONDS, rng) + hum(n, rng))
    select(qtbot, window, 1.0, 2.0, SR / 2 * 0.999, 1.0)
    edited = window.session.synth.waveform().copy()
    dialog = dialog_for(qtbot, window, "dehum")
    start_preview(qtbot, window, dialog)
    player, s0 = window.player, window.player.start_frame
    processed = pull(player, BLOCK)
    assert not np.array_equal(processed, edited[:, s0:s0 + BLOCK])
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    qtbot.keyClick(dialog, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert window.transport.compare.compare_action.isChecked()
    pull(player, BLOCK)  # crosses over
    at = s0 + 2 * BLOCK
    assert np.array_equal(pull(player, BLOCK), edited[:, at:at + BLOCK])
    window.transport.stop()
