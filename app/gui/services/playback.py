"""Playback: an audio output pulling samples from the engine's resynthesized
buffer, behind a small interface.

The output is PortAudio through ``sounddevice`` (a few hundred KB, needs the
system's libportaudio2) rather than QtMultimedia (PySide6-Addons, about
+400 MB). With no library or no device, a null output keeps time with the
clock, so the playhead moves and nothing crashes; the status bar says so.
"""

import threading
import time

import numpy as np

BLOCK = 1024


class NullOutput:
    """No sound: the position advances with the wall clock, and a thread pulls the
    blocks a device would, when it would (so scrubbing moves and levels are read)."""

    name = "no audio output"
    is_null = True

    def __init__(self, reason: str = ""):
        self.reason = reason
        self._start = None
        self._thread: threading.Thread | None = None
        self._running = threading.Event()

    def start(self, sample_rate: int, channels: int, pull) -> None:
        self.stop()
        self._start, self._rate, self._pull = time.perf_counter(), sample_rate, pull
        self._running.set()
        self._thread = threading.Thread(target=self._consume, daemon=True)
        self._thread.start()

    def _consume(self) -> None:
        pulled, start, rate, pull = 0, self._start, self._rate, self._pull
        while self._running.is_set():
            while pulled + BLOCK <= (time.perf_counter() - start) * rate:
                pull(BLOCK)
                pulled += BLOCK
            time.sleep(BLOCK / rate / 4)

    def stop(self) -> None:
        self._running.clear()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(1.0)
        self._thread = None
        self._start = None

    def frames_played(self) -> int:
        if self._start is None:
            return 0
        return int((time.perf_counter() - self._start) * self._rate)


class SoundDeviceOutput:
    is_null = False

    def __init__(self, sd):
        self.sd, self.stream = sd, None
        self.name = sd.query_devices(kind="output")["name"]
        self._played = 0

    def start(self, sample_rate: int, channels: int, pull) -> None:
        self._played = 0

        def callback(outdata, frames, _time, _status):
            block = pull(frames)
            outdata[:len(block)] = block
            outdata[len(block):] = 0
            self._played += frames

        self.stream = self.sd.OutputStream(samplerate=sample_rate, channels=min(channels, 2),
                                           blocksize=BLOCK, dtype="float32", callback=callback)
        self.stream.start()

    def stop(self) -> None:
        if self.stream is not None:
            self.stream.stop()
            self.stream.close()
            self.stream = None

    def frames_played(self) -> int:
        return self._played


def open_output():
    """The system's default output, or a NullOutput saying why there is none."""
    try:
        import sounddevice as sd

        return SoundDeviceOutput(sd)
    except Exception as e:  # missing libportaudio2, no device, no server: play silently
        return NullOutput(f"{type(e).__name__}: {e}".splitlines()[0][:120])


class TapeHead:
    """Scrubbing as on tape: the read position glides towards the pointer
    (``target``, a sample) so the sound's speed and pitch follow the pointer's, backwards
    too, and a pointer that stops is silent. Reads between samples interpolate
    linearly; the level fades in and out with the speed, so starting and stopping
    make no click."""

    GLIDE = 0.05  # s: the position closes the gap to the pointer over about this long
    MAX_SPEED = 4.0  # times normal speed
    FULL_LEVEL_SPEED = 0.25  # slower than this is faded, down to silence at rest

    def __init__(self, sample_rate: int, length: int, at: int):
        self.glide, self.length = self.GLIDE * sample_rate, length
        self.position = self.target = float(at)
        self.level = 0.0

    def read(self, source, frames: int) -> np.ndarray:
        """The next ``frames`` samples, ``[frames, ch]``, from ``source(start, stop)``."""
        speed = (self.target - self.position) / max(frames, self.glide)
        speed = float(np.clip(speed, -self.MAX_SPEED, self.MAX_SPEED))
        steps = np.arange(1, frames + 1)
        at = np.clip(self.position + speed * steps, 0, self.length - 1)
        level = min(abs(speed) / self.FULL_LEVEL_SPEED, 1.0)
        gains = self.level + (level - self.level) * steps / frames
        self.position, self.level = float(at[-1]), level
        lo = int(np.floor(at.min()))
        block = source(lo, min(int(np.ceil(at.max())) + 1, self.length))
        if not gains.any():
            return np.zeros((frames, len(block)), np.float32)
        index = np.arange(lo, lo + block.shape[1])
        return np.stack([np.interp(at, index, ch) * gains for ch in block], 1) \
            .astype(np.float32)


class Levels:
    """The peak of each output channel over the blocks pulled since it was last read
    (the level meter reads it; the audio thread adds to it)."""

    def __init__(self):
        self._peaks = np.zeros(0, np.float32)
        self._lock = threading.Lock()

    def add(self, block: np.ndarray) -> None:
        """A block ``[frames, channels]`` sent to the output."""
        if not len(block):
            return
        peaks = np.abs(block).max(axis=0)
        with self._lock:
            self._peaks = peaks if len(self._peaks) != len(peaks) else \
                np.maximum(self._peaks, peaks)

    def take(self) -> np.ndarray:
        """The peaks since the last call (none: an empty array), then forgets them."""
        with self._lock:
            peaks, self._peaks = self._peaks, np.zeros(0, np.float32)
        return peaks


class Player:
    """Plays a span of an audio source ``source(start, stop) -> float32 [ch, n]``
    (the engine's live waveform, so edits are heard), optionally looping, or
    scrubs it (:meth:`scrub`)."""

    def __init__(self, output=None):
        self.output = output or open_output()
        self.playing = False
        self.tape: TapeHead | None = None  # while scrubbing
        self.levels = Levels()  # what the output was sent, for the level meter
        self._lock = threading.Lock()

    def play(self, source, sample_rate: int, channels: int, start: int, stop: int,
             loop: bool = False) -> None:
        self.stop()
        self.source, self.rate = source, sample_rate
        self.start_frame, self.stop_frame, self.loop = start, max(stop, start + 1), loop
        self._next = start
        self._base = 0  # frames the output had played when start_frame was heard first
        self.playing = True
        self.output.start(sample_rate, channels, self._pull)

    def scrub(self, source, sample_rate: int, channels: int, length: int, at: int) -> None:
        """Move the scrubbing pointer to sample ``at``; the first call starts the output
        there (silent until the pointer moves). :meth:`stop` ends it."""
        with self._lock:
            if self.playing and self.tape is not None:
                self.tape.target = float(at)
                return
        self.stop()
        self.source, self.rate = source, sample_rate
        self.tape = TapeHead(sample_rate, length, at)
        self.playing = True
        self.output.start(sample_rate, channels, self._pull)

    def _pull(self, frames: int) -> np.ndarray:
        block = self._next_block(frames)
        self.levels.add(block)
        return block

    def _next_block(self, frames: int) -> np.ndarray:
        with self._lock:
            if self.tape is not None:
                data = self.tape.read(self.source, frames)
                return data[:, :2] if data.shape[1] > 2 else data
            out = []
            while frames > 0 and self.playing:
                end = min(self._next + frames, self.stop_frame)
                block = self.source(self._next, end)
                out.append(block.T)
                frames -= end - self._next
                self._next = end
                if self._next >= self.stop_frame:
                    if not self.loop:
                        break
                    self._next = self.start_frame
            if not out:
                return np.zeros((0, 1), np.float32)
            data = np.concatenate(out)
            return data[:, :2] if data.shape[1] > 2 else data

    def position(self) -> int | None:
        """The frame being heard now, or None when stopped."""
        if not self.playing:
            return None
        if self.tape is not None:
            return int(self.tape.position)
        length = self.stop_frame - self.start_frame
        played = self.output.frames_played() - self._base
        if not self.loop and played >= length:
            self.stop()
            return None
        return self.start_frame + played % length

    def stop(self) -> None:
        with self._lock:  # never while a pull reads it
            self.tape = None
        if self.playing:
            self.playing = False
            self.output.stop()
