"""A repair of a fixed-point source changes it by whole steps of the source's depth
(app.session.repairs.SOURCE_STEPS): what an export at that depth keeps of it, and what
lets a project store the step at a third of its float32 size (issue 50, item 4)."""

import numpy as np
import pytest
import soundfile as sf

from app.session.editor import Editor

RATE = 16000


@pytest.mark.parametrize("subtype,step", [("PCM_16", 2.0 ** -15), ("PCM_24", 2.0 ** -23),
                                          ("FLOAT", None)])
def test_a_denoise_changes_a_fixed_point_take_by_whole_steps(tmp_path, subtype, step):
    rng = np.random.default_rng(5)
    t = np.arange(2 * RATE) / RATE
    x = 0.3 * np.sin(2 * np.pi * 440 * t) * (t > 1) + 0.01 * rng.standard_normal(len(t))
    source = tmp_path / "take.wav"
    sf.write(source, x, RATE, subtype=subtype)
    ed = Editor.open(source, device="cpu")
    report = ed.repair("denoise")
    assert report.changed
    change = report.step.change.samples().astype(np.float64)
    assert np.abs(change).max() > 1e-3
    if step is None:  # a float source's change is as the module made it
        assert not np.array_equal(change / 2.0 ** -23, np.round(change / 2.0 ** -23))
    else:
        assert np.array_equal(change / step, np.round(change / step))
