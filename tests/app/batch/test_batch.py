"""``specpaint batch`` on real files: outputs, journal, resume, bad files, kill -9,
Ctrl+C and the bound on files held."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from app.batch import jobs as batch
from app.batch import pipeline as batch_pipeline
from app.batch import stacks as batch_stacks
from app.batch.budget import Budget, PeakEstimates
from app.batch.cluster import run_processes
from app.session import editor as script
from app.session.editor import Editor
from engine.errors import ParameterError
from engine.io.audio import Audio, load
from engine.measure.metrics import snr_db
from engine.model.document import Document
from tests.cli_run import ROOT, interruptible, specpaint_here

LINE = ["--preset", "hard-eraser", "--line", "0.1:1000,0.6:1000"]


def take(rng, seconds=0.8, rate=22050, channels=1):
    t = np.arange(int(seconds * rate)) / rate
    x = 0.3 * np.sin(2 * np.pi * 1000 * t) + rng.normal(0, 0.05, (channels, t.size))
    return x.astype(np.float32)


@pytest.fixture
def tree(tmp_path, rng):
    """in/a.wav (16-bit), in/sub/b.flac (24-bit, stereo), in/sub/deeper/c.wav (float)."""
    root = tmp_path / "in"
    (root / "sub" / "deeper").mkdir(parents=True)
    sf.write(root / "a.wav", take(rng).T, 22050, subtype="PCM_16")
    sf.write(root / "sub" / "b.flac", take(rng, channels=2).T, 22050, subtype="PCM_24")
    sf.write(root / "sub" / "deeper" / "c.wav", take(rng).T, 22050, subtype="FLOAT")
    (root / "notes.txt").write_text("not audio: a folder's other files are left alone")
    return root


def journal(outdir):
    return [json.loads(line) for line in (outdir / batch.JOURNAL).read_text().splitlines()]


@pytest.mark.slow
def test_outputs_mirror_the_tree_in_the_inputs_format_and_depth_as_apply_writes_them(
        tree, tmp_path):
    out = tmp_path / "out"
    r = specpaint_here("batch", tree, "-o", out, *LINE)
    assert r.returncode == 0, r.stderr
    assert "3 of 3 file(s) done, 0 failed" in r.stdout
    for rel, subtype in [("a.wav", "PCM_16"), ("sub/b.flac", "PCM_24"),
                         ("sub/deeper/c.wav", "FLOAT")]:
        assert sf.info(out / rel).subtype == subtype
        alone = tmp_path / ("alone" + (tree / rel).suffix)  # the same stroke by `apply`
        assert specpaint_here("apply", tree / rel, "-o", alone, "--bits",
                              {"PCM_16": "16", "PCM_24": "24", "FLOAT": "float"}[subtype],
                              *LINE).returncode == 0
        np.testing.assert_array_equal(sf.read(out / rel)[0], sf.read(alone)[0])
    report = json.loads((out / batch.REPORT).read_text())
    assert (report["total"], report["done"], report["failed"]) == (3, 3, 0)
    assert set(report["stage_seconds"]) == {"decode", "paint", "write"}
    for entry in report["files"]:
        assert set(entry["seconds"]) == {"decode", "paint", "write"} and entry["notes"] == []
        assert 0 < entry["metrics"]["snr_db"] < 40  # the eraser took the 1 kHz tone out
    assert [e["status"] for e in journal(out)] == ["done"] * 3
    assert not list(out.rglob("*.part"))


# name -> (libsndfile format, subtype) written, among those a batch was blind to or
# failed on: .aifc/.bwf/.rf64/.wave were not searched for, and .caf/.au/.snd/.w64/.oga
# failed each file after painting it ("cannot write"); 32-bit came out 24-bit.
EVERY_FORMAT = {"a.aifc": ("AIFF", "PCM_32"), "b.bwf": ("WAV", "PCM_24"),
                "c.rf64": ("RF64", "PCM_16"), "d.wave": ("WAV", "FLOAT"),
                "e.caf": ("CAF", "PCM_24"), "f.au": ("AU", "PCM_16"), "g.snd": ("AU", "FLOAT"),
                "h.w64": ("W64", "PCM_32"), "i.oga": ("OGG", "VORBIS"),
                "j.wav": ("WAV", "PCM_32")}


@pytest.mark.slow
def test_a_folder_in_every_written_format_comes_out_as_it_went_in(tmp_path, rng):
    root = tmp_path / "in"
    root.mkdir()
    for name, (fmt, subtype) in EVERY_FORMAT.items():
        sf.write(root / name, take(rng).T, 22050, format=fmt, subtype=subtype)
    out = tmp_path / "out"
    r = specpaint_here("batch", root, "-o", out, *LINE)
    assert r.returncode == 0, r.stderr
    assert f"{len(EVERY_FORMAT)} of {len(EVERY_FORMAT)} file(s) done" in r.stdout
    for name, (fmt, subtype) in EVERY_FORMAT.items():
        info = sf.info(out / name)
        assert (info.format, info.subtype, info.samplerate) == (fmt, subtype, 22050), name


@pytest.mark.slow
def test_inputs_read_but_not_written_need_a_format_before_any_file(tmp_path, rng):
    """A folder of MP3s painted in their own format failed every file, after painting
    it, with "cannot write '.mp3' files"; now the batch says so first, and what to do.
    (MP3 is written since issue 50; Opus is still read alone.)"""
    root = tmp_path / "in"
    root.mkdir()
    for name in ("a.opus", "b.opus", "c.wav"):
        sf.write(root / name, take(rng).T, 24000, format="OGG" if name.endswith("opus")
                 else "WAV", subtype="OPUS" if name.endswith("opus") else None)
    out = tmp_path / "out"
    r = specpaint_here("batch", root, "-o", out, *LINE)
    assert r.returncode == 2, r.stderr
    assert "a.opus and 1 more: SpectroPaint reads .opus files but does not write them; " \
           "give --format (" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()  # refused before anything: not even the folder
    r = specpaint_here("batch", root, "-o", out, "--format", "flac", *LINE)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.glob("*.flac")) == ["a.flac", "b.flac", "c.flac"]


def test_bits_for_an_ogg_output_says_it_has_none():
    jobs = [batch.Job(Path("in/a.ogg"), Path("out/a.ogg")),
            batch.Job(Path("in/b.ogg"), Path("out/b.ogg"))]
    with pytest.raises(ParameterError, match=r"--bits 16: OGG Vorbis files have no bit depth "
                                             r"\(in/a\.ogg and 1 more\); leave --bits out"):
        batch.check_outputs(jobs, "16")
    batch.check_outputs(jobs, None)
    mp3 = [batch.Job(Path("in/a.mp3"), Path("out/a.mp3"))]
    with pytest.raises(ParameterError, match=r"--bits 24: MP3 files have no bit depth"):
        batch.check_outputs(mp3, "24")


@pytest.mark.slow
def test_a_stroke_past_a_files_end_is_clipped_with_a_note(tree, tmp_path):
    out = tmp_path / "out"
    r = specpaint_here("batch", tree / "a.wav", "-o", out, "--preset", "hard-eraser", "--line",
                       "0.1:1000,5:1000")
    assert r.returncode == 0, r.stderr
    notes = json.loads((out / batch.REPORT).read_text())["files"][0]["notes"]
    assert len(notes) == 1 and "past the end" in notes[0]


@pytest.mark.slow
def test_format_and_bits_options_and_a_glob(tree, tmp_path):
    out = tmp_path / "out"
    r = specpaint_here("batch", f"{tree}/**/*.wav", "-o", out, "--format", "flac", "--bits", "16",
                       *LINE)
    assert r.returncode == 0, r.stderr
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.flac"))
    assert written == ["a.flac", "sub/deeper/c.flac"]
    assert {sf.info(out / w).subtype for w in written} == {"PCM_16"}


@pytest.mark.slow
def test_a_bad_file_is_recorded_and_the_batch_goes_on(tree, tmp_path):
    (tree / "broken.wav").write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunk")
    out = tmp_path / "out"
    r = specpaint_here("batch", tree, "-o", out, *LINE)
    assert r.returncode == 1, r.stderr
    assert "3 of 4 file(s) done, 1 failed" in r.stdout
    failed = [e for e in journal(out) if e["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["input"].endswith("broken.wav")
    assert "not a readable audio file" in failed[0]["error"] and "\n" not in failed[0]["error"]
    assert not (out / "broken.wav").exists()
    assert "failed:" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args,match", [
    (["--preset", "no-such-preset", "--line", "0:100"], "no-such-preset"),
    (["--format", "opus"] + LINE, "--format opus"),
    (["--bits", "float"] + LINE, "--bits float: FLAC files cannot hold it"),  # sub/b.flac
    (["--jobs", "0"] + LINE, "--jobs 0"),
    (["--preset", "hard-eraser"], "--line"),
])
def test_usage_errors_stop_before_any_file(tree, tmp_path, args, match):
    out = tmp_path / "out"
    r = specpaint_here("batch", tree, "-o", out, *args)
    assert r.returncode == 2 and match in r.stderr, r.stderr
    assert not list(out.rglob("*.wav")) and not list(out.rglob("*.flac"))


def test_no_audio_found_is_a_usage_error(tmp_path):
    (tmp_path / "empty").mkdir()
    r = specpaint_here("batch", tmp_path / "empty", "-o", tmp_path / "out", *LINE)
    assert r.returncode == 2 and "no audio files found" in r.stderr


@pytest.mark.slow
def test_resume_skips_what_the_journal_records_as_done(tree, tmp_path):
    out = tmp_path / "out"
    assert specpaint_here("batch", tree, "-o", out, *LINE).returncode == 0
    records = (out / batch.JOURNAL).read_text().splitlines()
    first = json.loads(records[0])
    kept = os.stat(first["output"])
    # as a killed run leaves it: one file recorded, the next line cut short, one output gone
    (out / batch.JOURNAL).write_text(records[0] + "\n" + records[1][:25])
    os.unlink(json.loads(records[1])["output"])
    r = specpaint_here("batch", tree, "-o", out, "--resume", *LINE)
    assert r.returncode == 0, r.stderr
    assert "3 of 3 file(s) done" in r.stdout and "1 done before" in r.stderr
    again = os.stat(first["output"])
    assert (again.st_ino, again.st_mtime_ns) == (kept.st_ino, kept.st_mtime_ns)  # not redone
    assert all(os.path.exists(json.loads(line)["output"]) for line in records)


def strict_json(name: str):
    raise AssertionError(f"{name} is not standard JSON")


@pytest.mark.slow
def test_resume_with_other_settings_is_refused_and_changes_nothing(tree, tmp_path):
    """A resumed batch skips the files done: with another preset or --bits it left OUTDIR
    half painted one way and half the other, without a word."""
    out = tmp_path / "out"
    assert specpaint_here("batch", tree, "-o", out, *LINE).returncode == 0
    recorded = json.loads((out / batch.SETTINGS).read_text(), parse_constant=strict_json)
    assert recorded["strokes"][0]["set"]["gain_db"] == "-inf"  # the hard eraser's
    records = (out / batch.JOURNAL).read_text().splitlines()
    (out / batch.JOURNAL).write_text(records[0] + "\n")  # as if killed after one file
    before = {p: p.read_bytes() for p in out.rglob("*")
              if p.is_file() and p.name != batch.JOURNAL}
    for other in (["--preset", "gentle-boost", "--line", "0.1:1000,0.6:1000"],
                  ["--bits", "16", *LINE], ["--n-fft", "1024", *LINE]):
        r = specpaint_here("batch", tree, "-o", out, "--resume", *other)
        assert r.returncode == 2, r.stderr
        assert "the files done so far were painted with other" in r.stderr
        assert "leave out --resume to paint every file afresh" in r.stderr
        assert {p: p.read_bytes() for p in before} == before
        assert (out / batch.JOURNAL).read_text() == records[0] + "\n"
    assert "other strokes;" in specpaint_here("batch", tree, "-o", out, "--resume", "--preset",
                                              "gentle-boost", "--line", "0.1:1000,0.6:1000").stderr
    settings = (out / batch.SETTINGS).read_text()
    (out / batch.SETTINGS).write_text("[]")  # damaged: refused, in one line
    r = specpaint_here("batch", tree, "-o", out, "--resume", *LINE)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    (out / batch.SETTINGS).write_text(settings)
    r = specpaint_here("batch", tree, "-o", out, "--resume", "--jobs", "1", *LINE)  # same: goes on
    assert r.returncode == 0 and "1 done before" in r.stderr, r.stderr


@pytest.mark.slow
def test_resume_paints_again_an_input_changed_since_it_was_painted(tree, tmp_path):
    """A take re-exported between two runs was skipped on --resume, its output left
    painted from the old take."""
    out = tmp_path / "out"
    assert specpaint_here("batch", tree, "-o", out, *LINE).returncode == 0
    records = [json.loads(line) for line in (out / batch.JOURNAL).read_text().splitlines()]
    assert all(r["bytes"] == os.path.getsize(r["input"]) and r["mtime_ns"] for r in records)
    outputs = {r["output"]: os.stat(r["output"]) for r in records}
    old_peak = np.max(np.abs(sf.read(records[0]["output"])[0]))
    changed = Path(records[0]["input"])
    x, rate = sf.read(changed, dtype="float32")
    sf.write(changed, 0.5 * x, rate, subtype=sf.info(changed).subtype)  # same size, new take
    r = specpaint_here("batch", tree, "-o", out, "--resume", *LINE)
    assert r.returncode == 0, r.stderr
    assert f"{changed} changed since painted; painting again" in r.stderr
    assert "2 done before" in r.stderr and "3 of 3 file(s) done" in r.stdout
    for output, before in outputs.items():
        now = os.stat(output)
        redone = output == records[0]["output"]
        assert ((now.st_ino, now.st_mtime_ns) != (before.st_ino, before.st_mtime_ns)) == redone
    assert np.max(np.abs(sf.read(records[0]["output"])[0])) == pytest.approx(old_peak / 2,
                                                                                rel=0.01)


@pytest.mark.slow
def test_a_batch_paints_with_its_presets_as_they_were_when_it_started(tree, tmp_path,
                                                                      monkeypatch):
    """Presets were looked up by each file's painting: a cluster worker without this
    user's presets failed every file ("unknown preset"), and a preset edited during a
    batch, or between a run and its --resume, painted files differently."""
    mine = tmp_path / "config" / "spectropaint" / "presets"
    mine.mkdir(parents=True)
    (mine / "my-cut.json").write_text(json.dumps(
        {"version": 1, "name": "my-cut", "brush": "gain", "params": {"gain_db": -30},
         "inputs": {"opacity": {"pressure": [[0, 0.5], [1, 1]]}}}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    stroke = {"preset": "my-cut", "points": [[0.1, 1000], [0.6, 1000]], "set": {"hardness": 1}}
    [resolved] = script.with_presets_resolved([stroke])
    assert resolved == {"brush": "gain", "points": stroke["points"],
                        "set": {"gain_db": -30, "hardness": 1},
                        "inputs": {"opacity": {"pressure": [[0, 0.5], [1, 1]]}}}
    take_path = tree / "a.wav"
    expected = Editor(Document(load(take_path)), history_limit=0)
    expected.run_script([stroke])
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "elsewhere"))  # as on a worker
    out = tmp_path / "out"
    out.mkdir()
    log = batch.Journal(out, resume=False)
    batch_pipeline.run_local(batch.find_jobs([str(take_path)], out),
                             batch.Settings([resolved], {"device": "cpu"}, bits="float"), log)
    log.close()
    [record] = journal(out)
    assert record["status"] == "done", record["error"]
    assert np.array_equal(sf.read(out / "a.wav", dtype="float32", always_2d=True)[0].T,
                          expected.audio())
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # edited, then resumed
    assert specpaint_here("batch", take_path, "-o", out, "--preset", "my-cut", "--line",
                          "0.1:1000,0.6:1000").returncode == 0
    (mine / "my-cut.json").write_text((mine / "my-cut.json").read_text().replace("-30", "-12"))
    r = specpaint_here("batch", take_path, "-o", out, "--resume", "--preset", "my-cut",
                       "--line", "0.1:1000,0.6:1000")
    assert r.returncode == 2 and "painted with other strokes" in r.stderr, r.stderr


@pytest.mark.parametrize("preset, transform, stacks", [
    ("hard-eraser", "stft", True), ("gentle-boost", "stft", True),
    ("tone-remover", "stft", False),  # finds one tone in all channels together
    ("blur-haze", "stft", None),  # stacked only where check_settings finds the same bits
    ("hard-eraser", "cq", None),
])
def test_short_files_painted_stacked_give_the_bits_each_gives_alone(rng, monkeypatch, preset,
                                                                     transform, stacks):
    rate = 22050
    t = np.arange(int(1.5 * rate)) / rate
    takes = [(0.3 * np.sin(2 * np.pi * f * t) + rng.normal(0, 0.05, (ch, t.size)))
             .astype(np.float32) for f, ch in ((1000, 1), (1450, 2), (700, 1), (1000, 1))]
    settings = batch.Settings([{"preset": preset, "points": [[0.2, 1000], [1.2, 1000]]}],
                              {"transform": transform, "device": "cpu"})
    batch_stacks.check_settings(settings)
    assert stacks is None or settings.stacks == stacks
    calls = []
    real = batch_stacks.paint_audio
    monkeypatch.setattr(batch_stacks, "paint_audio", lambda a, s: calls.append(a) or real(a, s))
    monkeypatch.setattr(batch_stacks, "_SAME_BITS", {})
    alone = [real(Audio(x.copy(), rate), settings) for x in takes]
    for run in range(2):  # the first stack of a shape is also painted alone, to compare
        calls.clear()
        together = batch_stacks.paint_many([Audio(x.copy(), rate) for x in takes], settings)
        if settings.stacks:
            assert len(calls) == (1 + len(takes) if run == 0 else 1)
        else:
            assert len(calls) == len(takes)
        for a, wave in zip(alone, together, strict=True):
            np.testing.assert_array_equal(wave, a)
    assert not np.array_equal(together[0], takes[0])  # it painted


def test_a_stack_the_device_has_no_memory_for_is_halved_and_the_batch_goes_on(rng,
                                                                              monkeypatch):
    """A device that holds 4 channels at once (torch.stft runs out of memory on more):
    6 files stacked run out, the batch goes on in stacks of 3, says so in each file's
    notes, and every file gets the bits it gets painted alone."""
    import torch

    rate = 22050
    t = np.arange(int(1.2 * rate)) / rate
    takes = [(0.3 * np.sin(2 * np.pi * rng.uniform(300, 3000) * t) +
              rng.normal(0, 0.05, t.size)).astype(np.float32)[None] for _ in range(6)]
    settings = batch.Settings([{"preset": "hard-eraser", "points": [[0.2, 1000], [1.0, 1000]]}],
                              {"transform": "stft", "device": "cpu"})
    batch_stacks.check_settings(settings)
    assert settings.stacks and settings.stack == 8
    alone = [batch_stacks.paint_audio(Audio(x.copy(), rate), settings) for x in takes]
    real = torch.stft

    def small_device(x, *args, **kwargs):
        if x.dim() > 1 and x.shape[0] > 4:
            raise torch.OutOfMemoryError("CUDA out of memory (a test's 4-channel device)")
        return real(x, *args, **kwargs)
    monkeypatch.setattr(torch, "stft", small_device)
    monkeypatch.setattr(batch_stacks, "_SAME_BITS", {})
    audios = [Audio(x.copy(), rate) for x in takes]
    together = batch_stacks.paint_many(audios, settings)
    assert settings.stack == 3
    for a, wave, audio in zip(alone, together, audios, strict=True):
        np.testing.assert_array_equal(wave, a)
        assert any("painting 6 files at once: 3 at once from then on" in n for n in audio.notes)


def many(tmp_path, rng, count, seconds=2.0):
    root = tmp_path / "many"
    root.mkdir()
    x = take(rng, seconds=seconds)
    for i in range(count):
        sf.write(root / f"f{i:03d}.wav", x.T, 22050, subtype="PCM_16")
    return root


COUNT, SECONDS = 160, 1.0  # files: a batch is still busy when the test interrupts it (the
# tasks in flight, up to workers + 1 of 16 files, finish first: at 80 a quiet machine
# finished all); each 1 s long, so that a resume paints the rest soon


def start_batch(root, out, jobs=None):
    env = {**os.environ, "SPECPAINT_DEVICE": "cpu"}
    return subprocess.Popen([sys.executable, "-m", "app.main", "batch", str(root), "-o", str(out),
                             "--preset", "blur-haze", "--line", "0:500,1:3000",
                             "--transform", "cq", *(["--jobs", str(jobs)] if jobs else [])],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=interruptible)


def wait_for_records(out, count, proc, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        path = out / batch.JOURNAL
        if path.exists() and len(path.read_text().splitlines()) >= count:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the batch recorded too few files in time")


@pytest.mark.slow
def test_kill_9_loses_no_finished_file_and_resume_completes(tmp_path, rng):
    root, out = many(tmp_path, rng, COUNT, SECONDS), tmp_path / "out"
    proc = start_batch(root, out)
    wait_for_records(out, 3, proc)
    workers = _workers(proc.pid)
    assert workers, "the batch paints in worker processes"
    if sys.platform.startswith("linux"):  # forked from the batch: no second import of torch
        assert all(_parent(w) == proc.pid for w in workers)
        assert not [p for p in map(int, filter(str.isdigit, os.listdir("/proc")))
                    if _parent(p) == proc.pid and b"forkserver" in _cmdline(p)]
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10  # no worker goes on painting and writing files
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(_alive, workers)), "a worker outlived the batch killed with -9"
    done = [e for e in journal(out) if e["status"] == "done"]
    assert 3 <= len(done) < COUNT
    for e in done:  # every file the journal calls done is whole
        assert sf.info(e["output"]).frames == SECONDS * 22050
    for path in out.glob("*.wav"):  # and no output under its final name is partial
        assert sf.info(path).frames == SECONDS * 22050
    r = specpaint_here("batch", root, "-o", out, "--resume", "--preset", "blur-haze", "--line",
                       "0:500,1:3000", "--transform", "cq")
    assert r.returncode == 0, r.stderr
    assert len(list(out.glob("*.wav"))) == COUNT and not list(out.glob(".*.part"))
    assert f"{len(done)} done before" in r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [1, 2])  # the in-process pipeline; worker processes
def test_ctrl_c_keeps_finished_files_and_says_how_to_go_on(tmp_path, rng, jobs):
    root, out = many(tmp_path, rng, COUNT, SECONDS), tmp_path / "out"
    proc = start_batch(root, out, jobs)
    wait_for_records(out, 2, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "cancelled after" in err and "--resume" in err and "Traceback" not in err
    done = [e for e in journal(out) if e["status"] == "done"]
    assert sorted(out.glob("*.wav")) == sorted(map(type(out), (e["output"] for e in done)))
    report = json.loads((out / batch.REPORT).read_text())
    assert report["done"] == len(done) and report["not_run"] == COUNT - len(done) > 0


class CtrlCAtFirstFile:
    """A status line that presses Ctrl+C (a real SIGINT to this process) as the first
    finished file is journaled."""

    def __init__(self):
        self.records = []

    def finished(self, record) -> None:
        if not self.records:
            os.kill(os.getpid(), signal.SIGINT)
        self.records.append(record)

    def queues(self, decoded: int, painted: int) -> None:
        pass


@pytest.mark.slow
@pytest.mark.parametrize("run", ["threads", "processes"])
def test_ctrl_c_while_files_are_journaled_leaves_no_written_file_out(tmp_path, rng, run,
                                                                     monkeypatch):
    """Seen in CI: Ctrl+C landed between two files of a finished group; the rest of the
    group stood written in the output folder but not in the journal (nor the report).
    Seen in CI too: the group submitted as the first one was journaled, with Ctrl+C
    already pressed, went on to run (a process pool cannot always cancel it)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # see interruptible
    root, out = many(tmp_path, rng, 12), tmp_path / "out"
    out.mkdir()
    settings = batch.Settings([{"preset": "hard-eraser", "points": [[0, 1000], [1, 1000]]}],
                              {"device": "cpu"})
    log, status = batch.Journal(out, resume=False), CtrlCAtFirstFile()
    submitted_after_ctrl_c, submit = [], ProcessPoolExecutor.submit

    def watched_submit(pool, *args, **kwargs):
        submitted_after_ctrl_c.append(bool(status.records))
        return submit(pool, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", watched_submit)
    try:
        with pytest.raises(KeyboardInterrupt):
            if run == "threads":
                batch_pipeline.run_local(batch.find_jobs([str(root)], out), settings, log, status)
            else:
                run_processes(batch.find_jobs([str(root)], out), settings, log, status,
                              workers=1, group=4)
    finally:
        signal.signal(signal.SIGINT, previous)
        log.close()
    done = [e for e in journal(out) if e["status"] == "done"]
    assert len(done) >= (4 if run == "processes" else 1)  # a group is journaled whole
    assert len(done) < 12 and [r.input for r in status.records] == [e["input"] for e in done]
    assert sorted(out.glob("*.wav")) == sorted(map(type(out), (e["output"] for e in done)))
    assert not any(submitted_after_ctrl_c)
    assert submitted_after_ctrl_c == ([False, False] if run == "processes" else [])


def count_decoded(monkeypatch) -> list[int]:
    """From now on the decoded files alive at once are counted (``[peak]``), and each
    file is written slowly, so the reader can run ahead of the writer."""
    alive, peak, lock = set(), [0], threading.Lock()

    def counted(decode):
        def decoded(path, **kw):
            audio = decode(path, **kw)
            if audio is not None:
                key = id(audio)
                with lock:
                    alive.add(key)
                    peak[0] = max(peak[0], len(alive))
                weakref.finalize(audio, alive.discard, key)
            return audio
        return decoded

    real_write = batch.write_output

    def slow_write(*args):
        time.sleep(0.05)
        return real_write(*args)

    monkeypatch.setattr(batch, "load", counted(load))  # and plain WAVs' fast path:
    monkeypatch.setattr(batch, "plain_audio", counted(batch.plain_audio))
    monkeypatch.setattr(batch, "write_output", slow_write)
    return peak


ERASE = [{"preset": "hard-eraser", "points": [[0, 1000], [1, 1000]]}]


@pytest.mark.parametrize("stacks", [False, True])
def test_the_pipeline_holds_a_bounded_number_of_files(tmp_path, rng, monkeypatch, stacks):
    """With a slow writer the reader runs ahead; decoded files alive at once must stay
    within max_in_flight, however many files the batch has, painted alone or stacked."""
    root, out = many(tmp_path, rng, 30), tmp_path / "out"
    peak = count_decoded(monkeypatch)
    settings = batch.Settings(ERASE, {"device": "cpu"})
    if stacks:
        batch_stacks.check_settings(settings)
        assert settings.stacks
    jobs = batch.find_jobs([str(root)], out)
    out.mkdir()
    log = batch.Journal(out, resume=False)
    batch_pipeline.run_local(jobs, settings, log, workers=2)
    log.close()
    assert len(list(out.glob("*.wav"))) == 30
    assert 3 <= peak[0] <= batch_pipeline.max_in_flight(2) == 21


@pytest.mark.slow
@pytest.mark.parametrize("files_fitting", [1, 3])
def test_the_pipeline_decodes_a_file_only_when_its_peak_fits_the_memory_budget(
        tmp_path, rng, monkeypatch, files_fitting):
    """A count of files is no bound on bytes: long files, read ahead, took more memory
    than the machine had. With a budget for ``files_fitting`` files' estimated peaks,
    no more are decoded at once, and every file is still painted."""
    root, out = many(tmp_path, rng, 12), tmp_path / "out"
    peak = count_decoded(monkeypatch)
    settings = batch.Settings(ERASE, {"device": "cpu"})
    jobs = batch.find_jobs([str(root)], out)
    size, seconds = PeakEstimates(settings.analysis)(jobs[0].input)
    assert seconds == 2.0 and size > 4 * 2 * 22050  # more than its samples
    budget = Budget(int((files_fitting + 0.5) * size))
    out.mkdir()
    log = batch.Journal(out, resume=False)
    batch_pipeline.run_local(jobs, settings, log, workers=2, budget=budget)
    log.close()
    assert len(list(out.glob("*.wav"))) == 12
    assert peak[0] == files_fitting  # (the test above: 3 to 18 without a budget)
    assert budget.peak == files_fitting * size and budget.used == 0


def test_worker_processes_run_only_the_groups_whose_peaks_fit_the_memory_budget(tmp_path,
                                                                               rng):
    """Two workers, two groups: with a budget for one group's estimated peak they run
    one after the other, with room for both at once; the files come out the same."""
    root = many(tmp_path, rng, 8)
    settings = batch.Settings(ERASE, {"device": "cpu"})
    jobs = batch.find_jobs([str(root)], tmp_path / "any")
    need = PeakEstimates(settings.analysis).group([j.input for j in jobs[:4]], settings.stacks,
                                                  batch.STACK_SECONDS)
    outputs = []
    for limit, groups_at_once in ((int(1.5 * need), 1), (10 * need, 2)):
        out = tmp_path / f"out{groups_at_once}"
        out.mkdir()
        log, budget = batch.Journal(out, resume=False), Budget(limit)
        run_processes(batch.find_jobs([str(root)], out), settings, log, workers=2, group=4,
                      budget=budget)
        log.close()
        assert budget.peak == groups_at_once * need and budget.used == 0
        outputs.append([sf.read(p)[0] for p in sorted(out.glob("*.wav"))])
    assert len(outputs[0]) == 8 and all(np.array_equal(a, b) for a, b in zip(*outputs, strict=True))


def test_batch_output_equals_painting_the_file_alone(tree, tmp_path):
    """The library path: run_local's output is the Editor's on the same file."""
    out = tmp_path / "out"
    strokes = [{"preset": "hard-eraser", "points": [[0.1, 1000], [0.6, 1000]]}]
    settings = batch.Settings(strokes, {"device": "cpu", "transform": "cq"}, bits="float")
    out.mkdir()
    log = batch.Journal(out, resume=False)
    jobs = [batch.Job(tree / "a.wav", out / "a.wav")]
    batch_pipeline.run_local(jobs, settings, log)
    log.close()
    editor = Editor(Document.open(tree / "a.wav", device="cpu", transform="cq"))
    editor.run_script(strokes)
    np.testing.assert_array_equal(sf.read(out / "a.wav", dtype="float32")[0],
                                  editor.audio()[0])


@pytest.mark.slow
def test_the_batch_on_a_dask_cluster_writes_what_the_local_run_writes(tree, tmp_path):
    from dask.distributed import LocalCluster

    local, remote = tmp_path / "local", tmp_path / "remote"
    assert specpaint_here("batch", tree, "-o", local, *LINE).returncode == 0
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        r = specpaint_here("batch", tree, "-o", remote, "--scheduler", cluster.scheduler_address,
                           *LINE)
    assert r.returncode == 0, r.stderr
    def audio_files(folder):
        return sorted(p.relative_to(folder) for p in folder.rglob("*")
                      if p.is_file() and not p.name.startswith("batch-"))

    outputs = audio_files(local)
    assert len(outputs) == 3 and outputs == audio_files(remote)
    for rel in outputs:  # every sample bit for bit (a float WAV's PEAK chunk has a timestamp)
        assert sf.info(local / rel).subtype == sf.info(remote / rel).subtype
        np.testing.assert_array_equal(sf.read(local / rel, dtype="float32")[0],
                                      sf.read(remote / rel, dtype="float32")[0])

    def without_times(folder):
        report = json.loads((folder / batch.REPORT).read_text())
        for entry in report["files"]:
            entry.pop("seconds")
            entry["output"] = os.path.relpath(entry["output"], folder)
        report.pop("seconds"), report.pop("stage_seconds")
        return report

    assert without_times(local) == without_times(remote)


def test_an_unreachable_scheduler_is_a_usage_error_after_the_timeout_asked_for(tree, tmp_path):
    """The connect timeout is a setting (it was a hard-coded 20 s, waited out)."""
    r = specpaint_here("batch", tree, "-o", tmp_path / "out", "--scheduler",
                       "tcp://127.0.0.1:9", "--connect-timeout", "1", *LINE)
    assert r.returncode == 2 and "cannot reach the Dask scheduler" in r.stderr
    assert "after 1 s" in r.stderr, r.stderr


@pytest.mark.parametrize("seconds", ["0", "-1", "nan", "inf"])
def test_a_connect_timeout_that_is_no_time_is_a_usage_error(capsys, tree, tmp_path, seconds):
    from app.main import main

    assert main(["batch", str(tree), "-o", str(tmp_path / "out"), "--scheduler",
                 "tcp://127.0.0.1:9", "--connect-timeout", seconds, *LINE]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--connect-timeout" in err, err


@pytest.mark.slow
def test_a_worker_that_dies_fails_its_files_and_the_batch_reports_it(tmp_path, rng):
    root, out = many(tmp_path, rng, COUNT, SECONDS), tmp_path / "out"
    proc = start_batch(root, out)
    wait_for_records(out, 1, proc)
    workers = _workers(proc.pid)
    assert workers, "the batch runs worker processes"
    os.kill(workers[0], signal.SIGKILL)  # as the kernel's out-of-memory killer would
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "Traceback" not in err and "a worker process died" in err
    report = json.loads((out / batch.REPORT).read_text())
    lost = [f for f in report["files"] if f["status"] == "failed"]
    assert lost and all("--resume runs this file again" in f["error"] for f in lost)
    assert report["done"] + report["failed"] + report["not_run"] == COUNT
    r = specpaint_here("batch", root, "-o", out, "--resume", "--preset", "blur-haze", "--line",
                       "0:500,1:3000", "--transform", "cq")
    assert r.returncode == 0, r.stderr
    assert len(list(out.glob("*.wav"))) == COUNT


def test_a_task_that_raises_is_not_reported_as_a_dead_worker(tmp_path):
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from app.batch.cluster import _outcome

    group = [batch.Job(tmp_path / "a.wav", tmp_path / "out" / "a.wav")]
    raised, died = Future(), Future()
    raised.set_exception(ValueError("a bug in painting"))
    died.set_exception(BrokenProcessPool("a process terminated abruptly"))
    [bug] = _outcome(raised, group, "a worker process died")
    [lost] = _outcome(died, group, "a worker process died")
    assert bug.status == lost.status == "failed"
    assert bug.error.startswith("the task painting this file failed: ValueError: a bug")
    assert lost.error.startswith("a worker process died: BrokenProcessPool")
    assert bug.error.endswith("--resume runs this file again")


def _workers(batch: int) -> list[int]:
    """The batch's worker processes: forks of the batch itself, or children of its
    forkserver (the child of the batch that serves forks)."""
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    children = {pid for pid in pids if _parent(pid) == batch}
    helpers = {pid for pid in children if b"multiprocessing" in _cmdline(pid)}
    return [pid for pid in pids if pid in children - helpers or _parent(pid) in helpers]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


SCRIPTS_APPLY_GUARDS = [  # (issue 37) each raised a TypeError or ValueError through batch
    ([{"preset": "hard-eraser", "points": 5}], r"strokes[0].points: expected a non-empty list"),
    ([{"preset": "hard-eraser", "points": [["1", 1000]]}], r"strokes[0].points[0]: expected"),
    ([{"preset": "hard-eraser", "points": [[1, 1000]], "set": {"radius_hz": "wide"}}],
     "strokes[0].set.radius_hz: expected a number, got str 'wide'"),
    ([{"preset": "hard-eraser", "points": [[1, 1000]], "set": {"sparkle": 1}}],
     "strokes[0].set: gain has no parameter(s) sparkle"),
    ([{"preset": "hard-eraser", "points": [[1, 1000]], "channel": "left"}],
     "strokes[0].channel: expected a number, got str 'left'"),
    ([{"brush": "gain", "points": [[1, 1000]], "inputs": {"opacity": 3}}],
     "inputs.opacity: expected a JSON object"),
    ([{"points": [[1, 1000]]}, 7], "strokes[0]: give either a preset or a brush type"),
]


@pytest.mark.parametrize("script,match", SCRIPTS_APPLY_GUARDS)
def test_apply_and_batch_refuse_a_bad_stroke_script_in_the_same_words(capsys, tree, tmp_path,
                                                                        script, match):
    """One validation path (app.session.editor.checked_script) for both commands: exit 2,
    one line, the same message, before any file."""
    from app.cli.commands import main

    path = tmp_path / "s.json"
    path.write_text(json.dumps(script))
    said = []
    for command in (["apply", tree / "a.wav", "-o", tmp_path / "a-out.wav"],
                    ["batch", tree, "-o", tmp_path / "out", "--jobs", "1"]):
        assert main([str(a) for a in command + ["--strokes", path]]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and match in err, err
        said.append(err[err.index(str(path)):])
    assert said[0] == said[1]
    assert not (tmp_path / "a-out.wav").exists() and not list(tmp_path.glob("out/**/*.wav"))


def test_batch_paints_a_script_reaching_far_past_its_files_as_apply_does(capsys, tree,
                                                                          tmp_path):
    """The issue's heal stroke from 1e308 s: apply clips it to the file at once; batch
    painted a probe of the whole reach (60 s, the stroke clipped to it from 60 s down to
    8.7 s) for minutes. The probe is short now: the batch takes seconds and writes what
    apply writes."""
    from app.cli.commands import main

    path = tmp_path / "s.json"
    path.write_text(json.dumps([{"preset": "heal", "points": [[1e308, 0], [8.7, 16000]]}]))
    source = tree / "sub" / "deeper" / "c.wav"  # float: both write it as it is
    t0 = time.perf_counter()
    assert main(["batch", str(source), "-o", str(tmp_path / "out"), "--jobs", "1",
                 "--strokes", str(path)]) == 0
    assert time.perf_counter() - t0 < 30
    assert main(["apply", str(source), "-o", str(tmp_path / "c.wav"), "--strokes",
                 str(path)]) == 0
    assert "clipped to the file: 1e+308 s is past the end" in capsys.readouterr().err
    np.testing.assert_array_equal(sf.read(tmp_path / "out" / "c.wav")[0],
                                  sf.read(tmp_path / "c.wav")[0])


@pytest.mark.slow
def test_a_stroke_naming_the_second_channel_is_painted_on_stereo_files(tmp_path, rng):
    """The batch's probe was mono: a stroke naming channel 1 was refused before any
    file, though every file had two."""
    sf.write(tmp_path / "st.wav", take(rng, channels=2).T, 22050, subtype="FLOAT")
    r = specpaint_here("batch", tmp_path / "st.wav", "-o", tmp_path / "out", "--jobs", "1", *LINE,
                       "--channel", "1")
    assert r.returncode == 0, r.stderr
    x, y = sf.read(tmp_path / "st.wav")[0], sf.read(tmp_path / "out" / "st.wav")[0]
    assert snr_db(x[:, 0], y[:, 0]) > 100 and snr_db(x[:, 1], y[:, 1]) < 20
