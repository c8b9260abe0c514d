"""A stroke on a constant-Q document is heard without the slices' seams while it is
painted, with playback running (brushes.live_seams), and the end's result is the
document's."""

import numpy as np
from PySide6.QtCore import Qt

from engine.resynth import Resynthesizer
from tests.conftest import tone
from tests.test_gui import choose_brush, point, settle

SR = 44100


def tone_db(y: np.ndarray, at: int) -> float:
    """Level of what is left of the 0.5-amplitude tone over 100 ms about ``at``, dB."""
    part = y[at - 2205:at + 2205]
    return 10 * np.log10(np.mean(part ** 2) / 0.125 + 1e-30)


def test_erasing_a_tone_on_constant_q_while_it_plays_is_heard_without_bursts(
        qtbot, window, write_audio):
    """A hard-eraser stroke along a 440 Hz tone, heard event by event as the GUI
    splices it: every slice edge the pen had passed held -9 to -15 dB of the tone until the
    stroke ended (each slice analysed as periodic). Now below -50 dB from when the pen
    leaves the shifted slice about the edge (measured -86 dB); the ended stroke's
    sound is the document's, and undo brings the tone back."""
    window.open_path(write_audio("tone.wav", tone(440.0, 8.0), SR))
    qtbot.waitUntil(lambda: str(window.doc.audio.path).endswith("tone.wav")
                    and not window.worker.isRunning(), timeout=20000)
    stft_doc, panel = window.doc, window.analysis_panel
    panel.transform.setCurrentIndex(panel.transform.findData("cq"))
    qtbot.mouseClick(panel.apply, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.doc is not stft_doc, timeout=30000)
    session, doc = window.session, window.doc
    settle(qtbot, window)
    choose_brush(window, "hard-eraser")
    window.play_action.trigger()
    assert window.player.playing
    edges = range(doc.transform.slice_len, doc.length, doc.transform.slice_len)
    # samples the pen is past an edge when it leaves the shifted slice about it: until
    # then, as near the pen anywhere, the cells not erased yet carry the tone into it
    # through their long atoms (until the stroke ends, as at a stroke's ends)
    past = doc.transform.seam_margin + 0.05 * SR
    canvas, start, end = window.canvas, point(window, 1.0, 440.0), point(window, 5.5, 440.0)
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
    heard = []
    for i in range(1, 61):
        qtbot.mouseMove(canvas, start + (end - start) * i / 60)
        qtbot.waitUntil(lambda: session.idle)  # painted and spliced: what plays now
        pen = 1.0 + 4.5 * i / 60  # seconds
        y = session.synth.cached(0, doc.length)[0]
        heard += [tone_db(y, e) for e in edges if 1.5 * SR < e < pen * SR - past]
    assert len(heard) > 20  # the edges at 2.97 and 4.46 s, at many events
    assert max(heard) < -50
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)
    settle(qtbot, window)
    assert session.synth.overlay is None
    np.testing.assert_array_equal(session.synth.waveform(), Resynthesizer(doc).full().numpy())
    y = session.synth.waveform()[0]
    assert max(tone_db(y, e) for e in edges if 1.5 * SR < e < 5.0 * SR) < -50
    window.undo_action.trigger()
    settle(qtbot, window)
    np.testing.assert_allclose(session.synth.waveform(), tone(440.0, 8.0), atol=1e-4)
