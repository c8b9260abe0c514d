"""``specpaint features``: log-mel against librosa's, the mapping of files of unequal
length, dtypes, resampling and bad files."""

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from engine.measure.logmel import FeatureSettings, LogMel, items
from tests.cli_run import specpaint_here

SR = 4096


def librosa_log_mel(segment: np.ndarray) -> np.ndarray:
    import librosa

    power = librosa.feature.melspectrogram(y=segment.astype(np.float64), sr=SR, n_fft=64,
                                           hop_length=16, n_mels=32, center=True,
                                           pad_mode="reflect", power=2.0)
    return 10 * np.log10(np.maximum(power, 1e-10))


@pytest.fixture
def takes(tmp_path, rng):
    """Three files at 4096 Hz: shorter than a segment, 1 s, 2.3 s (uneven)."""
    folder = tmp_path / "in"
    folder.mkdir()
    lengths = {"a_short.wav": 300, "b_one.wav": SR, "c_odd.wav": int(2.3 * SR)}
    for name, n in lengths.items():
        t = np.arange(n) / SR
        x = 0.3 * np.sin(2 * np.pi * 440 * t) + rng.normal(0, 0.05, n)
        sf.write(folder / name, x.astype(np.float32), SR, subtype="FLOAT")
    return folder, lengths


def expected_items(n, seg=1024, seg_hop=512, sub=512, sub_hop=256):
    """The mapping the docs promise, by plain loops."""
    rows = []
    starts = [0] if n < seg else list(range(0, n - seg + 1, seg_hop))
    for si, s0 in enumerate(starts):
        for ui, u0 in enumerate(range(0, seg - sub + 1, sub_hop)):
            rows.append((si, ui, s0 + u0))
    return rows


@pytest.mark.slow
def test_features_match_librosa_and_the_mapping_points_at_them(takes, tmp_path):
    folder, lengths = takes
    out = tmp_path / "out"
    r = specpaint_here("features", folder, "-o", out, "--subsegment", "512:256", "--dtype",
                       "float32")
    assert r.returncode == 0, r.stderr
    features = np.load(out / "features.npy", mmap_mode="r")
    mapping = np.load(out / "mapping.npy", mmap_mode="r")
    manifest = json.loads((out / "manifest.json").read_text())
    want = [(i, *row) for i, n in enumerate(lengths.values()) for row in expected_items(n)]
    assert mapping.dtype == np.int64 and [tuple(r) for r in mapping] == want
    assert features.shape == (len(want), 32, 33) and features.dtype == np.float32
    assert [f["items"] for f in manifest["files"]] == [len(expected_items(n))
                                                       for n in lengths.values()]
    assert manifest["mapping"]["columns"] == ["file", "segment", "subsegment", "start_sample"]
    assert manifest["parameters"]["subsegment"] == 512 and "torch" in manifest["versions"]
    audio = [sf.read(folder / name, dtype="float32")[0] for name in lengths]
    for k in [0, 1, 5, len(want) - 1]:  # the short file's padded one, middles, the last
        f, _, _, start = mapping[k]
        x = np.zeros(max(len(audio[f]), 1024), np.float32)
        x[:len(audio[f])] = audio[f]
        ref = librosa_log_mel(x[start:start + 512])
        loud = ref > -80  # where float32 rounding is far below the level
        np.testing.assert_allclose(features[k][loud], ref[loud], atol=0.02)  # dB


@pytest.mark.slow
def test_pooled_features_are_the_mean_or_max_of_an_item_s_frames(takes, tmp_path):
    """--pool mean|max through the command: ``[items, n_mels, 1]``, equal to pooling the
    full frames in numpy (float64) within float32 rounding, and to librosa's."""
    folder, lengths = takes
    sets = {}
    for pool in (None, "mean", "max"):
        out = tmp_path / str(pool)
        r = specpaint_here("features", folder, "-o", out, "--subsegment", "512:256", "--dtype",
                           "float32", *(["--pool", pool] if pool else []))
        assert r.returncode == 0, r.stderr
        sets[pool] = np.load(out / "features.npy")
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["parameters"]["pool"] == pool == manifest["features"]["pool"]
    full = sets[None].astype(np.float64)
    mapping = np.load(tmp_path / "None" / "mapping.npy")
    audio = [sf.read(folder / name, dtype="float32")[0] for name in lengths]
    for pool, reduce in (("mean", np.mean), ("max", np.max)):
        assert sets[pool].shape == full.shape[:2] + (1,)
        np.testing.assert_allclose(sets[pool][..., 0], reduce(full, -1), atol=1e-4)
        for k in [0, 1, 5, len(mapping) - 1]:
            f, _, _, start = mapping[k]
            x = np.zeros(max(len(audio[f]), 1024), np.float32)
            x[:len(audio[f])] = audio[f]
            ref = reduce(librosa_log_mel(x[start:start + 512]), -1)
            np.testing.assert_allclose(sets[pool][k, :, 0], ref, atol=0.02)  # dB


@pytest.mark.slow
def test_float16_storage_and_resampling(tmp_path, rng):
    folder = tmp_path / "in"
    folder.mkdir()
    n = 8000 * 3 + 17
    x = rng.normal(0, 0.1, n).astype(np.float32)
    sf.write(folder / "eight.wav", x, 8000, subtype="PCM_16")
    out = tmp_path / "out"
    r = specpaint_here("features", folder / "eight.wav", "-o", out)
    assert r.returncode == 0, r.stderr
    features = np.load(out / "features.npy", mmap_mode="r")
    manifest = json.loads((out / "manifest.json").read_text())
    resampled = -(-n * SR // 8000)  # soxr gives ceil(n * 4096 / 8000) samples
    assert manifest["files"][0]["samples"] == resampled
    assert features.dtype == np.float16 and features.shape[0] == 1 + (resampled - 1024) // 512
    assert np.isfinite(features).all() and features.min() >= -100


@pytest.mark.slow
def test_a_bad_file_is_listed_and_the_rest_written(takes, tmp_path):
    folder, lengths = takes
    (folder / "broken.wav").write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunk")
    out = tmp_path / "out"
    r = specpaint_here("features", folder, "-o", out)
    assert r.returncode == 1 and "broken.wav" in r.stderr and "Traceback" not in r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    broken = [f for f in manifest["files"] if "broken" in f["path"]][0]
    assert broken["items"] == 0 and "not a readable audio file" in broken["error"]
    assert set(np.load(out / "mapping.npy")[:, 0]) == {0, 1, 3}  # broken.wav is file 2
    assert not list(out.glob(".*.part"))


@pytest.mark.parametrize("args,match", [(["--segment", "1024"], "LENGTH:HOP"),
                                        (["--n-fft", "2048"], "longer than a"),
                                        (["--subsegment", "2048:256"], "must fit"),
                                        # found by fuzzing: 1024 frames, not 1025, were
                                        # computed, and the set's header said 1025
                                        (["--n-fft", "1"], "use an even FFT size"),
                                        (["--n-fft", "33"], "use an even FFT size")])
def test_bad_parameters(takes, tmp_path, args, match):
    r = specpaint_here("features", takes[0], "-o", tmp_path / "out", *args)
    assert r.returncode == 2 and match in r.stderr


def test_the_gpu_path_nnaudios_layer_gives_the_cpu_paths_numbers(rng):
    """On a GPU the features come from nnAudio's layer, on the CPU from torch.stft with
    the layer's filterbank (faster there): the same numbers (both run here)."""
    mel = LogMel(FeatureSettings(), torch.device("cpu"))
    x = torch.from_numpy(rng.normal(0, 0.1, (16, 1024)).astype(np.float32))
    assert not mel.use_layer
    cpu_path = mel(x)
    mel.use_layer = True
    torch.testing.assert_close(cpu_path, mel(x), atol=1e-3, rtol=0)  # dB


def test_items_of_a_file(rng):
    s = FeatureSettings()
    assert items([300], s)[1].tolist() == [[0, 0, 0]]
    assert items([2048], s)[1][:, 2].tolist() == [0, 512, 1024]
    for seg, sub in [((1024, 512), (512, 256)), ((700, 300), (None, None)), ((64, 7), (33, 5))]:
        lengths = rng.integers(1, 5000, size=rng.integers(1, 9))
        file, table = items(lengths, FeatureSettings(segment=seg[0], segment_hop=seg[1],
                                                     subsegment=sub[0], subsegment_hop=sub[1]))
        want = [(i, *row) for i, n in enumerate(lengths)
                for row in expected_items(n, *seg, *(sub if sub[0] else (seg[0], seg[0])))]
        assert np.column_stack([file, table]).tolist() == [list(w) for w in want]


def _run(paths, out):
    from app.batch.feature_jobs import extract

    return extract(paths, out, FeatureSettings(), torch.device("cpu"))


def test_open_set_refuses_files_that_do_not_belong_together(takes, tmp_path):
    from app.batch.feature_jobs import open_set
    from engine.errors import ParameterError

    folder, _ = takes
    paths = sorted(folder.glob("*.wav"))
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    _run(paths, a)
    _run(paths[:2], b)
    _run(paths[::-1], c)  # the same shapes, other contents
    whole = open_set(a, verify=True)
    assert whole.features.shape[0] == len(whole.mapping) and len(whole.manifest["run"]) == 32
    (a / "features.npy").write_bytes((b / "features.npy").read_bytes())
    with pytest.raises(ParameterError, match="features.npy: is not the features manifest.json "
                                             "describes"):
        open_set(a)
    (c / "mapping.npy").write_bytes((a / "mapping.npy").read_bytes())
    open_set(c)  # sizes and shapes agree: only the checksum tells
    with pytest.raises(ParameterError, match="mapping.npy: is not the mapping"):
        open_set(c, verify=True)
    (b / "manifest.json").unlink()
    with pytest.raises(ParameterError, match="no manifest.json, so no whole feature set"):
        open_set(b)


@pytest.mark.slow
def test_a_kill_right_after_the_features_are_renamed_leaves_no_mixed_set(takes, tmp_path,
                                                                          monkeypatch):
    """Issue 37: killed right after features.npy was renamed, a run left the new features
    beside the old mapping and manifest, and the set loaded (8 of 8 targeted kills). Now
    the manifest is gone until the new set is whole: the folder holds one run's files
    with their manifest, or is refused; the next run leaves no temporary file."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from engine.errors import ParameterError
    from tests.cli_run import ROOT

    folder, _ = takes
    paths = sorted(folder.glob("*.wav"))
    old, new, out = tmp_path / "old", tmp_path / "new", tmp_path / "out"
    for where, some in ((old, paths[:1]), (new, paths), (out, paths[:1])):
        _run(some, where)
    before = (out / "features.npy").stat().st_ino
    exe = Path(sys.executable).with_name("specpaint")
    proc = subprocess.Popen(([str(exe)] if exe.exists() else [sys.executable, "-m", "app.main"])
                            + ["features", *map(str, paths), "-o", str(out)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "SPECPAINT_DEVICE": "cpu"})
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if os.stat(out / "features.npy").st_ino != before:
                break
        except FileNotFoundError:
            pass
    proc.send_signal(signal.SIGSTOP)
    proc.kill()
    proc.wait()
    if (out / "manifest.json").exists():
        files = len(json.loads((out / "manifest.json").read_text())["files"])
        whole = {1: old, 3: new}[files]
        for name in ("features.npy", "mapping.npy"):
            assert (out / name).read_bytes() == (whole / name).read_bytes(), name
    else:
        from app.batch.feature_jobs import open_set

        with pytest.raises(ParameterError, match="no manifest.json"):
            open_set(out)
    from engine.io import atomic

    monkeypatch.setattr(atomic, "SWEEP_SECONDS", 0.0)  # this process listed out just now
    left = list(out.glob(".*.part"))  # none if the kill came after the whole set was written
    manifest = _run(paths, out)
    said = any("left by a write that was interrupted" in n for n in manifest.get("notes", []))
    assert said == bool(left), (left, manifest.get("notes"))
    assert list(out.glob(".*.part")) == []
    assert sorted(p.name for p in out.iterdir()) == ["features.npy", "manifest.json",
                                                      "mapping.npy"]


def test_frames_computed_once_for_overlapping_items_equal_each_item_s_own(rng):
    """LogMel.of_starts (the CPU's path: each frame of the hop grid once, an item's
    end frames mirrored as torch.stft mirrors them) against torch.stft of each item."""
    for _ in range(12):
        hop = int(rng.choice([4, 8, 16]))
        n_fft = hop * int(rng.choice([2, 4, 8]))
        length = int(rng.integers(n_fft + 1, 700))
        s = FeatureSettings(n_fft=n_fft, hop=hop, n_mels=8, segment=length,
                            segment_hop=hop * int(rng.integers(1, 40)),
                            pool=rng.choice([None, "mean", "max"]))
        mel = LogMel(s, torch.device("cpu"))
        x = rng.normal(0, 0.3, 20000).astype(np.float32)
        x[rng.integers(0, 19000):][:500] = 0  # silence: the floor
        starts = np.sort(rng.choice(np.arange(0, 20000 - length, hop), 300, replace=False))
        assert mel.shares_frames(starts)
        want = mel(torch.from_numpy(x[starts[:, None] + np.arange(length)]))
        got = mel.of_starts(x, starts)
        assert got.shape == want.shape == (300, 8, s.stored_frames)
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-3)  # dB
    assert not mel.shares_frames(starts + 1)  # off the hop's grid: item by item
