"""The perceptual metrics of ``specpaint compare``: PESQ-WB (ITU-T P.862.2, at 16 kHz,
resampled with soxr when needed) and STOI, where the ``pesq``, ``pystoi`` and ``soxr``
packages are installed.

PESQ is defined for short utterances (P.862 asks for 8 to 20 s), and the ``pesq``
package, the reference C code, keeps at most ``MAXNUTTERANCES`` = 50 utterances in
fixed arrays without checking the count: speech with a pause every second overran
them after about 50 s and the process died (issue 37: a 180 s excerpt compared with
itself, exit status 139, no message; 10 minutes crashed after 84 s at 8.1 GB). So:

- Audio longer than ``WINDOW_SECONDS`` is scored in equal windows no longer than
  that, and PESQ-WB is the mean of their scores (a note says so). The length is
  safe by the C code's own counting: an utterance counts only after ``MINUTTLENGTH``
  = 50 voiced VAD frames and an unvoiced one, 64 samples each at 16 kHz, so a
  window of ``n`` samples (which the code pads by ``PADDING``) holds at most
  :func:`max_utterances` of them: 44 for 8 s.
- The scorer runs in a process of its own (``engine/measure/pesq_worker.py``), fed one window
  at a time (memory: a window), each given ``WINDOW_TIMEOUT`` seconds. Should it still
  crash or hang, PESQ-WB is missing with a one-line note and the other metrics stand.
"""

import importlib.util
import math
import queue
import signal
import struct
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np

PESQ_RATE = 16000
MIN_SECONDS = 0.25  # PESQ and STOI need a few frames of speech
WINDOW_SECONDS = 8.0
WINDOW_TIMEOUT = 60.0  # seconds a window may take (about 0.2 s on one core)
# from the pesq package's pesq.h and pesqio.h, at 16 kHz
MAXNUTTERANCES, MINUTTLENGTH, VAD_FRAME = 50, 50, 64
PADDING = 2 * 75 * VAD_FRAME + 320 * PESQ_RATE // 1000  # SEARCHBUFFER each side, DATAPADDING
WORKER = Path(__file__).with_name("pesq_worker.py")
MISSING = ("PESQ-WB and STOI need the pesq, pystoi and soxr packages "
           "(pip install 'spectropaint[metrics]')")


def max_utterances(samples: int) -> int:
    """The most utterances the pesq code can count in ``samples`` at 16 kHz: each takes
    MINUTTLENGTH voiced VAD frames and one unvoiced."""
    return (samples + PADDING) // VAD_FRAME // (MINUTTLENGTH + 1) + 1


def windows(n: int, rate: int = PESQ_RATE) -> list[tuple[int, int]]:
    """``[a, b)`` spans of equal length, at most WINDOW_SECONDS, that cover ``n`` samples."""
    count = max(1, math.ceil(n / (WINDOW_SECONDS * rate)))
    edges = np.linspace(0, n, count + 1).astype(int)
    return list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))


def perceptual(ref: np.ndarray, test: np.ndarray, rate: int) -> tuple[dict, list[str]]:
    """STOI and PESQ-WB of float ``[ch, n]`` ``test`` against ``ref``, averaged over the
    channels whose reference is not silent; ``({"stoi": ..., "pesq_wb": ...}, notes)``
    (None where a metric could not be had: the notes say why)."""
    try:
        import pystoi  # noqa: F401 - used by _stoi; here to say what is missing
        import soxr
    except ImportError:
        return {}, [MISSING]
    if importlib.util.find_spec("pesq") is None:  # imported by the worker alone
        return {}, [MISSING]
    if ref.shape[1] < MIN_SECONDS * rate:
        return {}, [f"PESQ-WB and STOI need at least {MIN_SECONDS} s of audio"]
    heard = [c for c in range(ref.shape[0]) if np.any(ref[c])]
    if not heard:
        return {"stoi": None, "pesq_wb": None}, ["REF is silent: STOI and PESQ-WB are undefined"]
    notes = [] if len(heard) == ref.shape[0] else \
        [f"REF's channel(s) {', '.join(map(str, sorted(set(range(ref.shape[0])) - set(heard))))}"
         " are silent: STOI and PESQ-WB are of the others"]
    stoi, said = _stoi(ref[heard], test[heard], rate)
    notes += said
    if not all(np.any(test[c]) for c in heard):
        return {"stoi": stoi, "pesq_wb": None}, notes + [
            "TEST is silent where REF is not: PESQ-WB is undefined"]
    pairs = [tuple(a if rate == PESQ_RATE else soxr.resample(a.astype(np.float64), rate,
                                                             PESQ_RATE, quality="VHQ")
                   for a in (ref[c], test[c])) for c in heard]
    score, said = pesq_wb(pairs)
    if rate != PESQ_RATE:
        said.append(f"PESQ-WB scored at {PESQ_RATE} Hz (resampled from {rate} Hz with soxr)")
    return {"stoi": stoi, "pesq_wb": score}, notes + said


def _stoi(ref: np.ndarray, test: np.ndarray, rate: int) -> tuple[float | None, list]:
    """The mean STOI of the channels; None with a note where pystoi finds too few frames
    of REF above its silence (a constant, a click in silence): it warns and returns
    1e-5, a score it does not mean."""
    import pystoi

    scores = []
    for r, t in zip(ref.astype(np.float64), test.astype(np.float64), strict=True):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            scores.append(pystoi.stoi(r, t, rate, extended=False))
        if any("Not enough STFT frames" in str(w.message) for w in said):
            return None, ["STOI is undefined: too little of REF stands above silence (it "
                          "needs 30 frames of 25.6 ms, about 0.4 s)"]
    return float(np.mean(scores)), []


def pesq_wb(pairs: list[tuple[np.ndarray, np.ndarray]]) -> tuple[float | None, list[str]]:
    """The mean PESQ-WB of 16 kHz ``(ref, test)`` pairs, each scored in :func:`windows`
    (the mean over them) by the worker process; and notes."""
    n = len(pairs[0][0])
    spans = windows(n)
    means, quiet, errors = [], 0, []
    try:
        with _Scorer() as scorer:
            for r, t in pairs:
                scores = []
                for a, b in spans:
                    if not np.any(r[a:b]):
                        quiet += 1  # no speech: no utterance to score
                        continue
                    answer = scorer.score(r[a:b], t[a:b])
                    (scores if isinstance(answer, float) else errors).append(answer)
                if scores:
                    means.append(float(np.mean(scores)))
    except _ScorerDied as e:
        return None, [f"PESQ-WB not scored: the pesq library {e}"]
    notes = []
    if len(spans) > 1:
        notes.append(f"PESQ-WB is the mean over {len(spans)} windows of "
                     f"{n / len(spans) / PESQ_RATE:.1f} s (P.862.2 scores short utterances)")
    if quiet:
        notes.append(f"PESQ-WB: {quiet} silent window(s) of REF not scored")
    if errors:
        notes.append(f"PESQ-WB could not score {len(errors)} window(s) ({errors[0]})")
    return (float(np.mean(means)) if len(means) == len(pairs) else None), notes


class _ScorerDied(Exception):
    pass


class _Scorer:
    """engine/measure/pesq_worker.py in a process of its own, fed a window at a time."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, str(WORKER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines: queue.Queue = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.decode(errors="replace").strip())
        self.lines.put(None)

    def score(self, ref: np.ndarray, test: np.ndarray) -> float | str:
        """The window's score, or why the scorer could not give one."""
        try:
            self.proc.stdin.write(struct.pack("<Q", len(ref)) + ref.astype("<f4").tobytes() +
                                  test.astype("<f4").tobytes())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise _ScorerDied(self._death()) from None
        try:
            line = self.lines.get(timeout=WINDOW_TIMEOUT)
        except queue.Empty:
            self.proc.kill()
            raise _ScorerDied(f"took more than {WINDOW_TIMEOUT:g} s over a window; "
                              "stopped") from None
        if line is None:
            raise _ScorerDied(self._death())
        return line.removeprefix("error:").strip() if line.startswith("error:") else float(line)

    def _death(self) -> str:
        code = self.proc.wait()
        if code < 0:
            return f"crashed ({signal.Signals(-code).name}) on this audio"
        return f"stopped with status {code} (is the pesq package installed?)"

    def __enter__(self) -> "_Scorer":
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join()
        self.proc.stdout.close()
