"""De-clip (engine.repair.declip) on real recordings clipped as a recording chain does:
it restores, stays consistent (reliable samples bit-exact, restored ones beyond the
clip level with their sign, within the headroom), finds clipping below full scale
and with wobble, and changes nothing where nothing clipped. The randomized figures
are bench/bench_declip.py."""

import functools
import threading

import numpy as np
import pytest

from engine.errors import Cancelled
from engine.measure.metrics import si_sdr_db
from engine.repair import declip
from engine.repair.declip_detect import find_clipping
from tests import takes

pytestmark = pytest.mark.skipif(takes.missing() is not None, reason=takes.missing() or "")


@functools.cache
def _takes(sample_rate: int, music: int = 1):
    return takes.clean_takes(sample_rate=sample_rate, seed=4, speech=2, sounds=0, music=music,
                             music_seconds=4.0)


def _clipped(x: np.ndarray, ratio: float, low_ratio: float | None = None):
    high = ratio * np.max(np.abs(x))
    low = high if low_ratio is None else low_ratio * np.max(np.abs(x))
    return np.clip(x, -low, high), high, low


def _check_consistent(x: np.ndarray, y: np.ndarray, high: float, low: float):
    """Unclipped samples bit-exact; clipped ones at or beyond their level, same sign."""
    assert np.isfinite(y).all()
    top, bottom = x >= high, x <= -low
    assert np.array_equal(y[~(top | bottom)], x[~(top | bottom)])
    assert np.all(y[top] >= high) and np.all(y[bottom] <= -low)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_restores_speech_and_music_clipped_at_30_percent(index):
    clean = _takes(22050)[index].samples
    x, high, low = _clipped(clean, 0.3)
    out = declip.run(x, 22050)
    _check_consistent(x, out.samples, high, low)
    gain = si_sdr_db(clean, out.samples) - si_sdr_db(clean, x)
    assert gain > 3.0, gain
    assert out.summary.startswith(f"{len(out.events)} clipped runs")
    assert f"clip level {20 * np.log10(high):.1f} dBFS" in out.summary


def test_nothing_clipped_changes_nothing():
    for take in _takes(22050):
        out = declip.run(take.samples, 22050)
        assert out.samples is take.samples and out.summary == "" and out.events == []


def test_finds_clipping_below_full_scale_with_wobble_and_asymmetric_levels():
    rng = np.random.default_rng(5)
    clean = _takes(22050)[1].samples[0]
    x, high, low = _clipped(clean, 0.35, 0.25)
    hit = (x >= high) | (x <= -low)
    x[hit] *= 1 + rng.uniform(-0.005, 0.005, np.count_nonzero(hit))
    x *= 0.3 / high  # scaled after clipping: the level is far below full scale
    found = find_clipping(x)
    assert found.levels[0] == pytest.approx(0.3, rel=0.01)
    assert found.levels[1] == pytest.approx(0.3 * low / high, rel=0.01)
    covered = np.zeros(len(x), bool)
    for s, e in found.runs:
        covered[s:e] = True
    assert covered[hit].mean() > 0.9, covered[hit].mean()
    # unclipped samples within the wobble of the level cannot be told apart; few are
    assert np.count_nonzero(covered[~hit]) < 0.1 * np.count_nonzero(hit)


def test_finds_and_restores_clipping_a_resampler_made_wobble_and_overshoot():
    clean = _takes(22050)[0].samples
    x, high, _ = _clipped(clean, 0.3)
    x = takes.resample(takes.resample(x, 22050, 44100), 44100, 22050)[:, :clean.shape[1]]
    assert np.max(x) > 1.02 * high  # the peak is no longer the level
    out = declip.run(x, 22050)
    assert f"clip level {20 * np.log10(high):.1f} dBFS" in out.summary
    assert si_sdr_db(clean, out.samples) > si_sdr_db(clean, x) + 3.0


def test_headroom_caps_the_restored_peak():
    clean = _takes(22050)[0].samples
    x, high, _ = _clipped(clean, 0.25)
    out = declip.run(x, 22050, headroom_db=1.0)
    assert np.max(np.abs(out.samples)) <= high * 10 ** (1.0 / 20) * (1 + 1e-12)
    assert np.max(np.abs(out.samples)) > high
    assert f"peak now {20 * np.log10(np.max(np.abs(out.samples))):.1f} dBFS" in out.summary


def test_stereo_channels_with_their_own_levels_and_a_forced_threshold():
    clean = _takes(22050)[2].samples
    left, high, low = _clipped(clean[:1], 0.4)
    right = np.clip(clean[1:], -0.6 * high, 0.6 * high)
    x = np.concatenate([left, right])
    out = declip.run(x, 22050)
    _check_consistent(x[:1], out.samples[:1], high, low)
    _check_consistent(x[1:], out.samples[1:], 0.6 * high, 0.6 * high)
    assert {e.channel for e in out.events} == {0, 1}
    forced = declip.run(x[1:], 22050, threshold=0.6 * high)
    _check_consistent(x[1:], forced.samples, 0.6 * high, 0.6 * high)
    assert f"clip level {20 * np.log10(0.6 * high):.1f} dBFS" in forced.summary


@pytest.mark.parametrize("sample_rate", [8000, 96000])
def test_other_rates(sample_rate):
    clean = _takes(sample_rate, music=0)[0].samples
    x, high, low = _clipped(clean, 0.3)
    out = declip.run(x, sample_rate)
    _check_consistent(x, out.samples, high, low)
    assert si_sdr_db(clean, out.samples) > si_sdr_db(clean, x) + 2.0


def test_progress_and_cancel():
    x, _, _ = _clipped(_takes(22050)[0].samples, 0.3)
    seen = []
    declip.run(x, 22050, progress=seen.append)
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        declip.run(x, 22050, cancel=cancel)
