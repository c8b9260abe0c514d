"""Export: formats, atomic writes, the source protected, clipping handled."""

import threading
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.errors import AudioError, Cancelled
from engine.io.audio import READ_SUFFIXES
from engine.io.export import FORMATS, export, same_depth
from engine.measure.metrics import snr_db


@pytest.mark.parametrize("name,bits,subtype,min_snr", [
    ("a.wav", "16", "PCM_16", 80), ("a.wav", "24", "PCM_24", 120), ("a.wav", "float", "FLOAT", 300),
    ("a.flac", "16", "PCM_16", 80), ("a.flac", "24", "PCM_24", 120),
    ("a.aiff", None, "PCM_24", 120), ("a.wav", "32", "PCM_32", 200),
    ("a.aifc", "32", "PCM_32", 200), ("a.caf", None, "PCM_24", 120),
    ("a.w64", None, "FLOAT", 300), ("a.rf64", "16", "PCM_16", 80),
    ("a.au", "float", "FLOAT", 300), ("a.bwf", "24", "PCM_24", 120),
])
def test_lossless_formats_write_what_they_are_given(tmp_path, rng, name, bits, subtype, min_snr):
    x = rng.uniform(-0.9, 0.9, (2, 100_000)).astype(np.float32)
    report = export(x, 44100, tmp_path / name, bit_depth=bits, block_frames=10_000)
    back, rate = sf.read(tmp_path / name, dtype="float32", always_2d=True)
    assert rate == 44100 and back.shape == (100_000, 2) and report.subtype == subtype
    assert sf.info(tmp_path / name).subtype == subtype
    assert snr_db(x, back.T) >= min_snr  # measured 90.6, 142.6 and 215 dB (16, 24, 32)


def test_what_is_written_is_also_found_in_a_folder_and_offered_to_open():
    assert set(FORMATS) <= set(READ_SUFFIXES)


@pytest.mark.parametrize("subtype,name,depth", [
    ("PCM_32", "a.wav", "32"), ("PCM_32", "a.flac", "24"), ("FLOAT", "a.flac", "24"),
    ("PCM_U8", "a.aiff", "16"), ("PCM_24", "a.caf", "24"), ("ALAW", "a.aifc", None),
    ("PCM_16", "a.ogg", None), ("PCM_16", "a.mp3", None),
])
def test_the_depth_nearest_the_sources(subtype, name, depth):
    assert same_depth(subtype, Path(name)) == depth


def test_long_ogg_is_written_in_blocks(tmp_path, rng):
    x = (0.3 * np.sin(2 * np.pi * 440 * np.arange(48000 * 30) / 48000))[None].astype(np.float32)
    export(x, 48000, tmp_path / "long.ogg")
    info = sf.info(tmp_path / "long.ogg")
    assert info.format == "OGG" and abs(info.frames - x.shape[1]) < 2048


def test_failure_after_the_first_block_leaves_nothing(tmp_path, rng):
    source = tmp_path / "src.wav"
    sf.write(source, rng.uniform(-0.5, 0.5, (50_000, 1)), 8000)
    before = source.read_bytes()
    dest = tmp_path / "out.wav"
    calls = []

    def fail_after_first_block(fraction):
        calls.append(fraction)
        if len(calls) == 2:
            raise OSError("disk full (simulated)")

    with pytest.raises(AudioError, match=r"out\.wav: writing failed \(disk full \(simulated\)\); "
                                         r"nothing was written"):
        export(np.zeros((1, 50_000), np.float32), 8000, dest, block_frames=10_000,
               source=source, progress=fail_after_first_block)
    assert len(calls) == 2  # one block was written before the failure
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.wav"]
    assert source.read_bytes() == before


def test_cancel_keeps_an_existing_destination(tmp_path):
    dest = tmp_path / "keep.wav"
    dest.write_bytes(b"previous export")
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        export(np.zeros((1, 1000), np.float32), 8000, dest, cancel=cancel)
    assert dest.read_bytes() == b"previous export"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.wav"]


def test_never_overwrites_the_source_unless_forced(tmp_path):
    source = tmp_path / "take1.wav"
    sf.write(source, np.zeros(100), 8000)
    before = source.read_bytes()
    with pytest.raises(AudioError, match=r"take1\.wav: this is the source file; refusing to "
                                         r"overwrite it.*--force"):
        export(np.ones((1, 100), np.float32) * 0.5, 8000, source, source=source)
    assert source.read_bytes() == before
    export(np.ones((1, 100), np.float32) * 0.5, 8000, source, source=source, force=True)
    assert sf.read(source)[0][0] == pytest.approx(0.5)


@pytest.mark.parametrize("name,words", [
    ("x.mp4", r"cannot write '\.mp4' files; use one of"),
    ("missing/x.wav", r"the folder .*missing does not exist"),
])
def test_bad_destinations(tmp_path, name, words):
    with pytest.raises(AudioError, match=words):
        export(np.zeros((1, 10), np.float32), 8000, tmp_path / name)


def test_bad_bit_depth(tmp_path):
    with pytest.raises(AudioError, match=r"FLAC cannot be written with bit depth 'float'"):
        export(np.zeros((1, 10), np.float32), 8000, tmp_path / "x.flac", bit_depth="float")


def _over(x_peak=2.0):
    x = np.zeros((1, 1000), np.float32)
    x[0, 100] = x_peak
    x[0, 200] = -1.5
    x[0, 300] = 0.5
    return x


def test_clipping_is_reported_and_clipped_in_integer_files(tmp_path):
    report = export(_over(), 8000, tmp_path / "c.wav", bit_depth="16")
    assert report.clipped_samples == 2 and report.peak_dbfs == pytest.approx(6.02, abs=0.01)
    assert "samples above full scale: clipped at full scale" in report.summary()
    assert "--normalize" not in report.summary()  # the GUI shows it too: no CLI flags
    back = sf.read(tmp_path / "c.wav")[0]
    assert back.max() <= 1.0 and back.min() >= -1.0 and back[300] == pytest.approx(0.5, abs=1e-4)


def test_float_files_keep_overs(tmp_path):
    report = export(_over(), 8000, tmp_path / "f.wav")
    assert "kept above 0 dBFS" in report.action
    assert sf.read(tmp_path / "f.wav")[0][100] == pytest.approx(2.0)


def test_normalize_scales_the_whole_file(tmp_path):
    export(_over(), 8000, tmp_path / "n.wav", clip="normalize")
    back = sf.read(tmp_path / "n.wav")[0]
    assert np.max(np.abs(back)) == pytest.approx(10 ** (-0.1 / 20), rel=1e-6)
    assert back[300] / back[100] == pytest.approx(0.25, rel=1e-6)  # proportions kept


def test_limit_keeps_quiet_samples_and_stays_below_full_scale(tmp_path):
    export(_over(), 8000, tmp_path / "l.wav", clip="limit")
    back = sf.read(tmp_path / "l.wav")[0]
    assert np.max(np.abs(back)) < 1.0 and back[100] > 0.89
    assert back[300] == pytest.approx(0.5, rel=1e-6)


def test_16_bit_exports_are_tpdf_dithered(tmp_path):
    t = np.arange(48000) / 48000
    quiet = (10 ** (-100 / 20) * np.sin(2 * np.pi * 1000 * t))[None].astype(np.float32)  # < 1 LSB
    report = export(quiet, 48000, tmp_path / "d.wav", bit_depth="16")
    plain = export(quiet, 48000, tmp_path / "p.wav", bit_depth="16", dither=False)
    assert report.dithered and "TPDF dither" in report.summary() and not plain.dithered
    d = sf.read(tmp_path / "d.wav")[0]
    p = sf.read(tmp_path / "p.wav")[0]
    assert not p.any() and len(np.unique(d)) > 2  # undithered, the tone (1/3 LSB) rounds away
    error = (d - quiet[0]) * 32768
    assert abs(error.mean()) < 0.02  # no DC: libsndfile's own conversion floored, -0.5 LSB
    assert 0.45 < np.sqrt(np.mean(error ** 2)) < 0.55  # TPDF of +-1 LSB and rounding: 0.5
    tone = np.abs(np.sum(d * np.exp(-2j * np.pi * 1000 * t))) / len(t) * 2
    assert tone == pytest.approx(10 ** (-100 / 20), rel=0.3)  # the tone survives in the noise
    export(quiet, 48000, tmp_path / "again.wav", bit_depth="16")
    assert (tmp_path / "again.wav").read_bytes() == (tmp_path / "d.wav").read_bytes()


def test_the_dither_kept_for_a_shape_is_the_dither_drawn_for_each_file(tmp_path, rng,
                                                                      monkeypatch):
    """Each 16-bit export draws its TPDF dither block by block from one seed; a file of
    a shape exported before reuses it (a batch): the same samples written, whether the
    noise is kept or drawn (above DITHER_KEPT), for the shapes at and around the
    block's edges."""
    from engine.io import export as module

    def written_as_drawn(x, block):  # the dither as export drew it before it was kept
        noise = np.random.default_rng(module.DITHER_SEED)
        out = []
        for start in range(0, x.shape[1], block):
            part = x[:, start:start + block].T.astype(np.float32)
            tpdf = noise.random(part.shape, np.float32) - noise.random(part.shape, np.float32)
            on_grid = part * np.float32(1 << 15) == np.rint(part * np.float32(1 << 15))
            dithered = np.where(on_grid, part, part + tpdf * np.float32(module.LSB_16))
            out.append(module._quantized(dithered, "PCM_16"))
        return np.concatenate(out)

    for kept in (True, False):
        monkeypatch.setattr(module, "DITHER_KEPT", 1 << 22 if kept else 0)
        for frames, channels in ((999, 1), (1000, 2), (1001, 1), (2500, 3), (3000, 2)):
            for _ in range(2):  # the second file of the shape gets what the first kept
                x = rng.uniform(-0.5, 0.5, (channels, frames)).astype(np.float32)
                export(x, 8000, tmp_path / "d.wav", bit_depth="16", block_frames=1000)
                back = sf.read(tmp_path / "d.wav", dtype="int16", always_2d=True)[0]
                np.testing.assert_array_equal(back, written_as_drawn(x, 1000))


def test_a_16_bit_sources_own_samples_are_written_back_undithered(tmp_path, rng):
    """Dither is for samples that must be rounded to 16 bits: one already on the grid
    (a 16-bit source's own, digital silence) was moved by up to 1 LSB, so an
    unedited 16-bit file exported to 16 bits differed from its source."""
    pcm = rng.integers(-20000, 20000, (2, 5000)).astype(np.int16)
    pcm[:, 1000:2000] = 0  # digital silence stays silent
    x = pcm.astype(np.float32) / np.float32(1 << 15)
    x[0, 3000:3100] += np.float32(0.3 / (1 << 15))  # off the grid: these get dither
    export(x, 8000, tmp_path / "d.wav", bit_depth="16")
    back = sf.read(tmp_path / "d.wav", dtype="int16", always_2d=True)[0].T
    on_grid = np.ones(x.shape, bool)
    on_grid[0, 3000:3100] = False
    np.testing.assert_array_equal(back[on_grid], pcm[on_grid])
    assert np.any(back[0, 3000:3100] != pcm[0, 3000:3100])


@pytest.mark.parametrize("bits,steps", [("16", 1 << 15), ("24", 1 << 23), ("32", 1 << 31)])
def test_integer_exports_round_each_sample_to_the_nearest_step(tmp_path, rng, bits, steps):
    """Undithered, every sample lands within half a step of what was given, full scale
    included (libsndfile 1.2, given floats, floors: up to a whole step low, half on
    average), and a sample already on a step comes back as it was."""
    x = rng.uniform(-0.999, 0.999, (2, 50_000)).astype(np.float32)
    x[:, :4] = [[1.0, -1.0, 3 / steps, -7 / steps], [0.0, 2.5 / steps, -2.5 / steps, 0.5]]
    export(x, 44100, tmp_path / "q.wav", bit_depth=bits, dither=False, block_frames=7_000)
    back = sf.read(tmp_path / "q.wav", dtype="float64", always_2d=True)[0].T
    error = (back - x) * steps
    assert back[0, 0] == (steps - 1) / steps and back[0, 1] == -1.0  # full scale, clipped
    assert np.all(np.abs(error[:, 2:]) <= 0.5) and abs(error.mean()) < 0.01
    assert back[0, 2] * steps == 3 and back[0, 3] * steps == -7 and back[1, 3] == 0.5
    assert back[1, 1] * steps == 2 and back[1, 2] * steps == -2  # ties to even


def test_24_bit_and_float_exports_are_not_dithered(tmp_path, rng):
    x = rng.uniform(-0.5, 0.5, (1, 1000)).astype(np.float32)
    assert not export(x, 8000, tmp_path / "a.wav", bit_depth="24").dithered
    assert not export(x, 8000, tmp_path / "b.wav").dithered


@pytest.mark.parametrize("seed", range(4))
def test_a_speaker_layout_is_kept_where_the_format_holds_it(tmp_path, seed):
    """A source's WAVE_FORMAT_EXTENSIBLE layout, any speakers in mask order, comes
    back from WAV and RF64 (in the mask libsndfile writes, its default for the count,
    it was lost: FL FR FC LFE SL SR read as FL FR FC LFE BL BR); FLAC keeps only its own
    order; every other format says it lost it."""
    from engine.io.audio import load
    from engine.io.layout import FLAC_ORDER, SPEAKERS, channel_mask

    rng = np.random.default_rng(seed)
    count = int(rng.integers(3, 9))
    names = tuple(SPEAKERS[i] for i in sorted(rng.choice(len(SPEAKERS), count, replace=False)))
    samples = (0.1 * rng.standard_normal((count, 2000))).astype(np.float32)
    mask = sum(1 << SPEAKERS.index(n) for n in names)
    for name in ("out.wav", "out.rf64"):
        report = export(samples, 48000, tmp_path / name, layout=names)
        assert channel_mask(tmp_path / name) == mask and report.not_kept == ()
        assert load(tmp_path / name).layout == names
    for name in ("out.flac", "out.aiff", "out.w64", "out.caf"):
        report = export(samples, 48000, tmp_path / name, layout=names)
        lost = [n for n in report.not_kept if "speaker layout" in n]
        assert lost == ([] if name == "out.flac" and FLAC_ORDER[count] == mask else
                        [f"the speaker layout {' '.join(names)} ({report.format} files have "
                         "no place for it; export WAV or RF64 to keep it)"])
    flac = tuple(SPEAKERS[b] for b in range(18) if FLAC_ORDER[count] >> b & 1)
    assert export(samples, 48000, tmp_path / "ok.flac", layout=flac).not_kept == ()
    plain = export(samples, 48000, tmp_path / "plain.wav", layout=())  # nothing declared
    assert plain.format == "WAV" and channel_mask(tmp_path / "plain.wav") is None
