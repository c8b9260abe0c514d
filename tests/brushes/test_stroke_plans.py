"""A script's stroke painted again on a document of the same analysis and length (a
batch's next stack) takes its dabs and footprints from the first time
(brushes.stroke.paint): the same coefficients as computed afresh, on random strokes
of every preset, both transforms, input curves and harmonics; and a document of
another length, rate or analysis computes its own."""

import numpy as np
import pytest

from app.session.editor import Editor
from brushes import dab as dab_module
from brushes import stroke as stroke_module
from engine.io.audio import Audio
from engine.model.document import Document

RATE = 22050
PRESETS = ["hard-eraser", "soft-eraser", "gentle-boost", "blur-haze", "lowpass-haze",
           "tone-pen", "noise-spray", "harmonic-eraser", "smear", "restore", "clone"]


def take(rng, seconds=1.2, channels=1):
    t = np.arange(int(seconds * RATE)) / RATE
    x = 0.2 * np.sin(2 * np.pi * rng.uniform(200, 3000) * t) + rng.normal(0, 0.05,
                                                                          (channels, t.size))
    return x.astype(np.float32)


def random_stroke(rng) -> dict:
    points = [[float(rng.uniform(0, 1.3)), float(rng.uniform(100, 6000)),
               float(rng.uniform(0.2, 1))] for _ in range(int(rng.integers(1, 4)))]
    stroke = {"preset": str(rng.choice(PRESETS)), "points": points}
    if rng.random() < 0.5:
        stroke["inputs"] = {"opacity": {"pressure": [[0, 0.2], [1, 1]]},
                            "radius_ms": {"random": [[0, 20], [1, 60]]}}
    return stroke


def painted(x, strokes, transform):
    editor = Editor(Document(Audio(x.copy(), RATE), device="cpu", transform=transform),
                    history_limit=0)
    editor.run_script(strokes)
    return editor.audio().copy()


@pytest.mark.slow
@pytest.mark.parametrize("transform", ["stft", "cq"])
def test_a_stroke_painted_again_gives_what_it_gives_computed_afresh(rng, monkeypatch,
                                                                     transform):
    measured = []
    real = dab_module.Footprint.of.__func__
    monkeypatch.setattr(dab_module.Footprint, "of", classmethod(
        lambda cls, *a, **k: measured.append(1) or real(cls, *a, **k)))
    for _ in range(4 if transform == "stft" else 2):
        strokes = [random_stroke(rng) for _ in range(int(rng.integers(1, 3)))]
        first, second = take(rng), take(rng, channels=2)
        stroke_module._plans.clear()
        afresh = painted(second, strokes, transform)
        stroke_module._plans.clear()
        painted(first, strokes, transform)  # keeps the strokes' dabs and footprints
        measured.clear()
        again = painted(second, strokes, transform)
        np.testing.assert_array_equal(again, afresh)
        assert not measured, "the footprints were measured again"


def test_a_document_of_another_shape_measures_its_own_dabs(rng, monkeypatch):
    strokes = [{"preset": "hard-eraser", "points": [[0.1, 1000], [1.0, 1500]]}]
    measured = []
    real = dab_module.Footprint.of.__func__
    monkeypatch.setattr(dab_module.Footprint, "of", classmethod(
        lambda cls, *a, **k: measured.append(1) or real(cls, *a, **k)))
    for x, transform in ((take(rng, seconds=1.3), "stft"), (take(rng), "cq")):
        stroke_module._plans.clear()
        afresh = painted(x, strokes, transform)
        stroke_module._plans.clear()
        painted(take(rng), strokes, "stft")  # only the 1.2 s STFT document's plan kept
        measured.clear()
        np.testing.assert_array_equal(painted(x, strokes, transform), afresh)
        assert measured, f"{transform}, {x.shape[1]} samples: took another document's dabs"
