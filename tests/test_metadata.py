"""A recording's tags and broadcast-WAV bext chunk travel to what is written from
it: by ``specpaint apply``, by a batch, and from the GUI through a project. The
source files are packed here byte by byte from the EBU layout (Tech 3285), and the
outputs' chunks are unpacked the same way, so libsndfile's reading and writing
are both checked against the specification, not against themselves."""

import json
import re
import struct
import zipfile

import numpy as np
import pytest
import soundfile as sf

from app.project import ProjectError, open_project, save_project, snapshot
from engine.audio import load
from engine.export import export
from tests.test_cli import specpaint
from tests.test_project_hostile import Tracker

RATE = 48000
BEXT = {"description": "Take 12, scene 4: the door slam", "originator": "FieldRec 8",
        "originator_reference": "USFRC123456789012345678901234",
        "origination_date": "2026-11-20", "origination_time": "14:03:22",
        "time_reference": 5 * 2**32 + 1234567,  # above 2^32: both 32-bit halves must travel
        "version": 2, "umid": bytes(range(0, 128, 2)),  # zero bytes inside it too
        "loudness": (-2300, 500, -100, -1500, -1800),
        "coding_history": "A=PCM,F=48000,W=24,M=mono,T=FieldRec 8\r\n"}
TAGS = {"INAM": "Door slam", "IART": "Ana Sound", "ICMT": "raw take, before repair"}
NOT_MEASURED = 0x7FFF


def chunk(cid: bytes, body: bytes) -> bytes:
    return cid + struct.pack("<I", len(body)) + body + b"\0" * (len(body) & 1)


def bext_body(fields=BEXT) -> bytes:
    def text(name, size):
        return fields[name].encode("ascii").ljust(size, b"\0")

    return (text("description", 256) + text("originator", 32)
            + text("originator_reference", 32) + text("origination_date", 10)
            + text("origination_time", 8)
            + struct.pack("<QH", fields["time_reference"], fields["version"]) + fields["umid"]
            + struct.pack("<5h", *fields["loudness"]) + bytes(180)
            + fields["coding_history"].encode("ascii"))


def broadcast_wave(path, samples: np.ndarray, fields=BEXT, tags=TAGS):
    """A mono 16-bit broadcast WAV: RIFF, bext, fmt, data, LIST/INFO, as recorders
    lay it out."""
    pcm = np.round(samples * 32767).astype("<i2").tobytes()
    info = b"INFO" + b"".join(chunk(k.encode(), v.encode() + b"\0") for k, v in tags.items())
    body = (b"WAVE" + (chunk(b"bext", bext_body(fields)) if fields else b"")
            + chunk(b"fmt ", struct.pack("<HHIIHH", 1, 1, RATE, RATE * 2, 2, 16))
            + chunk(b"data", pcm) + (chunk(b"LIST", info) if tags else b""))
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    return path


def chunks(path) -> list[tuple[bytes, bytes]]:
    data = path.read_bytes()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    found, at = [], 12
    while at + 8 <= len(data):
        cid, size = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        found.append((cid, data[at + 8:at + 8 + size]))
        at += 8 + size + (size & 1)
    return found


def unpack_bext(body: bytes) -> dict:
    def text(start, size):
        return body[start:start + size].split(b"\0")[0].decode("ascii")

    reference, version = struct.unpack("<QH", body[338:348])
    return {"description": text(0, 256), "originator": text(256, 32),
            "originator_reference": text(288, 32), "origination_date": text(320, 10),
            "origination_time": text(330, 8), "time_reference": reference, "version": version,
            "umid": body[348:412], "loudness": struct.unpack("<5h", body[412:422]),
            "coding_history": body[602:].split(b"\0")[0].decode("ascii")}


def check_carried(path, source_history=BEXT["coding_history"]):
    """``path`` holds the source's bext before its audio (loudness marked not
    measured, one coding-history line added for the file written) and its tags."""
    found = dict(chunks(path))
    order = [cid for cid, _ in chunks(path)]
    assert order.index(b"bext") < order.index(b"data")
    bext = unpack_bext(found[b"bext"])
    for name in ("description", "originator", "originator_reference", "origination_date",
                 "origination_time", "time_reference", "version", "umid"):
        assert bext[name] == BEXT[name], name
    assert bext["loudness"] == (NOT_MEASURED,) * 5  # measured on the take before painting
    assert bext["coding_history"].startswith(source_history)
    added = bext["coding_history"][len(source_history):]
    assert re.fullmatch(r"A=PCM,F=48000,W=(16|24|32),M=mono,T=[^\r\n]+\r\n", added), added
    with sf.SoundFile(path) as f:
        assert f.copy_metadata() == {"title": TAGS["INAM"], "artist": TAGS["IART"],
                                     "comment": TAGS["ICMT"]}


@pytest.fixture
def take(tmp_path, rng):
    t = np.arange(RATE * 2) / RATE
    x = 0.3 * np.sin(2 * np.pi * 1000 * t) + 0.01 * rng.standard_normal(t.size)
    return broadcast_wave(tmp_path / "take.wav", x)


def test_the_source_is_read_as_packed(take):
    meta = load(take).metadata
    assert meta.tags == {"title": TAGS["INAM"], "artist": TAGS["IART"], "comment": TAGS["ICMT"]}
    b = meta.broadcast
    assert (b["description"], b["time_reference"], b["umid"], b["coding_history"]) == \
        (BEXT["description"], BEXT["time_reference"], BEXT["umid"].hex(), BEXT["coding_history"])
    assert [b[k] for k in ("loudness_value", "loudness_range", "max_true_peak_level",
                           "max_momentary_loudness", "max_shortterm_loudness")] == \
        list(BEXT["loudness"])


def test_info_shows_them(take):
    r = specpaint("info", take)
    assert r.returncode == 0, r.stderr
    seconds = BEXT["time_reference"] / RATE  # 447418.147 s: 124 h 16 min 58.147 s
    assert f"starts at:   124:16:{seconds % 60:06.3f} after midnight" in r.stdout
    for line in ("title:       Door slam", "artist:      Ana Sound",
                 "bext:        'Take 12, scene 4: the door slam' from FieldRec 8, "
                 "2026-11-20 14:03:22"):
        assert line in r.stdout, r.stdout


def test_apply_keeps_the_bext_chunk_and_the_tags(take, tmp_path):
    out = tmp_path / "clean.wav"
    r = specpaint("apply", take, "-o", out, "--preset", "hard-eraser", "--line",
                  "0.5:1000,1.5:1000")
    assert r.returncode == 0, r.stderr
    check_carried(out)
    assert "not kept" not in r.stdout
    painted, source = sf.read(out)[0], sf.read(take)[0]
    assert np.abs(painted - source).max() > 0.1  # it was painted, not copied


def test_a_file_without_them_gets_none(tmp_path, rng):
    bare = broadcast_wave(tmp_path / "bare.wav", 0.1 * rng.standard_normal(RATE),
                          fields=None, tags={})
    audio = load(bare)
    assert audio.metadata.broadcast is None and audio.metadata.tags == {}
    export(audio.samples, RATE, tmp_path / "out.wav", metadata=audio.metadata)
    assert [cid for cid, _ in chunks(tmp_path / "out.wav")] == [b"fmt ", b"fact", b"PEAK",
                                                                b"data"]


def test_a_batch_keeps_them_and_says_what_flac_cannot(take, tmp_path):
    out = tmp_path / "out"
    r = specpaint("batch", take, "-o", out, "--preset", "hard-eraser", "--line",
                  "0.5:1000,1.5:1000", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    check_carried(out / "take.wav")
    flac = tmp_path / "flac"
    r = specpaint("batch", take, "-o", flac, "--format", "flac", "--preset", "hard-eraser",
                  "--line", "0.5:1000,1.5:1000", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    with sf.SoundFile(flac / "take.flac") as f:
        assert f.copy_metadata() == {"title": TAGS["INAM"], "artist": TAGS["IART"],
                                     "comment": TAGS["ICMT"]}
    report = json.loads((flac / "batch-report.json").read_text())
    assert report["files"][0]["notes"] == [
        "not kept: the bext chunk (FLAC files have no place for it)"]


def test_the_gui_exports_them_from_a_reopened_project(qtbot, window, take, tmp_path):
    from tests.test_gui import answer_file_dialog

    window.open_path(take)
    qtbot.waitUntil(lambda: window.audio_path == take and not window.worker.isRunning(),
                    timeout=20000)
    project = tmp_path / "take.spp"
    window.save_project(path=project)
    qtbot.waitUntil(lambda: project.exists() and not window.worker.isRunning(), timeout=20000)
    window.open_path(project)
    qtbot.waitUntil(lambda: window.project_path == project and not window.worker.isRunning(),
                    timeout=20000)
    window.export_dialog()
    out = tmp_path / "from-project.wav"
    answer_file_dialog(qtbot, window, out)
    qtbot.waitUntil(lambda: out.exists() and not window.worker.isRunning(), timeout=20000)
    check_carried(out)


def test_a_project_with_damaged_metadata_is_refused(take, tmp_path):
    from engine.document import Document

    doc = Document(load(take), device="cpu", n_fft=256)
    path = save_project(tmp_path / "ok.spp", snapshot(doc, Tracker(doc)), {})
    assert open_project(path, device="cpu")[0].audio.metadata == doc.audio.metadata
    with zipfile.ZipFile(path) as z:
        manifest, arrays = json.loads(z.read("manifest.json")), z.read("arrays.npz")
    manifest["source_metadata"]["broadcast"]["time_reference"] = "noon"
    bad = tmp_path / "bad.spp"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("manifest.json", json.dumps(manifest))
        z.writestr("arrays.npz", arrays)
    with pytest.raises(ProjectError, match="source metadata .*bext fields are not valid"):
        open_project(bad, device="cpu")
