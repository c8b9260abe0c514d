"""Hostile input on the command line, in presets and stroke scripts, and a full
disk: each gives one line naming the problem and exit status 2, in bounded time,
and leaves nothing behind."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.cli_run import refused, run


@pytest.mark.parametrize("extra,match", [
    (["--top-db", "nan"], "top dB must be a number"),
    (["--db-range", "inf"], "dB range must be a positive number"),
    (["--width", "100000", "--height", "100000"], "image size 100000x100000 is not valid"),
])
def test_render_settings_that_cannot_make_an_image(capsys, one_second, out, extra, match):
    refused(capsys, match, "render", one_second, "-o", out / "a.png", *extra)
    assert list(out.iterdir()) == []


def test_an_output_name_too_long_for_the_file_system(capsys, one_second, tmp_path):
    long = tmp_path / ("x" * 300 + ".wav")
    refused(capsys, "file name is 304 bytes long", "roundtrip", one_second, "-o", long)
    refused(capsys, "file name is 304 bytes long", "render", one_second, "-o",
            long.with_suffix(".png"))


@pytest.mark.parametrize("line,match", [
    ("0:1000,1:inf", "must be finite numbers"),
    ("0:1000,nan:1000", "must be finite numbers"),
    ("0:1000,1:2000", "dabs (8 harmonics each), more than 10,000 for the heal brush, which "
                      "paints one dab at a time"),  # with radius_cents=1e-9
])
def test_strokes_that_cannot_be_painted(capsys, one_second, out, line, match):
    refused(capsys, match, "apply", one_second, "-o", out / "out.wav", "--preset",
            "harmonic-eraser", "--set", "radius_cents=1e-9", "--line", line)
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("brush", ["warp", "tone", "gain"])
def test_a_stroke_of_more_dabs_than_its_brush_paints_in_time_is_refused_at_once(
        capsys, one_second, out, brush):
    """Issue 51, item 7: a 1 Hz radius over the whole spectrum of 1 s is some 44,000
    dabs, under the cap of 100,000; the warp brush, which paints each dab on what the
    one before left, took 185 s over it on a 1 s file (2.3 ms a dab). A brush that
    paints one dab at a time stops at 10,000, before the first; a batched one paints."""
    t0 = time.monotonic()
    args = ("apply", one_second, "-o", out / "out.wav", "--brush", brush, "--set",
            "radius_hz=1", "--line", "0:0,1:20000")
    if brush == "gain":
        status, said, _ = run(capsys, *args)
        assert status == 0 and "painted 1 of 1 stroke" in said
        return
    refused(capsys, f"dabs, more than 10,000 for the {brush} brush, which paints one dab at "
                    "a time", *args)
    assert time.monotonic() - t0 < 10 and list(out.iterdir()) == []


@pytest.mark.parametrize("line,warning", [
    ("0:1000,100000:1000", "100000 s is past the end (1 s)"),
    ("0:1000,0.5:30000", "30000 Hz is above Nyquist (11025 Hz)"),
])
def test_strokes_beyond_the_file_are_clipped_to_it_and_said_so(capsys, one_second, tmp_path,
                                                               line, warning):
    status, out, err = run(capsys, "apply", one_second, "-o", tmp_path / "out.wav", "--preset",
                           "hard-eraser", "--line", line)
    assert status == 0 and "painted 1 of 1 stroke" in out
    assert f"warning: command line: strokes[0]: clipped to the file: {warning}" in err


@pytest.mark.parametrize("content,match", [
    ("[" * 100_000 + "]" * 100_000, "not a stroke script"),
    ('[{"preset": ["x"], "points": [[0, 100], [1, 100]]}]', "named by a string, not ['x']"),
    ('[{"preset": "hard-eraser", "points": [[0, 1' + "0" * 5000 + "]]}]", "not a stroke script"),
])
def test_stroke_scripts_that_are_not_scripts(capsys, one_second, tmp_path, content, match):
    script = tmp_path / "s.json"
    script.write_text(content)
    refused(capsys, match, "apply", one_second, "-o", tmp_path / "out.wav", "--strokes", script)
    assert not (tmp_path / "out.wav").exists()


def test_a_stroke_script_that_never_ends(capsys, one_second, tmp_path):
    refused(capsys, "/dev/zero: is a character device, not a stroke script", "apply",
            one_second, "-o", tmp_path / "out.wav", "--strokes", "/dev/zero")
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate((64 << 20) + 1)  # sparse: no 64 MiB written
    refused(capsys, "a stroke script is at most 64 MiB", "apply", one_second, "-o",
            tmp_path / "out.wav", "--strokes", big)


def test_a_user_preset_with_a_5000_digit_number_is_skipped_not_fatal(capsys, one_second,
                                                                       tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    folder = tmp_path / "spectropaint" / "presets"
    folder.mkdir(parents=True)
    (folder / "big.json").write_text('{"version": 1, "name": "big", "brush": "gain", '
                                     '"params": {"gain_db": -' + "9" * 5000 + "}}")
    status, out, err = run(capsys, "presets")
    assert status == 0 and "hard-eraser" in out and "big.json: not a preset" in err
    status, out, _ = run(capsys, "apply", one_second, "-o", tmp_path / "o.wav", "--preset",
                         "hard-eraser", "--line", "0.2:440,0.8:440")
    assert status == 0


def test_stale_temporary_files_of_dead_processes_are_cleared_on_the_next_write(
        capsys, one_second, out):
    dead = 2**22 + 12345  # above Linux's pid_max: nobody's
    stale = out / f".out.wav.{dead}.part"
    stale.write_bytes(b"half a file")
    other = out / f".out.wav.{os.getpid()}.part.keep"  # not a temporary of ours: kept
    other.write_bytes(b"")
    status, _, _ = run(capsys, "roundtrip", one_second, "-o", out / "out.wav")
    assert status == 0 and not stale.exists()
    assert sorted(p.name for p in out.iterdir()) == [other.name, "out.wav"]


def test_a_part_of_a_killed_process_not_yet_reaped_is_stale_at_once(capsys, one_second, out):
    """A worker killed with its batch is a zombie until the init that adopted it reaps
    it; it writes nothing more. Its part was taken for a running process's and kept
    by the next write's sweep (a batch resumed at once, in the same second: the part
    stayed after the resume finished; test_batch's kill -9 test, 2026-11-29)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # ended, not reaped: a zombie
        with open(f"/proc/{child.pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    stale = out / f".out.wav.{child.pid}.part"
    stale.write_bytes(b"half a file")
    try:
        status, _, _ = run(capsys, "roundtrip", one_second, "-o", out / "out.wav")
        assert status == 0 and not stale.exists()
    finally:
        child.wait()


def test_a_folder_written_many_times_is_listed_once_a_sweep_and_stale_parts_still_go(
        tmp_path, monkeypatch):
    """A batch writes thousands of files into one folder: listing the folder on every
    write was quadratic. A part left after a sweep goes at a write after the next one."""
    from engine.io import atomic

    listed = []
    real_scandir = os.scandir
    monkeypatch.setattr(atomic.os, "scandir", lambda p: listed.append(p) or real_scandir(p))
    dead = 2**22 + 777
    (tmp_path / f".f3.bin.{dead}.part").write_bytes(b"left by a crash")
    for i in range(200):
        atomic.write_bytes(tmp_path / f"f{i}.bin", b"x")
    assert len(listed) == 1
    assert not (tmp_path / f".f3.bin.{dead}.part").exists()  # found by the sweep
    late = tmp_path / f".f5.bin.{dead}.part"  # a crash after the sweep
    late.write_bytes(b"")
    atomic.write_bytes(tmp_path / "f5.bin", b"y")
    assert late.exists() and len(listed) == 1  # not listed again within a sweep
    monkeypatch.setattr(atomic, "SWEEP_SECONDS", 0.0)
    atomic.write_bytes(tmp_path / "f5.bin", b"z")
    assert not late.exists() and len(listed) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"f{i}.bin" for i in range(200))


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB file system (root only; skipped elsewhere)."""
    where = tmp_path / "full"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs",
                                            str(where)], capture_output=True).returncode:
        pytest.skip("mounting a small file system needs root")
    yield where
    subprocess.run(["umount", str(where)])


def test_a_full_disk_gives_one_line_and_leaves_nothing(capsys, one_second, full_disk):
    long_audio = full_disk / "a.wav"  # 1 s of float at 22 kHz: 88 KB, more than fits
    err = refused(capsys, "writing failed: the disk is full (", "roundtrip", one_second, "-o",
                  long_audio)
    assert "System error" not in err  # what libsndfile says (issue 37)
    refused(capsys, "writing failed", "render", one_second, "-o", full_disk / "a.png",
            "--width", "4000", "--height", "4000")
    assert list(Path(full_disk).iterdir()) == []


def killed_while_writing(args: list, folder: Path) -> Path:
    """Run ``specpaint *args`` and kill it (-9) the moment its temporary file appears in
    ``folder``; the part it leaves."""
    from tests.cli_run import ROOT

    exe = Path(sys.executable).with_name("specpaint")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "app.main"]
    proc = subprocess.Popen(cmd + [str(a) for a in args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ,
                                                             "SPECPAINT_DEVICE": "cpu"})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if parts := list(folder.glob(".*.part")):
            proc.send_signal(signal.SIGSTOP)  # frozen mid-write, then killed
            proc.kill()
            proc.wait()
            return parts[0]
        time.sleep(0.002)
    proc.kill()
    pytest.fail("the write ended before it could be killed")


@pytest.mark.slow
def test_a_part_left_by_a_killed_export_goes_at_the_next_write_to_its_folder(
        capsys, write_audio, one_second, out, rng):
    """Issue 37: 10 of 12 kills during export left a .part (up to 212 MB), which went
    only when the same name was written again. Now any write into the folder removes
    it, and says so."""
    long = write_audio("long.wav", rng.uniform(-0.3, 0.3, (2, 44100 * 60)).astype(np.float32),
                       44100, "FLOAT")
    part = killed_while_writing(["roundtrip", long, "-o", out / "long.flac"], out)
    assert part.exists() and not (out / "long.flac").exists()
    status, said, _ = run(capsys, "roundtrip", one_second, "-o", out / "other.wav")
    assert status == 0 and "removed 1 temporary file(s)" in said and part.name in said
    assert [p.name for p in out.iterdir()] == ["other.wav"]


def test_a_project_saved_beside_a_killed_save_removes_its_part_and_says_so(qtbot, window,
                                                                           tmp_path):
    dead = 2**22 + 4321  # above Linux's pid_max: a process that is gone
    stale = tmp_path / f".earlier.spp.{dead}.part"
    stale.write_bytes(bytes(1000))
    project = tmp_path / "now.spp"
    window.files.save_project(path=project)
    qtbot.waitUntil(lambda: project.exists() and window.jobs.idle(), timeout=20000)
    assert not stale.exists()
    message = window.statusBar().currentMessage()
    assert f"saved {project}; removed 1 temporary file(s) in {tmp_path}" in message, message


@pytest.fixture
def read_only(tmp_path):
    """A read-only file system (root only; skipped elsewhere: root writes anywhere else)."""
    where = tmp_path / "ro"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k",
                                            "tmpfs", str(where)], capture_output=True).returncode:
        pytest.skip("mounting a file system needs root")
    yield where
    subprocess.run(["umount", str(where)])


def test_the_demo_into_a_read_only_folder_is_one_line_before_any_output(capsys, read_only):
    """Issue 37: an OSError (EROFS) traceback; and into an existing read-only folder it
    printed the file's info before failing."""
    for target in (read_only / "demo", read_only):
        status, said, err = run(capsys, "demo", "-o", target)
        assert status == 2 and said == "", said
        assert len(err.strip().splitlines()) == 1 and "give -o a folder you can write to" in err


def test_fifos_and_dangling_links_are_named_as_what_they_are(capsys, one_second, tmp_path):
    """An existing FIFO was "no such file or folder" to batch and "empty" to info; in a
    folder, FIFOs and dangling links were skipped without a word (issue 37)."""
    import json

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.wav").write_bytes(one_second.read_bytes())
    os.mkfifo(folder / "pipe.wav")
    (folder / "gone.flac").symlink_to(tmp_path / "nowhere.flac")
    refused(capsys, "pipe.wav: is a FIFO (named pipe), not an audio file", "info",
            folder / "pipe.wav")
    refused(capsys, "pipe.wav: is a FIFO (named pipe), not an audio file or a folder", "batch",
            folder / "pipe.wav", "-o", tmp_path / "out", "--preset", "hard-eraser", "--line",
            "0.1:440,0.5:440", "--jobs", "1")
    status, _, err = run(capsys, "batch", folder, "-o", tmp_path / "out", "--preset",
                         "hard-eraser", "--line", "0.1:440,0.5:440", "--jobs", "1")
    assert status == 0 and "specpaint: skipped" in err and "listed in the report" in err
    report = json.loads((tmp_path / "out" / "batch-report.json").read_text())
    assert sorted(report["skipped"]) == [
        f"{folder / 'gone.flac'}: a link to {tmp_path / 'nowhere.flac'}, which does not exist",
        f"{folder / 'pipe.wav'}: a FIFO (named pipe)"]
    assert report["done"] == 1
    status, _, err = run(capsys, "features", folder, "-o", tmp_path / "features")
    manifest = json.loads((tmp_path / "features" / "manifest.json").read_text())
    assert status == 0 and len(manifest["skipped"]) == 2 and err.count("skipped") == 2


def test_a_negative_channel_is_refused_by_render(capsys, one_second, out):
    refused(capsys, "--channel -1: channels are numbered from 0", "render", one_second, "-o",
            out / "a.png", "--channel", "-1")
    refused(capsys, "--channel -1: channels are numbered from 0", "render", one_second, "-o",
            out / "a.png", "--channel", "-1", "--view", "mel")


@pytest.mark.slow
def test_amplifying_settings_are_said_with_figures_before_the_work(one_second, tmp_path):
    """Issue 37: n_fft 16384 and hop 1 on 1 s ran 3 minutes at 3.6 GB with no word.
    Now a warning with the estimate comes first (then progress, even into a log), and
    Ctrl+C still cancels with nothing written."""
    from tests.cli_run import ROOT, interruptible

    exe = Path(sys.executable).with_name("specpaint")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "app.main"]
    out = tmp_path / "out.wav"
    proc = subprocess.Popen(cmd + ["roundtrip", str(one_second), "-o", str(out), "--n-fft",
                                   "16384", "--hop", "1"], cwd=ROOT, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, preexec_fn=interruptible,
                            env={**os.environ, "SPECPAINT_DEVICE": "cpu"})
    import threading

    stuck = threading.Timer(60, proc.kill)  # no line for a minute: it gave no word
    stuck.start()
    try:
        warning = proc.stderr.readline()  # blocks until the first line (or the end)
        assert warning.startswith("specpaint: warning: STFT(n_fft=16384, hop=1, window='hann') "
                                  "makes 8,193 coefficients per sample: 1.0 s of audio will "
                                  "take about "), warning
        assert " GiB (a larger hop" in warning and warning.endswith("Ctrl+C cancels\n")
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=120)[1]
    finally:
        stuck.cancel()
        proc.kill()
    assert proc.returncode == 130 and "cancelled; nothing was written" in rest, rest
    assert not out.exists() and not list(tmp_path.glob(".*.part"))


def test_the_memory_estimate_holds_what_the_work_takes():
    """engine.runtime.cost's memory against a measured analysis and full resynthesis (FFT size
    4096, hop 2, 0.5 s; its time is compared in bench/bench_cost.py, not here)."""
    import resource

    from engine.io.audio import Audio
    from engine.model.document import Document, check_fits
    from engine.model.resynth import Resynthesizer
    from engine.runtime.cost import estimate

    audio = Audio(np.random.default_rng(0).uniform(-0.3, 0.3, (1, 22050)).astype(np.float32),
                  44100)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    doc = Document(audio, n_fft=4096, hop=2, device="cpu")
    cost = estimate(doc.transform, 1, frames=audio.frames, resident=check_fits(audio,
                                                                               doc.transform))
    Resynthesizer(doc).full()
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert cost.per_sample == 1024.5 and grew <= cost.bytes, (grew, cost)
