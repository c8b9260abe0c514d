"""De-noise figures on a randomized set: the clean takes of tests/takes.py (speech,
recorded sounds, music) under white or pink hiss at 0-20 dB SNR (drawn per take),
de-noised by engine.repair.denoise (noise learnt from the take, and from a second
of the same hiss alone, as a user marks a noise-only selection; amount 24 dB, the
default, and 12 dB learnt), beside noisereduce (default, and stationary=True) and
sox noisered (profile from that second, 0.21). Judged against the clean take by
PESQ-WB and STOI (speech) and SI-SDR (all takes), per SNR band: median and worst
take. Then the time to de-noise 10 minutes of stereo at 44.1 kHz, noisereduce
timed beside it.

    .venv/bin/python bench/bench_denoise.py [--seeds 1 2 3] [--runs 3] [--no-speed]
    .venv/bin/python bench/bench_denoise.py --seeds 1 2 --count 8 --colours [KIND ...] [--music 4]
    .venv/bin/python bench/bench_denoise.py --seeds 1 3 4 --voice-over-music

--colours: speech under white, pink or brown hiss or a fan spinning up (PESQ-WB), and
music excerpts under the same hiss (SI-SDR), beside noisereduce told the noise; then
de-noise on clean takes.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.repair import denoise  # noqa: E402
from tests import material, takes  # noqa: E402

SR = material.SR
BANDS = ((0, 5), (5, 15), (15, 20))
METHODS = ("input", "ours", "ours, profile", "ours, 12 dB", "noisereduce", "noisereduce stationary",
           "sox")
MEASURES = ("pesq", "stoi", "si_sdr")


def hiss(kind: str, shape: tuple, rng, sample_rate: int = SR) -> np.ndarray:
    """White, pink (-3 dB per octave) or brown (-6 dB per octave above 20 Hz, flat
    below: a rumble, not a drift) Gaussian noise of unit RMS."""
    white = rng.standard_normal(shape)
    if kind in ("pink", "brown"):
        spectrum = np.fft.rfft(white, axis=-1)
        f = np.arange(spectrum.shape[-1])
        if kind == "pink":
            spectrum[..., 1:] /= np.sqrt(f[1:])
        else:
            spectrum /= np.maximum(f, 20.0 * shape[-1] / sample_rate)
        spectrum[..., 0] = 0
        white = np.fft.irfft(spectrum, shape[-1], axis=-1)
    return white / np.sqrt(np.mean(white ** 2))


def noisy_set(seed: int, sample_rate: int = SR):
    """(take, hiss kind, SNR dB, noisy samples, one second of the hiss alone) per take."""
    rng = np.random.default_rng(seed + 1000)
    out = []
    for take in takes.clean_takes(sample_rate=sample_rate, seed=seed):
        kind, snr = ("white", "pink")[rng.integers(2)], float(rng.uniform(0, 20))
        level = np.sqrt(np.mean(take.samples ** 2)) * 10 ** (-snr / 20)
        noise = level * hiss(kind, (take.samples.shape[0], take.samples.shape[1] + sample_rate),
                             rng)
        out.append((take, kind, snr, take.samples + noise[:, sample_rate:],
                    noise[:, :sample_rate]))
    return out


def sox_noisered(noisy: np.ndarray, profile: np.ndarray, sample_rate: int) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        src, prof, out, noise = (str(Path(tmp) / n) for n in ("in.wav", "p", "out.wav", "n.wav"))
        sf.write(src, noisy.T, sample_rate, subtype="FLOAT")
        sf.write(noise, profile.T, sample_rate, subtype="FLOAT")
        subprocess.run(["sox", noise, "-n", "noiseprof", prof], check=True, capture_output=True)
        subprocess.run(["sox", src, "-e", "floating-point", out, "noisered", prof, "0.21"],
                       check=True, capture_output=True)
        y, _ = sf.read(out, dtype="float64", always_2d=True)
    y = y.T[:, :noisy.shape[1]]  # sox's noisered drops the last window: zeros there
    return np.pad(y, ((0, 0), (0, noisy.shape[1] - y.shape[1])))


def processed(method: str, noisy: np.ndarray, profile: np.ndarray, sr: int) -> np.ndarray:
    import noisereduce

    if method == "input":
        return noisy
    if method == "ours":
        return denoise.run(noisy, sr).samples
    if method == "ours, profile":
        return denoise.run(noisy, sr, profile=profile).samples
    if method == "ours, 12 dB":
        return denoise.run(noisy, sr, amount_db=12.0).samples
    if method == "sox":
        return sox_noisered(noisy, profile, sr)
    stationary = method == "noisereduce stationary"
    return np.atleast_2d(noisereduce.reduce_noise(y=noisy, sr=sr, stationary=stationary))


def take_scores(take, test: np.ndarray) -> dict:
    """The measures averaged over channels; PESQ and STOI for speech only."""
    per = []
    for c in range(take.samples.shape[0]):
        if take.kind == "speech":
            per.append(material.scores(take.samples[c], test[c]))
        else:
            from engine.measure.metrics import si_sdr_db

            per.append({"si_sdr": si_sdr_db(take.samples[c], test[c])})
    return {m: float(np.mean([p[m] for p in per])) for m in per[0]}


def measure(seed: int, methods=METHODS) -> list[dict]:
    rows = []
    for take, kind, snr, noisy, profile in noisy_set(seed):
        row = {"take": take.name, "kind": kind, "snr": snr}
        for method in methods:
            row[method] = take_scores(take, processed(method, noisy, profile, take.sample_rate))
        rows.append(row)
        print(f"{take.name:36s} {kind} {snr:5.1f} dB  " + "  ".join(
            f"{m}: " + "/".join(f"{v:.2f}" for v in row[m].values()) for m in methods),
            flush=True)
    return rows


def worse_than_input(rows, method: str) -> list[str]:
    return [f"{r['take']} ({m} {r[method][m]:.2f} < {r['input'][m]:.2f})"
            for r in rows for m in r["input"] if r[method][m] < r["input"][m] - 1e-9]


def band_table(rows, methods=METHODS) -> str:
    lines = ["| SNR band | takes | measure | " + " | ".join(methods) + " |",
             "|---|---:|---|" + "---:|" * len(methods)]
    for lo, hi in BANDS:
        band = [r for r in rows if lo <= r["snr"] < hi or (hi == 20 and r["snr"] == 20)]
        for m in MEASURES:
            have = [r for r in band if m in r["input"]]
            if not have:
                continue
            cells = [f"{np.median([r[k][m] for r in have]):.2f} / "
                     f"{min(r[k][m] for r in have):.2f}" for k in methods]
            lines.append(f"| {lo}-{hi} dB | {len(have)} | {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def speed(runs: int) -> str:
    """Seconds to de-noise 10 minutes of stereo at 44.1 kHz (median of ``runs``),
    noisereduce (stationary, and default) timed beside it."""
    import noisereduce

    sr, n = 44100, 600 * 44100
    music = [t.samples for t in takes.clean_takes(sample_rate=sr, seed=1, speech=0, sounds=0,
                                                   music=3)]
    x = np.tile(np.concatenate(music, axis=1), (1, n // sum(m.shape[1] for m in music) + 1))
    x = x[:, :n] + 0.01 * hiss("pink", (2, n), np.random.default_rng(0))
    timed = {"ours": lambda: denoise.run(x, sr),
             "ours, adaptive": lambda: denoise.run(x, sr, adaptive=True),
             "noisereduce stationary": lambda: noisereduce.reduce_noise(y=x, sr=sr,
                                                                       stationary=True),
             "noisereduce": lambda: noisereduce.reduce_noise(y=x, sr=sr)}
    seconds = {k: [] for k in timed}
    for _ in range(runs):
        for name, work in timed.items():
            t0 = time.perf_counter()
            work()
            seconds[name].append(time.perf_counter() - t0)
    return (f"10 min stereo 44.1 kHz, median of {runs} run(s) on this 2-core CPU (shared): "
            + ", ".join(f"{k} {np.median(v):.1f} s" for k, v in seconds.items()))


COLOURS = ("white", "pink", "brown")
COLOUR_METHODS = ("input", "ours", "ours, profile", "noisereduce stationary, told")
RAMP_METHODS = ("input", "ours", "ours, adaptive", "ours, tonal", "ours, adaptive + tonal",
                "ours, profile", "noisereduce stationary, told", "noisereduce")


def fan(shape: tuple, rng, sample_rate: int = SR) -> np.ndarray:
    """A fan spinning up: pink hiss and a blade tone (80-400 Hz, with its 2nd and 3rd
    harmonics 6 and 12 dB down; as loud as the hiss, within 3 dB either way) whose
    level ramps up by 12 dB over the samples; unit RMS."""
    n = shape[-1]
    t = np.arange(n) / sample_rate
    f0 = rng.uniform(80, 400)
    tone = sum(0.5 ** k * np.sin(2 * np.pi * (k + 1) * f0 * t + rng.uniform(0, 2 * np.pi))
               for k in range(3))
    tone = tone / np.sqrt(np.mean(tone ** 2)) * 10 ** (rng.uniform(-3, 3) / 20)
    x = (hiss("pink", shape, rng, sample_rate) + tone) * 10 ** (np.linspace(-12, 0, n) / 20)
    return x / np.sqrt(np.mean(x ** 2))


def speech_under(kind: str, seed: int, count: int, sample_rate: int = SR, *,
                 music: bool = False):
    """(take, SNR dB, noisy, noise told) for ``count`` speech takes (``music``: music
    excerpts) of ``seed`` under ``kind`` noise (white, pink, brown: the noise told is one
    second of it alone before the take; fan: the whole fan noise added) at 0-20 dB SNR
    drawn per take."""
    rng = np.random.default_rng(seed + (4000 if music else 0) + (
        2000 + COLOURS.index(kind) if kind in COLOURS else 3000))
    out = []
    for take in takes.clean_takes(sample_rate=sample_rate, seed=seed, sounds=0,
                                  speech=0 if music else count, music=count if music else 0):
        snr = float(rng.uniform(0, 20))
        level = np.sqrt(np.mean(take.samples ** 2)) * 10 ** (-snr / 20)
        n = take.samples.shape[1]
        if kind == "fan":
            noise = level * fan(take.samples.shape, rng, sample_rate)
            out.append((take, snr, take.samples + noise, noise))
        else:
            noise = level * hiss(kind, (take.samples.shape[0], n + sample_rate), rng,
                                 sample_rate)
            out.append((take, snr, take.samples + noise[:, sample_rate:], noise[:, :sample_rate]))
    return out


def run_method(method: str, noisy: np.ndarray, told: np.ndarray, sr: int) -> np.ndarray:
    import noisereduce

    if method == "input":
        return noisy
    if method == "noisereduce stationary, told":
        return np.atleast_2d(noisereduce.reduce_noise(y=noisy, sr=sr, stationary=True,
                                                      y_noise=told))
    if method == "noisereduce":
        return np.atleast_2d(noisereduce.reduce_noise(y=noisy, sr=sr))
    if method == "ours, profile":
        return denoise.run(noisy, sr, profile=told[:, :10 * sr]).samples
    return denoise.run(noisy, sr, adaptive="adaptive" in method, tonal="tonal" in method).samples


def _pesq(clean: np.ndarray, test: np.ndarray, sr: int) -> float:
    from pesq import pesq

    ref16, test16 = (takes.resample(v, sr, 16000)[0] for v in (clean, test))
    return float(pesq(16000, ref16, test16, "wb"))


def colour_rows(kinds, seeds, count: int, music: int = 4) -> dict:
    """Per kind and method, the list over takes of PESQ-WB of the speech and (hiss
    only) of SI-SDR of ``music`` excerpts a seed under the same kind of noise."""
    from engine.measure.metrics import si_sdr_db

    got = {}
    for kind in kinds:
        methods = RAMP_METHODS if kind == "fan" else COLOUR_METHODS
        got[kind] = {"pesq": {m: [] for m in methods}}
        for seed in seeds:
            for take, snr, noisy, told in speech_under(kind, seed, count):
                for m in methods:
                    got[kind]["pesq"][m].append(_pesq(take.samples[0], run_method(
                        m, noisy, told, take.sample_rate)[0], take.sample_rate))
                print(f"{kind:5s} {take.name:36s} {snr:5.1f} dB  " + "  ".join(
                    f"{m}: {got[kind]['pesq'][m][-1]:.2f}" for m in methods), flush=True)
        if kind == "fan" or not music:
            continue
        got[kind]["si_sdr"] = {m: [] for m in methods}
        for seed in seeds:
            for take, snr, noisy, told in speech_under(kind, seed, music, music=True):
                for m in methods:
                    got[kind]["si_sdr"][m].append(si_sdr_db(take.samples, run_method(
                        m, noisy, told, take.sample_rate)))
                print(f"{kind:5s} {take.name:36s} {snr:5.1f} dB  " + "  ".join(
                    f"{m}: {got[kind]['si_sdr'][m][-1]:.2f}" for m in methods), flush=True)
    return got


def colour_table(got: dict) -> str:
    names = {"pesq": "speech PESQ-WB", "si_sdr": "music SI-SDR (dB)"}
    lines = []
    for kind, measures in got.items():
        methods = list(measures["pesq"])
        lines += [f"| {kind} (median / worst) | takes | " + " | ".join(methods) + " |",
                  "|---|---:|" + "---:|" * len(methods)]
        lines += [f"| {names[m]} | {len(by['input'])} | " + " | ".join(
            f"{np.median(v):.2f} / {min(v):.2f}" for v in by.values()) + " |"
            for m, by in measures.items()]
        lines.append("")
    return "\n".join(lines)


def clean_rows(seeds) -> str:
    """De-noise (default, adaptive, tonal) on clean takes: speech PESQ-WB against the
    take itself, music SI-SDR, and how many came back unchanged (bit for bit)."""
    from engine.measure.metrics import si_sdr_db

    lines = []
    for how in ({}, {"adaptive": True}, {"tonal": True}):
        pesqs, sdrs, same, total = [], [], 0, 0
        for seed in seeds:
            for take in takes.clean_takes(seed=seed, speech=8, music=4, sounds=2):
                y = denoise.run(take.samples, take.sample_rate, **how).samples
                total += 1
                same += bool(np.array_equal(y, take.samples))
                if take.kind == "speech":
                    pesqs.append(_pesq(take.samples[0], y[0], take.sample_rate))
                else:
                    sdrs.append(min(si_sdr_db(take.samples, y), 99.0))
        lines.append(f"clean takes, {how or 'default'}: speech PESQ-WB median "
                     f"{np.median(pesqs):.2f} worst {min(pesqs):.2f} ({len(pesqs)} takes; the "
                     f"take against itself 4.64); music and sounds SI-SDR median "
                     f"{np.median(sdrs):.1f} worst {min(sdrs):.1f} dB (99: unchanged); "
                     f"{same} of {total} takes left bit for bit")
    return "\n".join(lines)


def voice_over_music(seeds) -> str:
    """An espeak-ng take over an asc-music excerpt (the voice -6 to +6 dB against the
    music), under white, pink or brown hiss at 5-25 dB SNR (drawn per mix; 4 mixes a
    seed): SI-SDR against the mix, in and out, and how many came out worse."""
    from engine.measure.metrics import si_sdr_db

    rng = np.random.default_rng(21)
    lines, changes = [], []
    for seed in seeds:
        for said, bed in zip(takes.clean_takes(seed=seed, speech=4, music=0, sounds=0),
                             takes.clean_takes(seed=seed, speech=0, music=4, sounds=0),
                             strict=True):
            n = min(said.samples.shape[1], bed.samples.shape[1])
            music, speech = bed.samples[:, :n], said.samples[:, :n]
            level = 10 ** (rng.uniform(-6, 6) / 20) * np.sqrt(np.mean(music ** 2) /
                                                            np.mean(speech ** 2))
            mix = music + level * speech
            kind, snr = COLOURS[rng.integers(3)], rng.uniform(5, 25)
            noisy = mix + np.sqrt(np.mean(mix ** 2)) * 10 ** (-snr / 20) * hiss(
                kind, mix.shape, rng, bed.sample_rate)
            before = si_sdr_db(mix, noisy)
            after = si_sdr_db(mix, denoise.run(noisy, bed.sample_rate).samples)
            changes.append(after - before)
            lines.append(f"seed {seed} {bed.name} under {kind} hiss at {snr:.1f} dB: "
                         f"{before:.2f} -> {after:.2f} dB")
    worse = sum(c < -0.05 for c in changes)
    return "\n".join(lines + [f"{len(changes)} mixes: change median {np.median(changes):+.2f} "
                              f"dB, worst {min(changes):+.2f} dB, {worse} worse than the input"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--colours", nargs="*", metavar="KIND",
                        help="only the speech-under-noise rows: white, pink, brown, fan "
                             "(none named: all four), then the clean takes")
    parser.add_argument("--count", type=int, default=8, help="speech takes per seed")
    parser.add_argument("--voice-over-music", action="store_true",
                        help="only a voice over a music bed under hiss (SI-SDR against the mix)")
    parser.add_argument("--music", type=int, default=4,
                        help="--colours: music excerpts per seed under each hiss (0: none)")
    args = parser.parse_args()
    if takes.missing():
        sys.exit(f"bench_denoise: {takes.missing()}")
    if args.voice_over_music:
        print(voice_over_music(args.seeds))
        return
    if args.colours is not None:
        got = colour_rows(args.colours or COLOURS + ("fan",), args.seeds, args.count,
                          args.music)
        print("\n" + colour_table(got) + "\n" + clean_rows(args.seeds))
        return
    lines = ["Hiss (white or pink, 0-20 dB SNR drawn per take) over the clean takes of "
             "tests/takes.py at 22.05 kHz; each cell: median / worst take. PESQ-WB and STOI "
             "on speech takes, SI-SDR (dB) on all. ours: default amount (24 dB), noise learnt "
             "from the take; ours, profile: from one second of the hiss alone (as sox); "
             "ours, 12 dB: learnt, amount 12 dB. sox's output lacks its last window: zeros "
             "there.", ""]
    for seed in args.seeds:
        rows = measure(seed)
        lines += [f"Seed {seed}:", "", band_table(rows), ""]
        for method in ("ours", "ours, profile", "ours, 12 dB"):
            worse = worse_than_input(rows, method)
            lines.append(f"- {method} worse than the input: "
                         + ("; ".join(worse) if worse else "none"))
        lines.append("")
    if not args.no_speed:
        lines.append(speed(args.runs))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
