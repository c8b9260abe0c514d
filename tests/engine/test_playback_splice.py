"""Edits spliced into the waveform while the audio callback reads it: every block
it hears is wholly before or wholly after a splice, never half of each."""

import threading

import numpy as np
import pytest

from app.gui.services.playback import BLOCK, Player
from brushes.path import StrokePoint
from brushes.stroke import paint
from engine.model.history import History
from engine.model.resynth import Resynthesizer
from tests.conftest import CallbackOutput, document


@pytest.mark.slow
def test_a_reader_never_hears_a_half_spliced_block(rng):
    doc = document(rng.uniform(-0.5, 0.5, (2, 8000 * 10)), n_fft=1024)  # 10 s at 8 kHz
    synth, history = Resynthesizer(doc), History(doc)
    before = synth.full().numpy().copy()
    paint(doc, "gain", [StrokePoint(1.0, 0.0), StrokePoint(9.0, 0.0)],
          params={"gain_db": float("-inf"), "radius_hz": 4000.0,
                  "radius_ms": 100.0}, history=history)
    after = synth.waveform().copy()
    start, stop = 2 * 8000, 8 * 8000  # all of it changes between the two states
    assert (after[:, start:stop] != before[:, start:stop]).all(axis=0).mean() > 0.99

    player = Player(CallbackOutput())
    player.play(synth.cached, 8000, 2, start, stop, loop=True)
    torn, blocks, done = [], [0], threading.Event()

    def audio_callback():  # what the output's callback runs, as fast as it can
        while not done.is_set():
            at = player._next
            block = player._pull(BLOCK).T
            at_end = at + block.shape[1]
            if at_end > stop:
                continue  # wrapped round the loop: not one span
            if not (np.array_equal(block, before[:, at:at_end]) or
                    np.array_equal(block, after[:, at:at_end])):
                torn.append(at)
            blocks[0] += 1

    reader = threading.Thread(target=audio_callback)
    reader.start()
    try:
        for _ in range(60):  # the GUI thread: undo, redo, each spliced at once
            history.undo()
            synth.update()
            history.redo()
            synth.update()
    finally:
        done.set()
        reader.join()
        player.stop()
    assert blocks[0] > 100
    assert not torn, f"{len(torn)} of {blocks[0]} blocks were half old, half new"
