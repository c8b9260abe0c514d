"""``specpaint repair`` and ``Editor.repair`` as a user runs them: what was repaired is
said in one line, a module that finds nothing says so and writes the input as it
was, the region bounds the change, and bad options are one-line errors."""

import json

import numpy as np
import pytest
import soundfile as sf
import torch

from app.session.editor import Editor
from engine.errors import ParameterError
from engine.io.audio import Audio
from engine.measure.metrics import si_sdr_db
from engine.model.document import Document
from tests.cli_run import specpaint_here

SR = 22050


def _clicked_tone(rng):
    t = np.arange(2 * SR) / SR
    x = 0.3 * np.sin(2 * np.pi * 330 * t) + 0.1 * np.sin(2 * np.pi * 1210 * t + 1)
    clean = x.copy()
    for i in rng.integers(SR // 10, 2 * SR - SR // 10, 12):
        x[i:i + 3] += rng.choice([-1, 1]) * np.array([0.5, -0.35, 0.2])
    return clean, x


@pytest.mark.slow
def test_cli_declick_repairs_and_reports_each_click(tmp_path, write_audio, rng):
    clean, x = _clicked_tone(rng)
    src = write_audio("clicks.wav", x[None].astype(np.float32), SR, "FLOAT")
    out = tmp_path / "fixed.wav"
    r = specpaint_here("repair", "declick", src, "-o", out, "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["changed"] and 10 <= len(report["events"]) <= 16, report["summary"]
    y, _ = sf.read(out, dtype="float64")
    assert si_sdr_db(clean, y) > si_sdr_db(clean, x) + 20


def test_cli_declip_restores_the_clipped_runs_and_lists_them(tmp_path, write_audio):
    """`specpaint repair declip take.wav -o restored.wav --json`, as docs/restoration.md
    shows it: every restored run listed, the peaks back above the clipping level."""
    t = np.arange(SR) / SR
    clean = 0.9 * np.sin(2 * np.pi * 220 * t) * np.minimum(1, 4 * t)
    clipped = np.clip(clean, -0.6, 0.6)
    src = write_audio("clipped.wav", clipped[None].astype(np.float32), SR, "FLOAT")
    out = tmp_path / "restored.wav"
    r = specpaint_here("repair", "declip", src, "-o", out, "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["changed"] and len(report["events"]) > 100, report["summary"]
    y, _ = sf.read(out, dtype="float64")
    assert np.abs(y).max() > 0.65 and si_sdr_db(clean, y) > si_sdr_db(clean, clipped)


@pytest.mark.slow
def test_cli_repair_that_finds_nothing_says_so(tmp_path, write_audio):
    t = np.arange(SR) / SR
    src = write_audio("tone.wav", (0.3 * np.sin(2 * np.pi * 440 * t))[None].astype(np.float32),
                      SR, "FLOAT")
    r = specpaint_here("repair", "dehum", src, "-o", tmp_path / "o.wav")
    assert r.returncode == 0, r.stderr
    assert "De-hum: found nothing to repair; nothing changed" in r.stderr
    assert "found nothing to repair" in r.stdout


@pytest.mark.slow
def test_cli_dehum_within_a_region_changes_only_the_region(tmp_path, write_audio, rng):
    n = 6 * SR
    t = np.arange(n) / SR
    voice = 0.2 * rng.standard_normal(n) * (np.sin(2 * np.pi * 0.7 * t) > 0)
    hum = 0.05 * np.sin(2 * np.pi * 60.2 * t) + 0.03 * np.sin(2 * np.pi * 180.6 * t + 1)
    src = write_audio("hum.wav", (voice + hum)[None].astype(np.float32), SR, "FLOAT")
    out = tmp_path / "o.wav"
    r = specpaint_here("repair", "dehum", src, "-o", out, "--start", "2", "--end", "4", "--high",
                       "1000")
    assert r.returncode == 0, r.stderr
    assert "hum at 60." in r.stdout
    x, y = sf.read(src, dtype="float64")[0], sf.read(out, dtype="float64")[0]
    reach = 2048  # an STFT frame either side of the region
    assert np.abs(y[:2 * SR - reach] - x[:2 * SR - reach]).max() < 1e-5
    assert np.abs(y[4 * SR + reach:] - x[4 * SR + reach:]).max() < 1e-5
    inside = slice(int(2.2 * SR), int(3.8 * SR))
    assert si_sdr_db(voice[inside], y[inside]) > si_sdr_db(voice[inside], x[inside]) + 10


def test_cli_repair_refuses_a_setting_of_another_module(tmp_path, write_audio):
    src = write_audio("s.wav", np.zeros((1, SR), np.float32), SR)
    r = specpaint_here("repair", "dehum", src, "-o", tmp_path / "o.wav", "--sensitivity", "3")
    assert r.returncode == 2
    assert "--sensitivity: not a setting of dehum" in r.stderr and "Traceback" not in r.stderr
    r = specpaint_here("repair", "denoise", src, "-o", tmp_path / "o.wav", "--profile", "a:b")
    assert r.returncode == 2 and "--profile: 'a:b' is not START:END" in r.stderr


def test_editor_repair_is_one_undo_step_bit_for_bit(write_audio, rng):
    clean, x = _clicked_tone(rng)
    ed = Editor.open(write_audio("c.wav", x[None].astype(np.float32), SR, "FLOAT"))
    before = ed.doc.read_complex(ed.doc.full_rect())
    report = ed.repair("declick", sensitivity=5)
    assert report.changed and len(report.events) >= 10
    after = ed.doc.read_complex(ed.doc.full_rect())
    ed.undo()
    assert torch.equal(ed.doc.read_complex(ed.doc.full_rect()), before)
    ed.redo()
    assert torch.equal(ed.doc.read_complex(ed.doc.full_rect()), after)


def test_a_repaired_click_is_put_back_alone_as_one_undo_step(write_audio, rng):
    """Each click de-click repaired can be put back by itself: the audio about it is the
    input again, the other clicks stay repaired; putting back all of them gives the
    input; each put-back is one undo step, undone bit for bit."""
    x = np.stack([_clicked_tone(rng)[1], _clicked_tone(rng)[1]]).astype(np.float32)
    ed = Editor.open(write_audio("c.wav", x, SR, "FLOAT"))
    report = ed.repair("declick", sensitivity=5)
    assert {e[2] for e in report.events} == {0, 1} and len(report.changes) == len(report.events)
    repaired = ed.audio().copy()
    order = rng.permutation(len(report.events))
    first = order[0]
    seconds, length, channel = report.events[first]
    before = ed.doc.read_complex(ed.doc.full_rect())
    ed.put_back(report, int(first))
    now = ed.audio()
    at = slice(round(seconds * SR) - 2, round((seconds + length) * SR) + 2)
    assert np.abs(now[channel, at] - x[channel, at]).max() < 1e-5  # the click is back
    assert np.abs(repaired[channel, at] - x[channel, at]).max() > 0.05
    others = np.abs(now - repaired) > 1e-5
    others[channel, at] = False
    assert not others.any()  # the other clicks stay repaired
    assert ed.history.steps[-1].label.endswith(f"put back {first + 1} of {len(report.events)}")
    ed.undo()
    assert torch.equal(ed.doc.read_complex(ed.doc.full_rect()), before)
    for i in order:
        ed.put_back(report, int(i))
    assert np.abs(ed.audio() - x).max() < 1e-5  # every click put back: the input
    with pytest.raises(ParameterError, match=f"events 0-{len(report.events) - 1}"):
        ed.put_back(report, len(report.events))


@pytest.mark.slow
def test_batch_repairs_every_file_before_the_strokes(tmp_path, write_audio, rng):
    clean, x = _clicked_tone(rng)
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("a.wav", "b.wav"):
        write_audio(f"in/{name}", x[None].astype(np.float32), SR, "FLOAT")
    out = tmp_path / "out"
    r = specpaint_here("batch", folder, "-o", out, "--repair", "declick:sensitivity=5",
                       "--repair-after", "dehum", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    report = json.loads((out / "batch-report.json").read_text())
    for entry in report["files"]:
        assert entry["status"] == "done"
        assert entry["notes"] == ["strokes[1]: De-hum: found nothing to repair; nothing changed"]
        y, _ = sf.read(entry["output"], dtype="float64")
        assert si_sdr_db(clean, y) > si_sdr_db(clean, x) + 10
    r = specpaint_here("batch", folder, "-o", tmp_path / "o2", "--repair", "declick:loud")
    assert r.returncode == 2 and "--repair: 'loud' is not K=V" in r.stderr


def test_a_stroke_script_step_repairs_a_region(write_audio, rng):
    clean, x = _clicked_tone(rng)
    ed = Editor.open(write_audio("c.wav", x[None].astype(np.float32), SR, "FLOAT"))
    changed = ed.run_script([{"repair": "declick", "start": 1.0, "end": 2.0},
                             {"repair": "dehum"}])
    assert changed == 1 and ed.warnings == [
        "strokes[1]: De-hum: found nothing to repair; nothing changed"]
    y = ed.audio()[0]
    assert np.array_equal(y[:SR - 2048], ed.doc.audio.samples[0, :SR - 2048]) or \
        np.abs(y[:SR - 2048] - x[:SR - 2048]).max() < 1e-5  # before the region: as it was
    assert si_sdr_db(clean[SR:], y[SR:]) > si_sdr_db(clean[SR:], x[SR:]) + 10


def test_a_repair_writes_the_layer_it_read_whatever_becomes_active_meanwhile():
    """The GUI runs a repair in a worker while the Layers panel can change the active
    layer: the repair reads and writes the layer that was active when it started (it
    read layer 0 and wrote a silent layer chosen meanwhile)."""
    from app.session import layer_ops as ops
    from app.session.repairs import repair
    from engine.model.resynth import Resynthesizer
    from tests.layer_docs import noisy_doc

    doc = noisy_doc()
    mix = Resynthesizer(doc).full().numpy()
    ops.new_layer(doc, name="silent")
    silent = doc.layers.active.id
    ops.activate(doc, 0)

    def meanwhile(fraction, *_):
        if fraction > 0.3:
            ops.activate(doc, silent)
    report = repair(doc, mix, "denoise", progress=meanwhile)
    assert report.step.layer == 0
    assert not doc.read_complex(doc.full_rect(), layer=silent).abs().any()


def test_putting_back_a_click_of_a_layer_that_is_gone_says_so(rng):
    from app.session import layer_ops as ops
    from engine.model.layer_sources import quantized_masks

    x = np.stack([_clicked_tone(rng)[1]]).astype(np.float32)
    ed = Editor(Document(Audio(x, SR), device="cpu"))
    report = ed.repair("declick")
    ops.unmix_into(ed.doc, quantized_masks([torch.full((1, ed.doc.n_frames, ed.doc.n_bins),
                                                       0.5)] * 2),
                   ["a", "b"], label="unmix", layer=0)
    with pytest.raises(ParameterError, match="layer De-click repaired is gone"):
        ed.put_back(report, 0)


def test_declick_of_a_region_reports_only_the_clicks_in_it(write_audio):
    """The 50 ms about a region are context the models learn from: clicks there are
    neither repaired nor reported nor counted (they were reported and counted, and
    putting one back did nothing)."""
    t = np.arange(2 * SR) / SR
    x = 0.3 * np.sin(2 * np.pi * 330 * t) + 0.1 * np.sin(2 * np.pi * 1210 * t + 1)
    inside, outside = (0.8, 1.0, 1.2), (0.48, 1.52)
    for seconds in inside + outside:
        i = round(seconds * SR)
        x[i:i + 3] += np.array([0.5, -0.35, 0.2])
    ed = Editor(Document(Audio(x[None].astype(np.float32), SR), device="cpu"))
    report = ed.repair("declick", start=0.5, end=1.5)
    assert sorted(round(e[0], 2) for e in report.events) == list(inside)
    assert report.summary.startswith(f"{len(inside)} click(s) repaired")
    for seconds in outside:
        i = round(seconds * SR)
        assert np.abs(ed.audio()[0, i - 5:i + 8] - x[i - 5:i + 8]).max() < 1e-5  # left as is


def test_declip_of_a_region_reports_only_the_runs_that_reach_into_it():
    """De-clip finds the clip level in 50 ms of context about a region: runs clipped
    there are neither restored nor reported nor counted (they were reported and
    counted as restored)."""
    t = np.arange(2 * SR) / SR
    x = 0.3 * np.sin(2 * np.pi * 330 * t)
    inside, outside = (0.8, 1.0, 1.2), (0.47, 1.53)
    for seconds in inside + outside:
        x[np.abs(t - seconds) < 0.004] *= 3.0
    x = np.clip(x, -0.5, 0.5)
    ed = Editor(Document(Audio(x[None].astype(np.float32), SR), device="cpu"))
    report = ed.repair("declip", start=0.5, end=1.5)
    starts = [e[0] for e in report.events]
    assert starts and all(0.5 - 0.01 < s < 1.5 for s in starts)
    assert report.summary.startswith(f"{len(starts)} clipped runs")
