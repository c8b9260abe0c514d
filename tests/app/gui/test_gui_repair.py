"""The Repair menu in the window: each module through its menu entry and dialog, as
one undo step undone bit for bit; nothing found says so and adds no step; Cancel
leaves the document as it was; Preview loops the processed selection without
touching the document; Compare switches playback to the original recording at the
same playhead."""

import math

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt

from app.gui.services.playback import BLOCK
from tests.conftest import CallbackOutput
from tests.gui_input import point, settle
from tests.repair_window import SR, VOICE, apply, dialog_for, hum, opened, speech

pytestmark = pytest.mark.skipif(not VOICE.exists(), reason="needs alsa-utils' sounds")


def test_dehum_through_the_menu_is_one_undo_step_undone_bit_exactly(qtbot, window, tmp_path,
                                                                    rng):
    doc = opened(qtbot, window, tmp_path, speech(4.0, rng) + hum(round(4.0 * SR), rng))
    before = doc.coefficients(0, doc.n_frames).clone()
    audio_before = window.session.synth.waveform().copy()
    dialog = dialog_for(qtbot, window, "dehum")
    assert "whole file" in dialog.scope.text()
    apply(qtbot, window, dialog)
    assert window.undo_stack.count() == 1 and window.undo_stack.text(0) == "De-hum"
    assert window.statusBar().currentMessage().startswith("De-hum: ")
    after = window.session.synth.waveform().copy()
    spectrum = [np.abs(np.fft.rfft(a[0])) for a in (audio_before, after)]
    hz = np.fft.rfftfreq(after.shape[1], 1 / SR)
    low = (hz > 45) & (hz < 65)
    assert spectrum[1][low].max() < 0.3 * spectrum[0][low].max()  # the hum went down
    window.undo_action.trigger()
    settle(qtbot, window)
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)
    assert np.array_equal(window.session.synth.waveform(), audio_before)
    window.redo_action.trigger()
    settle(qtbot, window)
    assert np.allclose(window.session.synth.waveform(), after, atol=1e-6)


def test_declick_on_a_selection_changes_only_its_lane_and_time(qtbot, window, tmp_path, rng):
    """Clicks in both channels; a selection in the right lane: only its channel and
    time change, the clicks found are marked and can be stepped through. (A vibrato
    tone, not the voice: de-click on 2 s of that voice took 26-140 s here.)"""
    t = np.arange(3 * SR) / SR
    f0 = rng.uniform(150, 300)
    clean = sum(0.1 / k * np.sin(2 * np.pi * f0 * k * t + 3 * np.sin(2 * np.pi * 5 * t))
                for k in range(1, 6))
    x = np.stack([clean, np.roll(clean, 500)])
    spots = rng.choice(np.arange(SR // 5, 3 * SR - SR // 5), 16, replace=False)
    for s in spots:
        x[:, s:s + rng.integers(1, 4)] += rng.choice([-1, 1]) * rng.uniform(0.3, 0.6)
    opened(qtbot, window, tmp_path, x)
    canvas = window.canvas
    assert canvas.lanes == [0, 1]  # a stereo file opens in lanes
    canvas.update()  # the view's height is a lane's from the next frame
    qtbot.waitUntil(lambda: canvas.view.height == canvas.lane_height())
    window.selection.tool_actions["select"].trigger()
    a = point_in_lane(window, 1.0, SR / 2 * 0.98, 1)
    b = point_in_lane(window, 2.0, 1.0, 1)
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=a)
    qtbot.mouseMove(canvas, b)
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=b)
    before = window.session.synth.waveform().copy()
    dialog = dialog_for(qtbot, window, "declick")
    assert "channel R" in dialog.scope.text() and "selection 1.0" in dialog.scope.text()
    apply(qtbot, window, dialog)
    assert window.undo_stack.count() == 1
    after = window.session.synth.waveform()
    changed = np.flatnonzero(np.abs(after - before).max(0) > 1e-6)
    assert np.array_equal(after[0], before[0])
    assert len(changed) and changed.min() >= 0.99 * SR and changed.max() <= 2.01 * SR
    span = slice(SR, 2 * SR)
    reference = np.roll(clean, 500)[span]
    error_before = np.sum((before[1, span] - reference) ** 2)
    assert np.sum((after[1, span] - reference) ** 2) < 0.5 * error_before  # clicks went
    events = window.repairs.click_marks.shown()
    assert events and all(e[2] == 1 and 0.99 <= e[0] <= 2.01 for e in events)
    window.repairs.event_actions[0].trigger()
    assert window.canvas.playhead == pytest.approx(events[0][0])
    assert window.statusBar().currentMessage().startswith(f"click 1 of {len(events)}")
    window.repairs.event_actions[1].trigger()
    assert window.canvas.playhead == pytest.approx(events[-1][0])
    ruler = window.area.time_ruler.grab().toImage()
    x = round(window.canvas.view.x_of(events[-1][0]) * ruler.width() / window.canvas.view.width)
    assert any(ruler.pixelColor(x + dx, 2).getRgb()[:3] == (255, 255, 255) for dx in (-1, 0, 1))
    repaired = window.session.synth.waveform().copy()
    put_back = next(a for a in window.repairs.event_actions
                    if a.text().replace("&", "") == "Put back this click")
    put_back.trigger()  # the click stepped to (the last) is as it was, alone
    settle(qtbot, window)
    assert window.undo_stack.count() == 2
    assert window.statusBar().currentMessage().startswith(f"click {len(events)} of")
    now = window.session.synth.waveform()
    seconds, length = events[-1][:2]
    at = slice(round(seconds * SR) - 2, round((seconds + length) * SR) + 2)
    assert np.abs(now[1, at] - before[1, at]).max() < 1e-5
    assert np.abs(repaired[1, at] - before[1, at]).max() > 0.05
    elsewhere = np.abs(now - repaired) > 1e-5  # (the band's edge spreads a change ~10 ms)
    elsewhere[1, round((seconds - 0.02) * SR):round((seconds + length + 0.02) * SR)] = False
    assert not elsewhere.any()
    put_back.trigger()
    assert "already put back" in window.statusBar().currentMessage()
    window.undo_action.trigger()  # repaired again
    settle(qtbot, window)
    assert np.allclose(window.session.synth.waveform(), repaired, atol=1e-6)
    window.undo_action.trigger()  # the clicks are back: no marks
    settle(qtbot, window)
    assert window.repairs.click_marks.shown() == []
    assert window.statusBar().currentMessage() != ""
    window.repairs.event_actions[0].trigger()
    assert window.statusBar().currentMessage().startswith("No repaired clicks")


def point_in_lane(window, seconds, hz, lane):
    """Where (``seconds``, ``hz``) is drawn in the canvas's ``lane``."""
    p = point(window, seconds, hz)
    p.setY(p.y() + math.ceil(lane * window.canvas.lane_height()))
    return p


@pytest.mark.parametrize("name", ["dehum", "declip"])
def test_a_clean_file_says_nothing_was_found_and_adds_no_step(qtbot, window, tmp_path, rng,
                                                              name):
    doc = opened(qtbot, window, tmp_path, speech(2.5, rng))
    before = doc.coefficients(0, doc.n_frames).clone()
    apply(qtbot, window, dialog_for(qtbot, window, name))
    assert window.undo_stack.count() == 0
    message = window.statusBar().currentMessage()  # de-clip says what it saw between
    assert "found nothing to repair; " in message and message.endswith("; nothing changed")
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)


def test_cancel_during_a_long_repair_leaves_the_document_unchanged(qtbot, window, tmp_path,
                                                                    rng):
    seconds = 90.0
    x = speech(seconds, rng) + rng.normal(0, 0.02, round(seconds * SR))
    doc = opened(qtbot, window, tmp_path, np.stack([x, x[::-1]]))
    before = doc.coefficients(0, doc.n_frames).clone()
    dialog = dialog_for(qtbot, window, "denoise")
    qtbot.mouseClick(dialog.apply, Qt.MouseButton.LeftButton)
    # de-noise of this takes about a second on a quiet machine: cancel as soon as it runs
    qtbot.waitUntil(lambda: window.jobs.job_status.isVisible() and window.jobs.worker.isRunning(),
                    timeout=30000)
    qtbot.mouseClick(window.jobs.job_status.cancel, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.jobs.idle(), timeout=60000)
    qtbot.wait(50)
    assert window.statusBar().currentMessage() == "De-noise: cancelled"
    assert window.undo_stack.count() == 0
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)


def test_compare_switches_playback_to_the_original_at_the_same_playhead(qtbot, window,
                                                                         tmp_path, rng):
    n = round(4.0 * SR)
    x = speech(4.0, rng) + hum(n, rng)
    doc = opened(qtbot, window, tmp_path, x)
    apply(qtbot, window, dialog_for(qtbot, window, "dehum"))
    window.repairs.repair_dialog.close()
    edited = window.session.synth.waveform().copy()
    original = doc.audio.samples
    assert not np.allclose(edited, original, atol=1e-3)
    player = window.player
    player.output = CallbackOutput()  # the test pulls the blocks a device's callback would
    window.transport.play_from(1.0)
    start = round(1.0 * SR)
    assert np.array_equal(player._pull(BLOCK)[:, 0], edited[0, start:start + BLOCK])
    compare = next(a for a in window.menuBar().actions() if a.text() == "&Play").menu()
    action = next(a for a in compare.actions()
                  if a.text().replace("&", "") == "Compare: original")
    action.trigger()
    at = start + BLOCK
    crossing = player._pull(BLOCK)[:, 0]  # the block after the switch crosses over
    ramp = np.arange(BLOCK) / BLOCK
    mixed = edited[0, at:at + BLOCK] * (1 - ramp) + original[0, at:at + BLOCK] * ramp
    assert np.allclose(crossing, mixed, atol=1e-6)
    at += BLOCK
    assert np.array_equal(player._pull(BLOCK)[:, 0], original[0, at:at + BLOCK])  # no gap
    action.trigger()
    player._pull(BLOCK)
    at += 2 * BLOCK
    assert np.array_equal(player._pull(BLOCK)[:, 0], edited[0, at:at + BLOCK])
    window.transport.stop()


def test_preview_loops_the_processed_selection_and_changes_nothing(qtbot, window, tmp_path,
                                                                    rng):
    n = round(3.0 * SR)
    doc = opened(qtbot, window, tmp_path, speech(3.0, rng) + hum(n, rng))
    before = doc.coefficients(0, doc.n_frames).clone()
    edited = window.session.synth.waveform().copy()
    window.selection.tool_actions["select"].trigger()
    a, b = point(window, 1.0, 4000), point(window, 2.0, 1.0)
    qtbot.mousePress(window.canvas, Qt.MouseButton.LeftButton, pos=a)
    qtbot.mouseMove(window.canvas, b)
    qtbot.mouseRelease(window.canvas, Qt.MouseButton.LeftButton, pos=b)
    t0, t1 = window.canvas.selection.span()[:2]
    dialog = dialog_for(qtbot, window, "dehum")
    qtbot.mouseClick(dialog.preview, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.repairs.preview_dialog is dialog and window.player.playing,
                    timeout=30000)
    player = window.player
    player.output.stop()
    s0, s1 = round(t0 * SR), round(t1 * SR)
    assert (player.start_frame, player.stop_frame, player.loop) == (s0, s1, True)
    heard = np.concatenate([player._pull(BLOCK)[:, 0] for _ in range((s1 - s0) // BLOCK + 3)])
    length = s1 - s0
    assert np.array_equal(heard[:BLOCK], heard[length:length + BLOCK])  # looped
    region = edited[0, s0:s1]
    assert np.abs(heard[:length] - region).max() > 0.005  # processed: the hum went down
    hz = np.fft.rfftfreq(length, 1 / SR)
    low = (hz > 45) & (hz < 65)
    assert np.abs(np.fft.rfft(heard[:length]))[low].max() < \
        0.3 * np.abs(np.fft.rfft(region))[low].max()
    assert torch.equal(doc.coefficients(0, doc.n_frames), before)
    assert window.undo_stack.count() == 0
    qtbot.mouseClick(dialog.preview, Qt.MouseButton.LeftButton)  # stop: normal playback
    assert not window.player.playing and window.repairs.preview_dialog is None
    window.transport.play_from(1.0)
    player.output.stop()
    assert np.array_equal(player._pull(BLOCK)[:, 0], edited[0, SR:SR + BLOCK])
    window.transport.stop()
