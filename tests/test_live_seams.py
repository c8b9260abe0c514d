"""A stroke on a constant-Q document, heard event by event while it is painted (as
the GUI splices it during playback), sounds across the slices' seams as the ended
stroke does (brushes.live_seams)."""

import numpy as np
import pytest

from brushes.live_seams import LiveSeams
from brushes.painter import Stroke
from brushes.presets import find_preset
from brushes.registry import BRUSHES
from brushes.stroke import StrokePoint
from engine.audio import Audio
from engine.document import Document
from engine.resynth import Resynthesizer

SR = 44100


@pytest.mark.parametrize("preset, hz", [("hard-eraser", 440.0), ("tone-pen", 800.0),
                                        ("clone", 800.0), ("blur-haze", 800.0),
                                        ("lowpass-haze", 800.0)])
def test_a_stroke_sounds_across_slice_edges_while_painted_as_it_does_ended(preset, hz):
    """Each slice is analysed as periodic, so the dabs alone are heard with a burst at
    every slice edge until the stroke ends and is rendered again across them: heard
    event by event, the sound about each edge the pen had passed was -2 to -12 dB off
    the ended stroke's (in dB of the stroke's change there). With its dabs painted on
    the shifted slicing as it goes, -50 to -125 dB. An edge counts once the pen has
    left the shifted slice about it (before that, as near the pen anywhere, cells not
    painted yet carry what they hold into it until the stroke ends)."""
    rng = np.random.default_rng(0)
    t = np.arange(6 * SR) / SR
    x = (0.3 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 1210 * t)
         + 0.01 * rng.standard_normal(len(t)))[None].astype(np.float32)
    doc = Document(Audio(x, SR), transform="cq", device="cpu")
    synth = Resynthesizer(doc)
    before = synth.full().numpy()[0].copy()
    p = find_preset(preset)
    params, _ = BRUSHES[p.brush].resolve({**p.params, "channel": -1}, "params")
    stroke = Stroke(doc, BRUSHES[p.brush], params, {}, None)
    stroke.live = LiveSeams(stroke, synth.redo)
    synth.overlay = stroke.live.blended
    start, edges = 0.6, range(doc.transform.slice_len, doc.length, doc.transform.slice_len)
    past = doc.transform.seam_margin + 0.05 * SR
    heard = []  # (an edge, the sound about it) at each event after the pen left it
    for k in range(121):
        pen = start + 0.04 * k
        stroke.add([StrokePoint(pen, hz)])
        synth.update()
        y = synth.cached(0, doc.length)[0]
        heard += [(e, y[e - 2205:e + 2205]) for e in edges
                  if start * SR + past < e < pen * SR - past]
    synth.overlay = None
    for sample0, sample1 in stroke.live.spans():
        synth.redo(sample0, sample1)
    stroke.end()
    ended = synth.waveform()[0]
    np.testing.assert_array_equal(synth.waveform(), Resynthesizer(doc).full().numpy())
    assert {e for e, _ in heard} == set(edges[:3])  # 1.49, 2.97 and 4.46 s

    def off(e, y):  # from the ended stroke, in dB of its change about the edge
        w = slice(e - 2205, e + 2205)
        return 20 * np.log10(np.linalg.norm(y - ended[w]) / np.linalg.norm(ended[w] - before[w]))

    assert max(off(e, y) for e, y in heard) < -40


def test_a_long_stroke_keeps_documents_near_the_pen_only_and_sounds_the_same_back():
    """Every part used to keep its document until the stroke ended: a 60 s stereo
    stroke held 396-403 MiB at its end, 57-106 without playback. Parts far from the pen keep only
    their sound, and a part the pen comes back to is made again: at every event at
    most four documents, and the sound about each edge away from the pen is the ended
    stroke's, out and back (the turn is an end of the stroke, as its start is)."""
    t = np.arange(9 * SR) / SR
    x = (0.3 * np.sin(2 * np.pi * 440 * t))[None].astype(np.float32)
    doc = Document(Audio(x, SR), transform="cq", device="cpu")
    synth = Resynthesizer(doc)
    synth.full()
    p = find_preset("hard-eraser")
    params, _ = BRUSHES[p.brush].resolve({**p.params, "channel": -1}, "params")
    stroke = Stroke(doc, BRUSHES[p.brush], params, {}, None)
    live = stroke.live = LiveSeams(stroke, synth.redo)
    synth.overlay = live.blended
    path = [0.6 + 0.1 * k for k in range(71)] + [7.5 - 0.1 * k for k in range(66)]
    held, settled_then_made = [], set()
    for pen in path:
        settled = {s for s, part in live.parts.items() if part.settled}
        stroke.add([StrokePoint(pen, 440.0)])
        synth.update()
        held.append(sum(not part.settled for part in live.parts.values()))
        settled_then_made |= {s for s in settled if not live.parts[s].settled}
    heard = synth.cached(0, doc.length)[0].copy()
    synth.overlay = None
    for sample0, sample1 in live.spans():
        synth.redo(sample0, sample1)
    stroke.end()
    ended = synth.waveform()[0]
    assert len(live.parts) == 6 and max(held) <= 4 and held[-1] < 6
    assert settled_then_made >= {1, 2}  # left going out, painted again coming back
    edges = range(doc.transform.slice_len, doc.length, doc.transform.slice_len)
    past = doc.transform.seam_margin + 0.05 * SR  # as above, from the pen and the turn
    far = [e for e in edges if path[-1] * SR + past < e < max(path) * SR - past]
    assert len(far) == 3  # 2.97, 4.46 and 5.94 s
    for e in far:
        w = slice(e - 2205, e + 2205)
        off = np.linalg.norm(heard[w] - ended[w]) / np.linalg.norm(x[0, w])
        assert 20 * np.log10(off) < -60, e
