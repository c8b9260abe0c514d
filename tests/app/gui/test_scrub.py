"""Scrubbing as on tape: the sound's speed (and so its pitch) follows the pointer's,
backwards too; a pointer at rest is silent; starting and stopping make no click.
Driven through the Player's own pull, as the audio callback calls it."""

import numpy as np
import pytest

from app.gui.services.playback import BLOCK, Player
from tests.conftest import CallbackOutput, peak_hz

RATE, TONE = 22050, 440.0
WAVE = (0.5 * np.sin(2 * np.pi * TONE * np.arange(20 * RATE) / RATE)).astype(np.float32)[None]


def source(start, stop):
    return WAVE[:, start:stop].copy()


def scrubbed(player, start: int, samples_per_block: float, blocks: int) -> np.ndarray:
    """Move the pointer ``samples_per_block`` for every block the output pulls."""
    heard = []
    for i in range(1, blocks + 1):
        player.scrub(source, RATE, 1, WAVE.shape[1], int(start + i * samples_per_block))
        heard.append(player._pull(BLOCK)[:, 0])
    return np.concatenate(heard)


@pytest.mark.parametrize("speed", [1.0, 2.0, -1.0, 0.5])
def test_the_pitch_follows_the_pointers_speed(speed):
    player = Player(CallbackOutput())
    start = 10 * RATE
    player.scrub(source, RATE, 1, WAVE.shape[1], start)
    heard = scrubbed(player, start, speed * BLOCK, 60)
    steady = heard[20 * BLOCK:]  # the head has caught up with the pointer's pace
    assert peak_hz(steady, RATE) == pytest.approx(TONE * abs(speed), rel=0.01)
    assert np.abs(steady).max() == pytest.approx(0.5, rel=0.02)  # at full level
    assert abs(player.position() - (start + 60 * speed * BLOCK)) < 0.06 * RATE * abs(speed)


def test_a_still_pointer_is_silent_and_starting_or_stopping_makes_no_click():
    player = Player(CallbackOutput())
    start = 5 * RATE + 13  # a quarter period in: the tone at its peak, not at zero
    player.scrub(source, RATE, 1, WAVE.shape[1], start)
    assert player.playing and not player._pull(BLOCK).any()  # pressed, not moved: silence
    moving = scrubbed(player, start, 2.0 * BLOCK, 30)
    at = int(start + 30 * 2.0 * BLOCK)
    resting = np.concatenate([player._pull(BLOCK)[:, 0] for _ in range(30)])
    assert not resting[-10 * BLOCK:].any()  # the head reached the pointer and fell silent
    heard = np.concatenate([moving, resting])
    steepest = 2 * np.pi * TONE * 2.0 / RATE * 0.5  # the tone's own steepest step at 2x
    assert np.abs(np.diff(heard)).max() <= 1.05 * steepest
    assert abs(player.position() - at) < 1
    player.stop()
    assert player.position() is None and player.tape is None


def test_the_head_never_reads_outside_the_file():
    player = Player(CallbackOutput())
    player.scrub(source, RATE, 1, WAVE.shape[1], 100)
    heard = scrubbed(player, 100, -4 * BLOCK, 10)  # far past the start
    assert np.isfinite(heard).all() and player.position() == 0
    end = WAVE.shape[1] - 1
    player.stop()
    player.scrub(source, RATE, 1, WAVE.shape[1], end)
    scrubbed(player, end, 4 * BLOCK, 10)
    assert player.position() == end


def test_without_a_device_the_output_pulls_at_the_audio_rate():
    """The null output (no device) pulls blocks as a device would, so a scrubbing head
    moves towards the pointer: it stood still, and so did the playhead."""
    import time

    from app.gui.services.playback import NullOutput

    player = Player(NullOutput("no device here"))
    player.scrub(source, RATE, 1, WAVE.shape[1], 0)
    player.scrub(source, RATE, 1, WAVE.shape[1], RATE // 2)  # the pointer jumps 0.5 s on
    deadline = time.monotonic() + 5  # the head glides at up to 4x: there in about 0.15 s
    while abs(player.position() - RATE // 2) >= BLOCK and time.monotonic() < deadline:
        time.sleep(0.01)
    assert abs(player.position() - RATE // 2) < BLOCK
    player.stop()
    assert player.position() is None
