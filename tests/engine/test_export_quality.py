"""A quality for Ogg Vorbis and MP3 exports (issue 50.12): 0 (smallest) to 10 (best),
as oggenc counts it, from export(), apply, roundtrip, repair and batch; a lossless
format or a value out of range is refused in one line before any work."""

import numpy as np
import pytest
import soundfile as sf

from engine.errors import AudioError
from engine.io.export import export
from engine.measure.metrics import snr_db
from tests.cli_run import specpaint_here

SR = 44100


def music(seconds: float = 3.0) -> np.ndarray:
    t = np.arange(round(seconds * SR)) / SR
    rng = np.random.default_rng(2)
    x = sum(0.1 * np.sin(2 * np.pi * f * t) for f in (220, 330, 1234, 4321))
    return np.stack([x + 0.01 * rng.standard_normal(t.size)] * 2).astype(np.float32)


@pytest.mark.parametrize("suffix", [".ogg", ".mp3"])
def test_a_higher_quality_is_a_larger_file_nearer_the_source(tmp_path, suffix):
    x = music()
    sizes, snrs = [], []
    for quality in (1, 5, 9):
        path = tmp_path / f"q{quality}{suffix}"
        export(x, SR, path, quality=quality)
        y = sf.read(path, dtype="float32", always_2d=True)[0].T
        n = min(y.shape[1], x.shape[1])
        lag = int(np.argmax(np.correlate(y[0, :4096], x[0, :4096], "full"))) - 4095
        sizes.append(path.stat().st_size)
        snrs.append(snr_db(x[0, 4096:n - 4096], y[0, 4096 + lag:n - 4096 + lag]))
    assert sizes[0] < sizes[1] < sizes[2]
    assert snrs[0] < snrs[2]


@pytest.mark.parametrize("path, quality, message", [
    ("out.wav", 5, "a quality is for Ogg Vorbis and MP3 files"),
    ("out.flac", 5, "lossless"),
    ("out.ogg", 11, "quality 11; give a number from 0 (smallest) to 10 (best)"),
    ("out.mp3", float("nan"), "quality nan"),
])
def test_a_quality_a_format_cannot_take_is_refused(tmp_path, path, quality, message):
    with pytest.raises(AudioError, match=message.replace("(", r"\(").replace(")", r"\)")):
        export(music(0.5), SR, tmp_path / path, quality=quality)
    assert not list(tmp_path.iterdir())


def test_apply_repair_and_batch_take_a_quality_and_refuse_it_before_work(tmp_path):
    sf.write(tmp_path / "take.wav", music().T, SR, subtype="PCM_16")
    line = ["--preset", "hard-eraser", "--line", "1:1000,2:1000"]
    for command in (["apply", tmp_path / "take.wav", "-o", tmp_path / "a.ogg", *line],
                    ["roundtrip", tmp_path / "take.wav", "-o", tmp_path / "r.ogg"],
                    ["repair", "declick", tmp_path / "take.wav", "-o", tmp_path / "d.mp3"],
                    ["batch", tmp_path / "take.wav", "-o", tmp_path / "out", "--format", "mp3",
                     *line]):
        small = specpaint_here(*command, "--quality", "1")
        assert small.returncode == 0, small.stderr
    assert sf.info(tmp_path / "a.ogg").format == "OGG"
    assert sf.info(tmp_path / "out" / "take.mp3").format == "MP3"
    refused = specpaint_here("apply", tmp_path / "take.wav", "-o", tmp_path / "a.wav", *line,
                             "--quality", "5")
    assert refused.returncode == 2 and "a quality is for Ogg Vorbis and MP3" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (tmp_path / "a.wav").exists()
    batch = specpaint_here("batch", tmp_path / "take.wav", "-o", tmp_path / "out2", *line,
                           "--quality", "5")
    assert batch.returncode == 2 and "--quality" in batch.stderr and "--format ogg" in \
        batch.stderr
