"""De-click's detection on real takes with random clicks, and its numerics against a
naive reference (the whole table: bench/bench_declick.py)."""

import numpy as np
import pytest

from engine.repair import ar, declick
from tests import takes

pytestmark = pytest.mark.skipif(takes.missing() is not None, reason=takes.missing() or "")


def _judged(seed: int, sample_rate: int) -> tuple[list[bool], list[float]]:
    """Whether de-click's repairs covered each click drawn on the takes of ``seed`` (all of
    its samples), and the false clicks a second it found on each clean take."""
    rng = np.random.default_rng(1000 + seed)
    covered, false_rate = [], []
    for take in takes.clean_takes(sample_rate=sample_rate, seed=seed):
        x = take.samples.mean(0)
        y, drawn = takes.clicks(x, rng, sample_rate)
        events = declick.run(y[None], sample_rate).events
        mask = np.zeros(len(y), bool)
        for e in events:
            mask[e.start:e.start + e.length] = True
        covered += [bool(mask[i:i + length].all()) for i, length in drawn]
        false_rate.append(len(declick.run(x[None], sample_rate).events) / (len(x) / sample_rate))
    return covered, false_rate


@pytest.mark.slow
def test_declick_covers_random_clicks_at_a_bounded_false_rate():
    """Clicks as the issue draws them (tests.takes.clicks: 1-8 samples, 1-50 a second,
    random shape, size and polarity) on seed 3's 20 takes (espeak-ng speech, recorded
    sounds, asc-music; 22.05 kHz; seed 1 was the one de-click was developed on). Before
    the two-test detector, the one-sided extents and the clusters in silence, de-click's
    repairs covered 79.7 % of them (found 85.7 %) at a median of 1.94 false clicks a
    second on the clean takes (worst 8.4); now 87.1 % (88.8 %) at 1.10 (worst 2.6)."""
    covered, false_rate = _judged(3, 22050)
    assert np.mean(covered) >= 0.85, np.mean(covered)
    assert np.median(false_rate) <= 1.5 and max(false_rate) <= 4.0, false_rate


def _naive_interpolation(x, damaged, a):
    """LSAR by the book: minimise ||A x||^2 over the unknowns, A the full convolution
    matrix of the prediction-error filter, plus the prior (Bayesian LSAR) of ar.py."""
    n, p = len(x), len(a) - 1
    conv = np.zeros((n + p, n))
    for i in range(n):
        conv[i:i + p + 1, i] = a
    rows = np.array([np.all(~damaged[max(0, r - p):r + 1]) for r in range(p, n)])
    known = np.where(damaged, 0.0, x)
    residual = (conv @ known)[p:n][rows]
    signal = np.mean(known[~damaged] ** 2)
    ridge = ar.RIDGE * np.mean(residual ** 2) / signal
    u = np.flatnonzero(damaged)
    k = np.flatnonzero(~damaged)
    au, ak = conv[:, u], conv[:, k]
    lhs = au.T @ au + (ridge + 1e-12 * (a @ a)) * np.eye(len(u))
    return np.linalg.solve(lhs, -au.T @ (ak @ x[k]))


def test_batched_interpolation_matches_the_naive_one(rng):
    """ar.interpolate (Toeplitz normal equations, batched over rows with their own models
    and unknowns) against the textbook least squares, to 1e-9 of the signal."""
    p, length, rows = 8, 160, 5
    x = rng.standard_normal((rows, length)).cumsum(-1) * 0.01
    a = ar.levinson(ar.autocorrelation(x, p))
    unknown = np.zeros((rows, length), bool)
    for r in range(rows):
        for _ in range(r + 1):
            s = rng.integers(p, length - p - 8)
            unknown[r, s:s + rng.integers(1, 8)] = True
    values, variance = ar.interpolate(x, unknown, a)
    for r in range(rows):
        count = unknown[r].sum()
        want = _naive_interpolation(x[r], unknown[r], a[r])
        np.testing.assert_allclose(values[r, :count], want, atol=1e-9 * np.abs(x[r]).max())
        assert np.all(values[r, count:] == 0) and np.all(variance[r, :count] > 0)
