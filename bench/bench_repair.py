"""Repair figures on a randomized set: the clean takes of tests/takes.py (speech,
recorded sounds, music mixed to mono, 22.05 kHz) under disturbances drawn per take,
repaired by the module, by the repair preset painted as a user would (on an STFT
and, for the first takes, a constant-Q document), and by a plain filter; judged
against the clean take by PESQ-WB and STOI (speech) and SI-SDR (all): median,
worst take, and how many takes a method made worse than the input by any measure.

- clicks: 1-8 samples, 1-50 per second, random polarity and size (from 0.05 to 2x
  the take's peak; some land in silence and fades). Module: de-click. Preset:
  heal, one vertical stroke per click (takes with at most 40 clicks). Plain:
  low-pass 5 kHz.
- hum: 50 or 60 Hz +- 0.5 Hz, drifting, 4-12 harmonics, -35 to -15 dB under the
  take's peak. Module: de-hum. Preset: harmonic-eraser along the nominal
  fundamental. Plain: notches at the nominal harmonics.
- whistle: 0.8-4 kHz, steady, gliding (up to +-30 %) or with vibrato, -30 to
  -10 dB under the peak, over most of the take. Preset: tone-remover along its
  track. Plain: a band-stop over the range it covers.

- hiss: white or pink, 0-20 dB SNR (bench_denoise's). Module: de-noise (the noise
  learnt from the take). Plain: sox noisered (its profile from a second of the same
  hiss alone, 0.21); noisereduce, and the voice de-noise module ("voice"), beside it.
- clipping: at 20-70 % of the peak, maybe asymmetric, wobbling or resampled, maybe
  scaled (bench_declip's). Module: de-clip. Plain: a cubic spline through the
  samples left, read across the clipped runs.

Their own benches (bench_denoise.py, bench_declip.py) give more: SNR bands, a
learnt profile, more takes and the speed.

    .venv/bin/python bench/bench_repair.py [--seed 1] [--no-write]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.runtime.device import pick_device  # noqa: E402
from tests import material, takes  # noqa: E402

SR = material.SR
CQ_TAKES = 6  # the constant-Q brush is painted on the first takes only (it is slow)
HEAL_MAX_CLICKS = 40


def clicks(x, rng):
    y, drawn = takes.clicks(x, rng, SR)
    return y, [("heal", [((i + length / 2) / SR, 0), ((i + length / 2) / SR, SR / 2)])
               for i, length in drawn]


def hum(x, rng):
    n = len(x)
    base = rng.choice([50.0, 60.0])
    t = np.arange(n) / SR
    f = base + rng.uniform(-0.4, 0.4) + 0.1 * np.sin(2 * np.pi * t / rng.uniform(5, 20))
    phase = 2 * np.pi * np.cumsum(f) / SR
    count = int(rng.integers(4, 13))
    h = sum(rng.uniform(0.3, 1) * 0.75 ** (k - 1) * np.sin(k * phase + rng.uniform(0, 6))
            for k in range(1, count + 1))
    h *= np.abs(x).max() * 10 ** (rng.uniform(-35, -15) / 20) / np.abs(h).max()
    return x + h, [("harmonic-eraser", [(0.0, base), (n / SR, base)])], base, count


def whistle(x, rng):
    n = len(x)
    kind = rng.choice(["steady", "glide", "vibrato"])
    f0 = rng.uniform(800, 4000)
    a, b = int(0.1 * n), int(0.9 * n)
    t = np.arange(b - a) / SR
    if kind == "steady":
        f = np.full(b - a, f0)
    elif kind == "glide":
        f = f0 * (1 + rng.uniform(-0.3, 0.3) * t / t[-1])
    else:
        f = f0 * (1 + 0.01 * np.sin(2 * np.pi * rng.uniform(4, 7) * t))
    w = np.zeros(n)
    env = np.minimum(1, np.minimum(np.arange(b - a), np.arange(b - a)[::-1]) / (0.02 * SR))
    w[a:b] = env * np.sin(2 * np.pi * np.cumsum(f) / SR)
    w *= np.abs(x).max() * 10 ** (rng.uniform(-30, -10) / 20)
    points = [((a + i) / SR, float(f[i])) for i in np.linspace(0, b - a - 1, 12).astype(int)]
    return x + w, [("tone-remover", points)], kind, (f.min(), f.max())


def plain(kind, y, info):
    from scipy import signal

    if kind == "clicks":
        return signal.sosfiltfilt(signal.butter(8, 5000, "low", fs=SR, output="sos"), y)
    if kind == "hum":
        base, count = info
        for k in range(1, count + 1):
            if k * base < SR / 2 - 100:
                b, a = signal.iirnotch(k * base, 30.0, fs=SR)
                y = signal.filtfilt(b, a, y)
        return y
    lo, hi = info[1]
    sos = signal.butter(4, [lo * 0.97, hi * 1.03], "bandstop", fs=SR, output="sos")
    return signal.sosfiltfilt(sos, y)


def painted(y, strokes, transform):
    from app.session.editor import Editor
    from engine.io.audio import Audio
    from engine.model.document import Document

    ed = Editor(Document(Audio(y[None].astype(np.float32), SR), transform=transform,
                         device="cpu"))
    for preset, points in strokes:
        ed.paint(preset, points)
    return ed.audio()[0].astype(np.float64)


def module(name, y):
    from app.session.editor import Editor
    from engine.io.audio import Audio
    from engine.model.document import Document

    ed = Editor(Document(Audio(y[None].astype(np.float32), SR), device="cpu"))
    ed.repair(name)
    return ed.audio()[0].astype(np.float64)


def scores(clean, test, speech):
    from engine.measure.metrics import si_sdr_db

    if speech:
        return material.scores(clean, test)
    return {"si_sdr": si_sdr_db(clean, test)}


def run(seed: int):
    rng = np.random.default_rng(seed)
    set_ = takes.clean_takes(sample_rate=SR, seed=seed)
    rows = {"clicks": [], "hum": [], "whistle": [], "hiss": [], "clipping": []}
    broadband = np.random.default_rng(seed + 2000)  # hiss and clipping's own draws
    seconds = {}
    for i, take in enumerate(set_):
        x = take.samples.mean(0)
        speech = take.kind == "speech" and len(x) > SR
        for kind in rows:
            if kind in ("hiss", "clipping"):
                rows[kind].append(_broadband(kind, x, speech, broadband))
                print(take.name, kind, {k: {m: round(v, 2) for m, v in s.items()}
                                        for k, s in rows[kind][-1].items()}, flush=True)
                continue
            if kind == "clicks":
                y, strokes = clicks(x, rng)
                info, name = None, "declick"
            elif kind == "hum":
                y, strokes, base, count = hum(x, rng)
                info, name = (base, count), "dehum"
            else:
                y, strokes, shape, span = whistle(x, rng)
                info, name = (shape, span), None
            row = {"input": scores(x, y, speech), "plain": scores(x, plain(kind, y, info), speech)}
            if name:
                t0 = time.perf_counter()
                row["module"] = scores(x, module(name, y), speech)
                seconds.setdefault(name, []).append(time.perf_counter() - t0)
            if kind != "clicks" or len(strokes) <= HEAL_MAX_CLICKS:
                row["preset, STFT"] = scores(x, painted(y, strokes, "stft"), speech)
                if i < CQ_TAKES:
                    row["preset, constant-Q"] = scores(x, painted(y, strokes, "cq"), speech)
            rows[kind].append(row)
            print(take.name, kind, {k: {m: round(v, 2) for m, v in s.items()}
                                    for k, s in row.items()}, flush=True)
    return rows, len(set_), seconds


def _broadband(kind: str, x: np.ndarray, speech: bool, rng) -> dict:
    """A take's scores under hiss or clipping: input, the module, the plain tool (and
    noisereduce, for hiss)."""
    from bench.bench_declip import clip, cubic_peer
    from bench.bench_denoise import hiss, sox_noisered

    if kind == "hiss":
        snr = rng.uniform(0, 20)
        noise = np.sqrt(np.mean(x ** 2)) * 10 ** (-snr / 20) * hiss(
            ("white", "pink")[rng.integers(2)], (1, len(x) + SR), rng)
        y = x + noise[0, SR:]
        import noisereduce

        outs = {"module": module("denoise", y),
                "plain": sox_noisered(y[None], noise[:, :SR], SR)[0],
                "noisereduce": noisereduce.reduce_noise(y=y, sr=SR),
                "voice": module("voice", y)}
    else:
        y = clip(x[None], rng)[0][0]
        outs = {"module": module("declip", y), "plain": cubic_peer(y[None])[0]}
    return {"input": scores(x, y, speech)} | {k: scores(x, v, speech) for k, v in outs.items()}


def table(rows, count, seed) -> str:
    methods = ("input", "module", "preset, STFT", "preset, constant-Q", "plain", "noisereduce",
               "voice")
    lines = [f"Seed {seed}: {count} clean takes of tests/takes.py at {SR} Hz (speech scored by "
             "PESQ-WB and STOI, every take by SI-SDR), each disturbance drawn per take (see "
             "bench/bench_repair.py). Cells: median / worst take; 'worse' counts the takes a "
             "method left worse than its input by any measure (PESQ -0.05, STOI -0.005, "
             "SI-SDR -0.1 dB).", "",
             "| disturbance | measure | " + " | ".join(methods) + " |",
             "|---|---|" + "---:|" * len(methods)]
    for kind, results in rows.items():
        for measure in ("pesq", "stoi", "si_sdr"):
            cells = []
            for m in methods:
                vals = [r[m][measure] for r in results if m in r and measure in r[m]]
                cells.append(f"{np.median(vals):.2f} / {min(vals):.2f}" if vals else "-")
            lines.append(f"| {kind} | {measure} | " + " | ".join(cells) + " |")
        worse = []
        for m in methods:
            done = [r for r in results if m in r]
            n = sum(any(r[m][k] < r["input"][k] - tol for k, tol in
                        (("pesq", 0.05), ("stoi", 0.005), ("si_sdr", 0.1)) if k in r[m])
                    for r in done)
            worse.append(f"{n} of {len(done)}" if done and m != "input" else "-")
        lines.append(f"| {kind} | worse | " + " | ".join(worse) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    missing = takes.missing() or material.available()
    if missing:
        sys.exit(f"bench_repair: {missing}")
    rows, count, seconds = run(args.seed)
    text = table(rows, count, args.seed) + "\nModule time per take (median): " + ", ".join(
        f"{k} {np.median(v):.2f} s" for k, v in seconds.items()) + ".\n"
    print(text)
    if not args.no_write:
        from bench.bench_engine import write_section

        write_section("bench_repair", "Repairs on a randomized set (cpu)", text,
                      pick_device("cpu"))


if __name__ == "__main__":
    main()
