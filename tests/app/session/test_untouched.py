"""Lossless until touched (issues 49, 50): outside the reach of every edit the output is
the source's own samples, bit for bit, not their resynthesis (which differs by about
1e-7); a repair that finds nothing writes the file it was given; an undone edit gives
the source's samples back."""

import numpy as np
import pytest
import soundfile as sf

from app.session.editor import Editor
from engine.io.audio import Audio
from engine.model.document import Document
from tests.cli_run import specpaint_here

SR = 16000


@pytest.mark.parametrize("transform", ["stft", "cq"])
def test_a_stroke_changes_only_the_samples_it_reaches(rng, transform):
    x = rng.uniform(-0.5, 0.5, (2, 8 * SR)).astype(np.float32)
    doc = Document(Audio(x, SR), transform=transform, device="cpu")
    editor = Editor(doc)
    editor.paint("hard-eraser", [(4.0, 1000.0), (4.2, 1000.0)], channel=1)
    y = editor.audio()
    (reach,) = doc.written_samples()[1]
    outside = np.ones(x.shape[1], bool)
    outside[reach[0]:reach[1]] = False
    np.testing.assert_array_equal(y[0], x[0])  # the other channel: not a sample moved
    np.testing.assert_array_equal(y[1, outside], x[1, outside])
    assert np.max(np.abs(y[1, ~outside] - x[1, ~outside])) > 1e-3  # the stroke is heard
    assert 0 < reach[1] - reach[0] < x.shape[1]  # on constant-Q, seconds about the stroke
    editor.undo()
    np.testing.assert_array_equal(editor.audio(), x)
    editor.redo()
    np.testing.assert_array_equal(editor.audio(), y)


def test_a_repair_that_finds_nothing_writes_the_source_bit_for_bit(tmp_path, write_audio):
    """It wrote the resynthesis: hundreds of thousands of samples off by ~1e-7."""
    t = np.arange(2 * SR) / SR
    x = (0.3 * np.sin(2 * np.pi * 440 * t) + 0.01 * np.sin(2 * np.pi * 3111 * t))[None]
    src = write_audio("tone.wav", x.astype(np.float32), SR, "FLOAT")
    r = specpaint_here("repair", "dehum", src, "-o", tmp_path / "o.wav")
    assert r.returncode == 0 and "found nothing to repair; nothing changed" in r.stderr, r.stderr
    out, _ = sf.read(tmp_path / "o.wav", dtype="float32", always_2d=True)
    source, _ = sf.read(src, dtype="float32", always_2d=True)
    np.testing.assert_array_equal(out, source)


def test_an_unedited_file_is_written_as_it_came_in(tmp_path, write_audio, rng):
    """`specpaint apply` with a stroke over nothing but silence's neighbours: a 16-bit
    file written to 16 bits keeps every sample no stroke reached (no dither either)."""
    pcm = rng.integers(-9000, 9000, (1, 2 * SR)).astype(np.int16)
    src = write_audio("take.wav", pcm, SR, "PCM_16")
    out = tmp_path / "out.wav"
    r = specpaint_here("apply", src, "-o", out, "--bits", "16", "--preset", "hard-eraser",
                       "--line", "1.0:2000,1.1:2000")
    assert r.returncode == 0, r.stderr
    back, _ = sf.read(out, dtype="int16", always_2d=True)
    doc = Document(Audio(pcm.astype(np.float32) / 32768, SR), device="cpu")
    a, b = doc.transform.samples_affected(int(doc.frame_of(0.9)), int(doc.frame_of(1.2)),
                                          doc.length)
    np.testing.assert_array_equal(back[:a, 0], pcm[0, :a])
    np.testing.assert_array_equal(back[b:, 0], pcm[0, b:])
