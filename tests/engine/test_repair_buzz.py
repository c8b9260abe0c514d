"""De-hum on buzz: mains hum with many strong harmonics, odd ones alone (a
transformer's or a saturated field's buzz) or the even ones alone (a rectifier's),
judged beside the plain tool, a notch comb told the frequency."""

import numpy as np
import pytest

from tests import takes

SR = 22050


def buzz(n: int, sr: int, rng, kind: str) -> tuple[np.ndarray, float, int]:
    """A buzz of ``n`` samples, peak 1: 50 or 60 Hz, up to 0.4 Hz off and drifting 0.1 Hz,
    10-15 strong harmonics at random levels (0.4-1) and phases: ``"odd"`` the odd ones
    (the even ones at most 0.1), ``"rectified"`` the even ones (a rectifier's, twice the
    mains frequency); or ``"decaying"``: 4-12 harmonics falling 0.75 each (as
    bench_repair's hum). With its mean fundamental and its highest harmonic number."""
    base = float(rng.choice([50.0, 60.0]))
    t = np.arange(n) / sr
    f = base + rng.uniform(-0.4, 0.4) + 0.1 * np.sin(2 * np.pi * t / rng.uniform(5, 20))
    phase = 2 * np.pi * np.cumsum(f) / sr
    count = int(rng.integers(10, 16))
    if kind == "odd":
        ks = np.arange(1, 2 * count + 1)
        levels = np.where(ks % 2, rng.uniform(0.4, 1, len(ks)), rng.uniform(0, 0.1, len(ks)))
    elif kind == "rectified":
        ks = np.arange(2, 2 * count + 1, 2)
        levels = rng.uniform(0.4, 1, len(ks))
    else:
        ks = np.arange(1, int(rng.integers(4, 13)) + 1)
        levels = rng.uniform(0.3, 1, len(ks)) * 0.75 ** (ks - 1)
    h = sum(a * np.sin(k * phase + rng.uniform(0, 2 * np.pi))
            for k, a in zip(ks, levels, strict=True))
    return h / np.abs(h).max(), float(f.mean()), int(ks[-1])


def notch_comb(y: np.ndarray, sr: int, *, f0: float, top: int) -> np.ndarray:
    """The plain tool: a notch (scipy iirnotch, Q 30, forward and back) at each harmonic
    of ``f0`` up to ``top`` below Nyquist."""
    from scipy import signal

    for k in range(1, top + 1):
        if k * f0 < sr / 2 - 100:
            b, a = signal.iirnotch(k * f0, 30.0, fs=sr)
            y = signal.filtfilt(b, a, y)
    return y


def buzzed(x: np.ndarray, rng, kind: str) -> tuple[np.ndarray, float, int]:
    """``x`` with a buzz 15-35 dB under its peak; the buzz's fundamental and top."""
    h, f0, top = buzz(len(x), SR, rng, kind)
    return x + h * np.abs(x).max() * 10 ** (rng.uniform(-35, -15) / 20), f0, top


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["odd", "rectified"])
def test_dehum_takes_buzz_as_well_as_a_notch_comb_told_its_frequency(kind):
    """Buzz with 10-15 strong harmonics under 8 real speech takes: de-hum's median
    PESQ-WB at least the notch comb's (told the frequency and the harmonics) less 0.05,
    and no take worse than its input by PESQ-WB or SI-SDR. Before de-hum refined the
    drift from every harmonic it found, took the harmonics standing out along it beside
    those that stand out of most 2 s stretches, and read each where little else sounds,
    its median was under the comb's (odd 1.9 against 2.2, rectified 1.9 against 2.3 on
    these takes): the 7th and higher harmonics were taken only 10 dB, a voice's pitch
    on one of the lowest two made it take nothing, and the voice leaked into what it
    took; now about 2.9 against the comb's 2.2-2.3."""
    from engine.measure.metrics import si_sdr_db
    from engine.repair import dehum
    from tests import material

    missing = takes.missing() or material.available()
    if missing:
        pytest.skip(missing)
    rng = np.random.default_rng(11)
    ours, comb = [], []
    for take in takes.clean_takes(seed=5, speech=8, sounds=0, music=0):
        x = take.samples.mean(0)
        y, f0, top = buzzed(x, rng, kind)
        out = dehum.run(y[None], SR).samples[0]
        before, after = material.pesq_wb(x, y), material.pesq_wb(x, out)
        assert after >= before - 0.05, (take.name, before, after)
        assert si_sdr_db(x, out) >= si_sdr_db(x, y) - 0.1, take.name
        ours.append(after)
        comb.append(material.pesq_wb(x, notch_comb(y, SR, f0=f0, top=top)))
    assert np.median(ours) >= np.median(comb) - 0.05, (np.round(ours, 2), np.round(comb, 2))
