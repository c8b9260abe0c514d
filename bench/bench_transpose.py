"""Transposing a selection (issue 48.3): a 1 s x 1 kHz region (100-1100 Hz, from
300 s) of a 10-minute stereo 44.1 kHz document holding a 440 Hz tone (-10.5 dBFS),
moved by +-12 semitones, on the STFT and the constant-Q.

    .venv/bin/python bench/bench_transpose.py [--minutes 10] [--runs 5]

Time: ``move_selection`` (the cut, the phase-vocoder transposition and the paste, one
undo step) and its undo, median of ``--runs``; and the move of the same region over
white noise (-26 dBFS, 10 s later), where every cell is moved. Quality: the clip
pasted transposed into a new layer, that layer alone resynthesized, the steady middle
0.5 s of it measured (Blackman-windowed FFT, zero-padded 8 times): the tone's level
change in dB against the source, and the loudest thing more than 20 Hz from the new
pitch in dB below the tone. Beside it, a naive magnitude shift: each bin takes the
cell of the bin nearest its frequency over the ratio, phases as they were.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.session.layer_ops import delete_layer, new_layer  # noqa: E402
from app.session.selection import Selection  # noqa: E402
from app.session.spectral_clip import copy_clip, move_selection, paste_as_layer  # noqa: E402
from engine.io.audio import Audio  # noqa: E402
from engine.model.document import Document  # noqa: E402
from engine.model.history import History  # noqa: E402
from engine.model.resynth import layer_audio  # noqa: E402
from engine.region import Rect  # noqa: E402

SR = 44100
TONE, AMPLITUDE = 440.0, 0.3
START, BAND = 300.0, (100.0, 1100.0)


def make_doc(minutes: float, transform: str, noise_at: float) -> Document:
    n = int(minutes * 60 * SR)
    t = np.arange(n, dtype=np.float64) / SR
    x = np.stack([AMPLITUDE * np.sin(2 * np.pi * TONE * t)] * 2)
    span = slice(round(noise_at * SR), round((noise_at + 2) * SR))
    x[:, span] = np.random.default_rng(0).normal(0, 0.05, x[:, span].shape)
    return Document(Audio(x.astype(np.float32), SR), device="cpu", transform=transform)


def timed_moves(doc: Document, history: History, selection: Selection, semitones: float,
                runs: int) -> tuple[float, float]:
    """Median ms of ``runs`` moves and of their undos."""
    moves, undos = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        move_selection(doc, selection=selection, semitones=semitones, history=history)
        moves.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        history.undo()
        undos.append(time.perf_counter() - t0)
    return 1000 * statistics.median(moves), 1000 * statistics.median(undos)


def measured(doc: Document, layer: int, start: float, freq: float) -> tuple[float, float]:
    """Level change (dB) of the tone at ``freq`` and the worst spurious (dB below it), in
    the middle 0.5 s of the second that starts at ``start``, of ``layer`` alone."""
    s0 = round((start + 0.25) * SR)
    x = layer_audio(doc, layer=layer, sample0=s0, sample1=s0 + SR // 2)[0].astype(np.float64)
    w = np.blackman(len(x))
    spectrum = np.abs(np.fft.rfft(x * w, 8 * len(x))) / (w.sum() / 2)  # padded: no scalloping
    near = np.abs(np.fft.rfftfreq(8 * len(x), 1 / SR) - freq) < 20
    level = spectrum[near].max()
    return 20 * np.log10(level / AMPLITUDE), 20 * np.log10(spectrum[~near].max() / level)


def naive_layer(doc: Document, selection: Selection, ratio: float, source: int) -> int:
    """A new layer holding the selection's cells of layer ``source`` moved the naive
    way; its id."""
    rect = selection.cells(doc)
    cells = doc.read_complex(rect, layer=source) * selection.mask(doc, rect)
    hz = doc.transform.bin_frequencies()
    read = [round(doc.bin_of(float(f) / ratio)) - rect.bin0 for f in hz]
    rows = [k for k, s in enumerate(read) if 0 <= s < rect.shape[0]]
    out = cells[:, [read[k] for k in rows]]
    new_layer(doc, name="naive")
    doc.write_complex(Rect(rows[0], rows[-1] + 1, rect.frame0, rect.frame1), out)
    return doc.layers.active.id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    start = min(START, args.minutes * 60 / 2)
    selection = Selection.rect(start, start + 1.0, f_lo=BAND[0], f_hi=BAND[1])
    noisy = Selection.rect(start + 10, start + 11.0, f_lo=BAND[0], f_hi=BAND[1])
    print(f"{args.minutes:g}-minute stereo {SR} Hz, a {TONE:g} Hz tone; region 1 s x "
          f"{BAND[0]:g}-{BAND[1]:g} Hz; torch threads {torch.get_num_threads()}")
    print("| transform | semitones | move ms | undo ms | move ms, noise | level dB | "
          "spurious dB | naive level dB | naive spurious dB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in ("stft", "cq"):
        t0 = time.perf_counter()
        doc = make_doc(args.minutes, kind, start + 9.5)
        analysis = time.perf_counter() - t0
        history = History(doc)
        base = doc.layers.active.id
        for semitones in (12.0, -12.0):
            move, undo = timed_moves(doc, history, selection, semitones, args.runs)
            in_noise, _ = timed_moves(doc, history, noisy, semitones, args.runs)
            ratio = 2 ** (semitones / 12)
            clip = copy_clip(doc, selection=selection)
            paste_as_layer(doc, clip, at_s=clip.start_s, semitones=semitones)
            ours = measured(doc, doc.layers.active.id, start, TONE * ratio)
            naive = measured(doc, naive_layer(doc, selection, ratio, base), start, TONE * ratio)
            delete_layer(doc)  # the naive layer, then the pasted one
            delete_layer(doc)
            assert doc.layers.active.id == base
            print(f"| {kind} | {semitones:+g} | {move:.0f} | {undo:.0f} | {in_noise:.0f} "
                  f"| {ours[0]:+.2f} | {ours[1]:.1f} | {naive[0]:+.2f} | {naive[1]:.1f} |")
        print(f"(the {kind} document's analysis: {analysis:.1f} s)")
        del doc, history


if __name__ == "__main__":
    main()
