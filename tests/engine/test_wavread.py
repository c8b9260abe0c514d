"""The WAV fast path of features and batch (app.batch.wavread): the same float32
samples as libsndfile (engine.io.audio.load) bit for bit where it reads a file, and
libsndfile's behaviour and errors, unchanged, for everything else."""

import struct

import numpy as np
import pytest
import soundfile as sf
import torch

from app.batch import wavread
from app.batch.feature_jobs import decode, extract
from engine.io.audio import load
from engine.io.metadata import Metadata
from engine.measure.logmel import FeatureSettings

SR = 4096


def _write(path, rng, n, channels, subtype, rate=SR):
    x = rng.uniform(-1, 1, (n, channels))
    x[rng.random(n) < 0.01] = 1.0  # full scale, where a conversion's rounding shows
    sf.write(path, x.astype(np.float32), rate, subtype=subtype, format="WAV")
    return path


def _by_libsndfile(path):
    samples = load(path).samples
    return samples.mean(0) if samples.shape[0] > 1 else samples[0]


@pytest.mark.parametrize("subtype", ["PCM_16", "PCM_24", "PCM_32", "FLOAT"])
def test_each_subtype_is_read_as_libsndfile_reads_it(tmp_path, rng, subtype):
    for k in range(4):
        n, channels = int(rng.integers(1, 30000)), int(rng.integers(1, 4))
        path = _write(tmp_path / f"{k}.wav", rng, n, channels, subtype)
        where = wavread.layout(path, rate=SR)
        assert where is not None and (where.frames, where.channels) == (n, channels)
        samples = wavread.read(path, where)
        assert samples.dtype == np.float32 and np.array_equal(samples, load(path).samples)
        assert np.array_equal(decode(path, SR), _by_libsndfile(path))


def test_extensible_headers_are_read_and_a_chunk_after_the_data_is_walked(tmp_path, rng):
    x = rng.uniform(-1, 1, (5001, 2)).astype(np.float32)
    for subtype in ("PCM_24", "FLOAT"):
        path = tmp_path / f"{subtype}.wav"
        sf.write(path, x, SR, subtype=subtype, format="WAVEX")
        assert struct.unpack_from("<H", path.read_bytes(), 20)[0] == 0xFFFE
        assert wavread.layout(path, rate=SR) is not None
        assert np.array_equal(decode(path, SR), _by_libsndfile(path))
    body = path.read_bytes() + b"LIST" + struct.pack("<I", 5) + b"abcde\0"
    path.write_bytes(body[:4] + struct.pack("<I", len(body) - 8) + body[8:])
    assert wavread.layout(path, rate=SR) is not None
    assert np.array_equal(decode(path, SR), _by_libsndfile(path))


def test_what_the_fast_path_does_not_read_goes_through_libsndfile(tmp_path, rng):
    other_rate = _write(tmp_path / "rate.wav", rng, 3000, 1, "PCM_16", rate=8000)
    eight_bit = _write(tmp_path / "u8.wav", rng, 3000, 2, "PCM_U8")
    double = _write(tmp_path / "double.wav", rng, 3000, 1, "DOUBLE")
    nan = tmp_path / "nan.wav"
    sf.write(nan, np.array([0.5, np.nan, np.inf, -0.25], np.float32), SR, subtype="FLOAT")
    for path in (other_rate, eight_bit, double, nan):
        where = wavread.layout(path, rate=SR)
        assert where is None or wavread.read(path, where) is None, path
    assert np.array_equal(decode(eight_bit, SR), _by_libsndfile(eight_bit))
    assert decode(nan, SR).tolist() == [0.5, 0.0, 1.0, -0.25]  # load's repair
    assert len(decode(other_rate, SR)) == 1536  # resampled


@pytest.mark.parametrize("subtype", ["PCM_16", "PCM_24", "PCM_32", "FLOAT"])
def test_the_batch_decodes_a_plain_wav_as_load_does(tmp_path, rng, subtype):
    for k in range(4):
        n, channels = int(rng.integers(1, 30000)), int(rng.integers(1, 4))
        rate = int(rng.choice([8000, 22050, 44100, 96000]))
        path = _write(tmp_path / f"{k}.wav", rng, n, channels, subtype, rate=rate)
        fast, slow = wavread.plain_audio(path), load(path)
        assert fast is not None and fast.samples.dtype == np.float32
        assert np.array_equal(fast.samples, slow.samples) and fast.samples.flags.c_contiguous
        assert (fast.sample_rate, fast.path, fast.format, fast.subtype, fast.layout, fast.notes,
                fast.metadata) == (slow.sample_rate, slow.path, slow.format, slow.subtype,
                                   slow.layout, slow.notes, slow.metadata)


def test_a_wav_holding_more_than_its_samples_is_left_to_load(tmp_path, rng):
    """Speakers (EXTENSIBLE), tags, a bext chunk, markers: what the batch carries to
    its outputs, which only load reads; and what load repairs (NaN) or converts."""
    x = rng.uniform(-1, 1, (3000, 2)).astype(np.float32)
    sf.write(tmp_path / "speakers.wav", x, SR, subtype="PCM_16", format="WAVEX")
    assert load(tmp_path / "speakers.wav").layout == ("FL", "FR")
    for cid, body in ((b"LIST", b"INFOINAM\x05\0\0\0take\0\0"), (b"bext", bytes(602)),
                      (b"cue ", struct.pack("<I", 0)), (b"smpl", bytes(36))):
        path = _write(tmp_path / f"{cid.decode().strip()}.wav", rng, 3000, 1, "PCM_16")
        data = path.read_bytes()
        extra = cid + struct.pack("<I", len(body)) + body
        whole = data[:12] + extra + data[12:]
        path.write_bytes(whole[:4] + struct.pack("<I", len(whole) - 8) + whole[8:])
        assert wavread.layout(path, rate=SR) is not None  # a plain WAV to features
    eight_bit = _write(tmp_path / "u8.wav", rng, 3000, 2, "PCM_U8")
    nan = tmp_path / "nan.wav"
    sf.write(nan, np.array([0.5, np.nan, np.inf, -0.25], np.float32), SR, subtype="FLOAT")
    assert wavread.plain_audio(_write(tmp_path / "plain.wav", rng, 3000, 1, "PCM_16"))
    for path in [*tmp_path.glob("*.wav")]:
        if path.name != "plain.wav":
            assert wavread.plain_audio(path) is None, path
    assert load(tmp_path / "LIST.wav").metadata != Metadata()
    assert load(eight_bit).subtype == "PCM_U8" and load(nan).notes


def _truncated(path):
    body = path.read_bytes()
    path.write_bytes(body[:-101])
    return path


def _riff_size(delta):
    def edit(path):
        body = bytearray(path.read_bytes())
        body[4:8] = struct.pack("<I", len(body) - 8 + delta)
        path.write_bytes(bytes(body))
        return path
    return edit


def _data_size(value):
    def edit(path):
        body = bytearray(path.read_bytes())
        at = body.index(b"data") + 4
        body[at:at + 4] = struct.pack("<I", value)
        path.write_bytes(bytes(body))
        return path
    return edit


def _field(offset, fmt, value):
    def edit(path):
        body = bytearray(path.read_bytes())
        struct.pack_into(fmt, body, offset, value)
        path.write_bytes(bytes(body))
        return path
    return edit


HOSTILE = {"truncated data": _truncated, "riff size short": _riff_size(-10),
           "riff size long": _riff_size(1000), "data size huge": _data_size(0xFFFFFFF0),
           "data size zero": _data_size(0), "data size odd": _data_size(1001),
           "zero channels": _field(22, "<H", 0), "zero rate": _field(24, "<I", 0),
           "block align wrong": _field(32, "<H", 3), "bits 12": _field(34, "<H", 12),
           "format tag 2": _field(20, "<H", 2), "fmt chunk huge": _field(16, "<I", 1 << 30),
           "not wave": lambda p: (p.write_bytes(p.read_bytes()[:8] + b"AVI " +
                                                 p.read_bytes()[12:]), p)[1],
           "header only": lambda p: (p.write_bytes(p.read_bytes()[:30]), p)[1]}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_headers_give_libsndfile_s_outcome(tmp_path, rng, name):
    path = HOSTILE[name](_write(tmp_path / "x.wav", rng, 4000, 2, "PCM_16"))

    def outcome(read):
        try:
            return read().tolist()
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return f"{type(e).__name__}: {e}"

    fast, slow = outcome(lambda: decode(path, SR)), outcome(lambda: _by_libsndfile(path))
    assert fast == slow
    batch = outcome(lambda: (wavread.plain_audio(path) or load(path)).samples)
    assert batch == outcome(lambda: load(path).samples)
    if isinstance(slow, str):
        assert "\n" not in slow and str(path) in slow


def test_features_of_a_wav_equal_those_of_the_same_samples_as_flac(tmp_path, rng):
    """Through the whole job: the fast path's set equals libsndfile's bit for bit."""
    sets = {}
    for fmt in ("WAV", "FLAC"):
        folder = tmp_path / fmt
        folder.mkdir()
        paths = []
        for k, n in enumerate([300, 4096, 20001]):
            x = np.random.default_rng(k).integers(-32768, 32768, (n, 2), dtype=np.int16)
            paths.append(folder / f"{k}.{fmt.lower()}")
            sf.write(paths[-1], x, SR, subtype="PCM_16", format=fmt)
        extract(paths, folder / "out", FeatureSettings(subsegment=512, subsegment_hop=256),
                torch.device("cpu"))
        sets[fmt] = [np.load(folder / "out" / f"{name}.npy") for name in ("features",
                                                                          "mapping")]
    assert wavread.layout(tmp_path / "WAV" / "0.wav", rate=SR) is not None
    for wav, flac in zip(sets["WAV"], sets["FLAC"], strict=True):
        assert wav.tobytes() == flac.tobytes()
