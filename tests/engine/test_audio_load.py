"""Reading real files of every supported kind, and refusing bad ones clearly."""

import os
import struct

import numpy as np
import pytest
import soundfile as sf

from engine.errors import AudioError
from engine.io.audio import load


@pytest.mark.parametrize("name,subtype,tolerance", [
    ("u8.wav", "PCM_U8", 1 / 64), ("s16.wav", "PCM_16", 1 / 2**14),
    ("s24.wav", "PCM_24", 1 / 2**22), ("s32.wav", "PCM_32", 1e-7),
    ("f32.wav", "FLOAT", 0), ("f64.wav", "DOUBLE", 1e-7), ("s16.flac", "PCM_16", 1 / 2**14),
    ("s24.flac", "PCM_24", 1 / 2**22), ("s16.aiff", "PCM_16", 1 / 2**14),
])
def test_lossless_formats_decode_to_float32_in_range(write_audio, rng, name, subtype, tolerance):
    x = rng.uniform(-0.9, 0.9, (2, 4410)).astype(np.float32)
    audio = load(write_audio(name, x, 44100, subtype))
    assert audio.samples.dtype == np.float32
    assert audio.samples.shape == (2, 4410)
    assert audio.sample_rate == 44100 and audio.subtype == subtype
    assert np.max(np.abs(audio.samples - x)) <= tolerance
    assert audio.notes == []


def test_ogg_vorbis_decodes(write_audio):
    t = np.arange(48000) / 48000
    x = (0.5 * np.sin(2 * np.pi * 440 * t))[None].astype(np.float32)
    audio = load(write_audio("tone.ogg", x, 48000))
    assert audio.format == "OGG" and audio.channels == 1
    assert abs(audio.frames - 48000) < 1024  # vorbis may pad the last page
    assert 0.4 < audio.peak < 0.6


@pytest.mark.parametrize("channels", [1, 2, 3, 6, 8])
def test_any_channel_count(write_audio, rng, channels):
    x = rng.uniform(-0.5, 0.5, (channels, 1000)).astype(np.float32)
    audio = load(write_audio(f"c{channels}.wav", x, 48000, "FLOAT"))
    np.testing.assert_array_equal(audio.samples, x)


@pytest.mark.parametrize("rate", [8000, 22050, 44100, 48000, 96000, 192000])
def test_sample_rates(write_audio, rate):
    audio = load(write_audio(f"r{rate}.flac", np.zeros((1, 100), np.float32), rate))
    assert audio.sample_rate == rate and audio.duration == pytest.approx(100 / rate)


def test_progress_reaches_one_and_cancel_stops(write_audio, rng):
    import threading

    from engine.errors import Cancelled

    path = write_audio("long.wav", rng.uniform(-0.5, 0.5, (1, 600000)).astype(np.float32))
    seen = []
    load(path, progress=seen.append)
    assert seen[-1] == 1.0 and seen == sorted(seen)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        load(path, cancel=cancel)


# ---- bad input: one case each, the error names the file and says what to do ----

def _wav_bytes(tmp_path, frames=4800):
    path = tmp_path / "good.wav"
    sf.write(path, np.full((frames, 2), 0.25, np.float32), 48000, subtype="PCM_16")
    return path.read_bytes()


def test_missing_path(tmp_path):
    with pytest.raises(AudioError, match=r"nope\.wav: no such file; check the name"):
        load(tmp_path / "nope.wav")


def test_directory(tmp_path):
    with pytest.raises(AudioError, match=r"is a folder, not an audio file"):
        load(tmp_path)


def test_dangling_link(tmp_path):
    link = tmp_path / "link.wav"
    os.symlink(tmp_path / "gone.wav", link)
    with pytest.raises(AudioError, match=r"link\.wav: the link points to .*gone\.wav, which does "
                                         r"not exist"):
        load(link)


def test_empty_file(tmp_path):
    (tmp_path / "empty.wav").write_bytes(b"")
    with pytest.raises(AudioError, match=r"empty\.wav: the file is empty \(0 bytes\)"):
        load(tmp_path / "empty.wav")


def test_text_file(tmp_path):
    (tmp_path / "notes.wav").write_text("these are my notes, not audio\n" * 20)
    with pytest.raises(AudioError, match=r"notes\.wav: not a readable audio file .*convert"):
        load(tmp_path / "notes.wav")


def test_random_bytes(tmp_path, rng):
    (tmp_path / "noise.flac").write_bytes(rng.integers(0, 256, 5000, dtype=np.uint8).tobytes())
    with pytest.raises(AudioError, match=r"noise\.flac: not a readable audio file"):
        load(tmp_path / "noise.flac")


def test_truncated_header(tmp_path):
    (tmp_path / "head.wav").write_bytes(_wav_bytes(tmp_path)[:30])
    with pytest.raises(AudioError, match=r"head\.wav: not a readable audio file"):
        load(tmp_path / "head.wav")


def test_truncated_data_is_refused_then_opened_on_request(tmp_path):
    data = _wav_bytes(tmp_path)
    (tmp_path / "cut.wav").write_bytes(data[:len(data) // 2])
    with pytest.raises(AudioError, match=r"cut\.wav: the header declares 4800 frames but the "
                                         r"file holds only 2394.*--allow-truncated"):
        load(tmp_path / "cut.wav")
    audio = load(tmp_path / "cut.wav", allow_truncated=True)
    assert audio.frames == 2394 and "cut short" in audio.notes[0]


def test_header_that_lies_about_its_length(tmp_path):
    data = bytearray(_wav_bytes(tmp_path))
    at = data.find(b"data") + 4
    data[at:at + 4] = struct.pack("<I", 10**9)
    (tmp_path / "liar.wav").write_bytes(bytes(data))
    with pytest.raises(AudioError, match=r"liar\.wav: the header declares 250000000 frames but "
                                         r"the file holds only 4800"):
        load(tmp_path / "liar.wav")


def test_truncated_flac_stream(tmp_path, rng):
    path = tmp_path / "cut.flac"
    sf.write(path, rng.uniform(-0.5, 0.5, (48000, 2)), 48000, subtype="PCM_16")
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(AudioError, match=r"cut\.flac: the audio data is damaged after frame"):
        load(path)
    assert 0 < load(path, allow_truncated=True).frames < 48000


def test_zero_frames(tmp_path):
    path = tmp_path / "zero.wav"
    sf.write(path, np.zeros((0, 2), np.float32), 48000)
    with pytest.raises(AudioError, match=r"zero\.wav: the file holds no audio frames"):
        load(path)


def test_nan_and_inf_are_repaired_with_a_note(write_audio):
    x = np.array([[0.1, np.nan, np.inf, -np.inf, -0.2]], np.float32)
    path = write_audio("nan.wav", x, 8000, "FLOAT")
    before = path.read_bytes()
    audio = load(path)
    np.testing.assert_array_equal(audio.samples, np.float32([[0.1, 0.0, 1.0, -1.0, -0.2]]))
    assert audio.notes == ["3 samples were NaN or infinite and were repaired (NaN -> 0, "
                           "+inf -> +1, -inf -> -1); the file on disk is unchanged"]
    assert path.read_bytes() == before


def test_too_large_for_memory_is_refused_before_decoding(write_audio):
    path = write_audio("big.wav", np.zeros((2, 100000), np.float32))
    with pytest.raises(AudioError, match=r"big\.wav: decoding needs about .* GiB \(100000 frames "
                                         r"x 2 channels\) but only .* is available"):
        load(path, memory_limit=1_000_000)
    assert load(path, memory_limit=10_000_000).frames == 100000


def test_unreadable_permission(tmp_path, write_audio):
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    path = write_audio("locked.wav", np.zeros((1, 10), np.float32))
    path.chmod(0)
    with pytest.raises(AudioError, match="permission denied"):
        load(path)
