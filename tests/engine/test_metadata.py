"""A recording's tags, broadcast-WAV bext chunk, markers and loop points travel
to what is written from it: by ``specpaint apply``, by a batch, and from the GUI
through a project. The source files are packed here byte by byte from the
published layouts (EBU Tech 3285 for bext; RIFF cue, LIST/adtl and smpl), and the
outputs' chunks are unpacked the same way, so libsndfile's reading and writing
are both checked against the specifications, not against themselves."""

import json
import re
import struct
import zipfile

import numpy as np
import pytest
import soundfile as sf

from app.project.write import ProjectError, open_project, save_project, snapshot
from engine.io.audio import load
from engine.io.export import export
from engine.io.metadata import Metadata
from tests.cli_run import specpaint_here
from tests.projects import Tracker

RATE = 48000
BEXT = {"description": "Take 12, scene 4: the door slam", "originator": "FieldRec 8",
        "originator_reference": "USFRC123456789012345678901234",
        "origination_date": "2026-11-20", "origination_time": "14:03:22",
        "time_reference": 5 * 2**32 + 1234567,  # above 2^32: both 32-bit halves must travel
        "version": 2, "umid": bytes(range(0, 128, 2)),  # zero bytes inside it too
        "loudness": (-2300, 500, -100, -1500, -1800),
        "coding_history": "A=PCM,F=48000,W=24,M=mono,T=FieldRec 8\r\n"}
TAGS = {"INAM": "Door slam", "IART": "Ana Sound", "ICMT": "raw take, before repair"}
MARKERS = [(1, 12000, "door"), (7, 60000, ""), (9, 70001, "cough, odd length")]
ROOT_KEY, LOOP = 57, (0, 24000, 80000)  # smpl: forward loop (type 0) from 24000 to 80000
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


def marker_chunks(markers=MARKERS) -> bytes:
    """cue points, their names in LIST/adtl, and a smpl chunk with one loop."""
    cue = struct.pack("<I", len(markers)) + b"".join(
        struct.pack("<II4sIII", index, frame, b"data", 0, 0, frame) for index, frame, _ in markers)
    labels = b"adtl" + b"".join(chunk(b"labl", struct.pack("<I", index) + name.encode() + b"\0")
                                for index, _, name in markers if name)
    smpl = struct.pack("<9I", 0, 0, 10**9 // RATE, ROOT_KEY, 0, 0, 0, 1, 0) + struct.pack(
        "<6I", 0, LOOP[0], LOOP[1], LOOP[2], 0, 0)
    return chunk(b"cue ", cue) + chunk(b"LIST", labels) + chunk(b"smpl", smpl)


def broadcast_wave(path, samples: np.ndarray, fields=BEXT, tags=TAGS, markers=True):
    """A mono 16-bit broadcast WAV: RIFF, bext, fmt, data, LIST/INFO, cue, LIST/adtl,
    smpl, as recorders and sample editors lay it out."""
    pcm = np.round(samples * 32767).astype("<i2").tobytes()
    info = b"INFO" + b"".join(chunk(k.encode(), v.encode() + b"\0") for k, v in tags.items())
    body = (b"WAVE" + (chunk(b"bext", bext_body(fields)) if fields else b"")
            + chunk(b"fmt ", struct.pack("<HHIIHH", 1, 1, RATE, RATE * 2, 2, 16))
            + chunk(b"data", pcm) + (chunk(b"LIST", info) if tags else b"")
            + (marker_chunks() if markers else b""))
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    return path


def chunks(path) -> list[tuple[bytes, bytes]]:
    """(id, body) of each chunk, LIST chunks as (b"LIST" + their type, body)."""
    data = path.read_bytes()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    assert struct.unpack("<I", data[4:8])[0] == len(data) - 8  # the RIFF size counts all
    found, at = [], 12
    while at + 8 <= len(data):
        cid, size = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        body = data[at + 8:at + 8 + size]
        found.append((cid + body[:4], body[4:]) if cid == b"LIST" else (cid, body))
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
    check_markers(found)


def check_markers(found: dict):
    """The cue points at their frames, named as in the source, and the smpl loop."""
    count = struct.unpack("<I", found[b"cue "][:4])[0]
    points = [struct.unpack("<II4sIII", found[b"cue "][4 + 24 * i:28 + 24 * i])
              for i in range(count)]
    assert [(p[0], p[1], p[2], p[5]) for p in points] == \
        [(index, frame, b"data", frame) for index, frame, _ in MARKERS]
    labels, body = {}, found[b"LISTadtl"]
    while body:
        cid, size = body[:4], struct.unpack("<I", body[4:8])[0]
        assert cid == b"labl"
        labels[struct.unpack("<I", body[8:12])[0]] = body[12:8 + size].split(b"\0")[0].decode()
        body = body[8 + size + (size & 1):]
    assert labels == {index: name for index, _, name in MARKERS if name}
    smpl = found[b"smpl"]
    assert struct.unpack("<I", smpl[12:16])[0] == ROOT_KEY
    assert struct.unpack("<I", smpl[28:32])[0] == 1  # one loop
    assert struct.unpack("<3I", smpl[40:52]) == LOOP


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
    assert meta.markers == [list(m) for m in MARKERS]
    assert meta.instrument["basenote"] == ROOT_KEY
    # 801: forward; smpl's end is the loop's last frame, libsndfile's the one after it
    assert meta.instrument["loops"] == [[801, LOOP[1], LOOP[2] + 1, 0]]


@pytest.mark.slow
def test_info_shows_them(take):
    r = specpaint_here("info", take)
    assert r.returncode == 0, r.stderr
    seconds = BEXT["time_reference"] / RATE  # 447418.147 s: 124 h 16 min 58.147 s
    assert f"starts at:   124:16:{seconds % 60:06.3f} after midnight" in r.stdout
    for line in ("title:       Door slam", "artist:      Ana Sound", "marker 1:    0.250 s 'door'",
                 "marker 7:    1.250 s\n", "sampler:     root key 57, loops 0.500-1.667 s",
                 "bext:        'Take 12, scene 4: the door slam' from FieldRec 8, "
                 "2026-11-20 14:03:22"):
        assert line in r.stdout, r.stdout


@pytest.mark.slow
def test_apply_keeps_the_bext_chunk_and_the_tags(take, tmp_path):
    out = tmp_path / "clean.wav"
    r = specpaint_here("apply", take, "-o", out, "--preset", "hard-eraser", "--line",
                       "0.5:1000,1.5:1000")
    assert r.returncode == 0, r.stderr
    check_carried(out)
    assert "not kept" not in r.stdout
    painted, source = sf.read(out)[0], sf.read(take)[0]
    assert np.abs(painted - source).max() > 0.1  # it was painted, not copied


def test_a_file_without_them_gets_none(tmp_path, rng):
    bare = broadcast_wave(tmp_path / "bare.wav", 0.1 * rng.standard_normal(RATE),
                          fields=None, tags={}, markers=False)
    audio = load(bare)
    assert audio.metadata == Metadata()
    export(audio.samples, RATE, tmp_path / "out.wav", metadata=audio.metadata)
    assert [cid for cid, _ in chunks(tmp_path / "out.wav")] == [b"fmt ", b"fact", b"PEAK",
                                                                b"data"]


@pytest.mark.slow
def test_a_batch_keeps_them_and_says_what_flac_cannot(take, tmp_path):
    out = tmp_path / "out"
    r = specpaint_here("batch", take, "-o", out, "--preset", "hard-eraser", "--line",
                       "0.5:1000,1.5:1000", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    check_carried(out / "take.wav")
    flac = tmp_path / "flac"
    r = specpaint_here("batch", take, "-o", flac, "--format", "flac", "--preset", "hard-eraser",
                       "--line", "0.5:1000,1.5:1000", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    with sf.SoundFile(flac / "take.flac") as f:
        assert f.copy_metadata() == {"title": TAGS["INAM"], "artist": TAGS["IART"],
                                     "comment": TAGS["ICMT"]}
    report = json.loads((flac / "batch-report.json").read_text())
    assert report["files"][0]["notes"] == [
        "not kept: the bext chunk (FLAC files have no place for it)",
        "not kept: 3 markers (FLAC files keep none here)",
        "not kept: the loop points and root key (FLAC files keep none here)"]


def test_the_gui_exports_them_from_a_reopened_project(qtbot, window, take, tmp_path):
    from tests.gui_input import answer_file_dialog

    window.open_path(take)
    qtbot.waitUntil(lambda: window.opened.audio_path == take and window.jobs.idle(),
                    timeout=20000)
    project = tmp_path / "take.spp"
    window.files.save_project(path=project)
    qtbot.waitUntil(lambda: project.exists() and window.jobs.idle(), timeout=20000)
    window.open_path(project)
    qtbot.waitUntil(lambda: window.opened.project_path == project and
                    window.jobs.idle(), timeout=20000)
    window.files.export_dialog()
    out = tmp_path / "from-project.wav"
    answer_file_dialog(qtbot, window, out)
    qtbot.waitUntil(lambda: out.exists() and window.jobs.idle(), timeout=20000)
    check_carried(out)


@pytest.mark.parametrize("damage", [("broadcast", "time_reference", "noon"),
                                    ("markers", 1, [7, -5, ""]),
                                    ("instrument", "loops", [[801, 1, 2]])])
def test_a_project_with_damaged_metadata_is_refused(take, tmp_path, damage):
    from engine.model.document import Document

    doc = Document(load(take), device="cpu", n_fft=256)
    path = save_project(tmp_path / "ok.spp", snapshot(doc, Tracker(doc)), {}).path
    assert open_project(path, device="cpu")[0].audio.metadata == doc.audio.metadata
    with zipfile.ZipFile(path) as z:
        manifest, arrays = json.loads(z.read("manifest.json")), z.read("arrays.npz")
    part, key, value = damage
    manifest["source_metadata"][part][key] = value
    bad = tmp_path / "bad.spp"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("manifest.json", json.dumps(manifest))
        z.writestr("arrays.npz", arrays)
    with pytest.raises(ProjectError, match="the project is damaged: source metadata"):
        open_project(bad, device="cpu")
