"""What a recording says about itself besides its samples, carried from the file
opened to the files written from it.

- **Tags**: libsndfile's text fields (title, artist, comment, date, ...), kept
  in WAV's LIST/INFO, AIFF's text chunks, FLAC's and Ogg's Vorbis comments.
- **Broadcast WAV's ``bext`` chunk** (EBU Tech 3285): description, originator
  and reference, origination date and time, the time reference (samples since
  midnight: what a conform lines the take up by), UMID and coding history.
  Only WAV and RF64 can hold it. libsndfile adds a coding-history line for the
  file it writes. The loudness fields (version 2) described the audio before it
  was painted, so outputs mark them not measured (0x7FFF, as the EBU specifies
  for unused loudness fields).
- **Markers and loop points**: a WAV's ``cue `` points with their ``labl``
  names, and its ``smpl`` chunk (root key, key and velocity range, loops), as
  samplers and recorders write them. libsndfile keeps these in WAV alone
  (measured: its commands say yes for AIFF, FLAC, CAF, RF64 and W64 and write
  nothing), and writes no marker names, so the names go in a ``LIST/adtl``
  chunk added after libsndfile has closed the file (:func:`add_marker_names`).

The chunk goes through libsndfile's own ``SFC_GET/SET_BROADCAST_INFO`` commands
(soundfile exposes ``sf_command``), so it lands where libsndfile writes headers:
after ``fmt``, before ``data``."""

import ctypes
import struct
from dataclasses import dataclass, field

import soundfile as sf

from engine.io.riff import append_chunk, pack_chunk

TAGS = ("title", "copyright", "software", "artist", "comment", "date", "album", "license",
        "tracknumber", "genre")
_GET_BROADCAST_INFO, _SET_BROADCAST_INFO = 0x10F0, 0x10F1  # sndfile.h
_GET_CUE_COUNT, _GET_CUE, _SET_CUE = 0x10CD, 0x10CE, 0x10CF
_GET_INSTRUMENT, _SET_INSTRUMENT = 0x10D0, 0x10D1
MARKER_FORMATS = ("WAV", "WAVEX")  # where libsndfile keeps cue and smpl chunks
MAX_MARKERS = 1000
HISTORY_BYTES = 16000  # libsndfile keeps up to 16 KiB of coding history
BEXT_TEXT = {"description": 256, "originator": 32, "originator_reference": 32,
             "origination_date": 10, "origination_time": 8}
LOUDNESS = ("loudness_value", "loudness_range", "max_true_peak_level", "max_momentary_loudness",
            "max_shortterm_loudness")
NOT_MEASURED = 0x7FFF


class _BroadcastInfo(ctypes.Structure):
    """libsndfile's ``SF_BROADCAST_INFO_VAR(HISTORY_BYTES)`` (C layout, not the chunk's)."""

    _fields_ = ([(name, ctypes.c_char * size) for name, size in BEXT_TEXT.items()]
                + [("time_reference_low", ctypes.c_uint32),
                   ("time_reference_high", ctypes.c_uint32),
                   ("version", ctypes.c_short), ("umid", ctypes.c_char * 64)]
                + [(name, ctypes.c_int16) for name in LOUDNESS]
                + [("reserved", ctypes.c_char * 180), ("coding_history_size", ctypes.c_uint32),
                   ("coding_history", ctypes.c_char * HISTORY_BYTES)])


class _CuePoint(ctypes.Structure):
    _fields_ = [("indx", ctypes.c_int32), ("position", ctypes.c_uint32),
                ("fcc_chunk", ctypes.c_int32), ("chunk_start", ctypes.c_int32),
                ("block_start", ctypes.c_int32), ("sample_offset", ctypes.c_uint32),
                ("name", ctypes.c_char * 256)]


def _cues(count: int) -> ctypes.Structure:
    """libsndfile's ``SF_CUES_VAR(count)``."""
    class Cues(ctypes.Structure):
        _fields_ = [("cue_count", ctypes.c_uint32), ("cue_points", _CuePoint * count)]
    return Cues()


class _Loop(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int), ("start", ctypes.c_uint32), ("end", ctypes.c_uint32),
                ("count", ctypes.c_uint32)]


class _Instrument(ctypes.Structure):
    """libsndfile's ``SF_INSTRUMENT`` (what it reads from and writes to ``smpl``)."""

    _fields_ = [("gain", ctypes.c_int), ("basenote", ctypes.c_byte), ("detune", ctypes.c_byte),
                ("velocity_lo", ctypes.c_byte), ("velocity_hi", ctypes.c_byte),
                ("key_lo", ctypes.c_byte), ("key_hi", ctypes.c_byte),
                ("loop_count", ctypes.c_int), ("loops", _Loop * 16)]


INSTRUMENT = ("gain", "basenote", "detune", "velocity_lo", "velocity_hi", "key_lo", "key_hi")


@dataclass(frozen=True)
class Metadata:
    """``tags``: {name in TAGS: text}; ``broadcast``: the bext fields by name
    (text as str, ``time_reference`` and ``version`` as int, ``umid`` as hex,
    the loudness fields as int), None when the file has no bext chunk;
    ``markers``: [[id, frame, name], ...]; ``instrument``: the smpl fields of
    INSTRUMENT as int and ``loops``: [[mode, start, end, count], ...] (mode as
    libsndfile numbers it: 800 none, 801 forward, 802 backward, 803 alternating),
    None when the file has none."""

    tags: dict[str, str] = field(default_factory=dict)
    broadcast: dict | None = None
    markers: list = field(default_factory=list)
    instrument: dict | None = None

    def to_json(self) -> dict:
        return {"tags": dict(self.tags), "broadcast": self.broadcast,
                "markers": [list(m) for m in self.markers], "instrument": self.instrument}

    @classmethod
    def from_json(cls, data) -> "Metadata":
        """Checked, as a project file may have been edited by hand: ValueError
        naming what is wrong."""
        if not isinstance(data, dict):
            raise ValueError("metadata is not an object")
        tags, broadcast = data.get("tags", {}), data.get("broadcast")
        if not (isinstance(tags, dict) and all(k in TAGS and isinstance(v, str)
                                               for k, v in tags.items())):
            raise ValueError(f"metadata tags must be text under the names {', '.join(TAGS)}")
        if broadcast is not None:
            _fill(_BroadcastInfo(), broadcast)  # raises on a wrong field
        markers, instrument = data.get("markers", []), data.get("instrument")
        if not (isinstance(markers, list) and len(markers) <= MAX_MARKERS and all(
                isinstance(m, list) and len(m) == 3 and type(m[0]) is int
                and type(m[1]) is int and 0 <= m[1] < 2**32 and isinstance(m[2], str)
                for m in markers)):
            raise ValueError("markers must be a list of [id, frame, name]")
        if instrument is not None:
            _fill_instrument(instrument)
        return cls(dict(tags), broadcast, markers, instrument)


def read_metadata(f: sf.SoundFile) -> Metadata:
    """The tags, bext chunk, markers and smpl chunk of a file open for reading."""
    info = _BroadcastInfo()
    got = sf._snd.sf_command(f._file, _GET_BROADCAST_INFO, _address(info), ctypes.sizeof(info))
    count = ctypes.c_uint32(0)
    sf._snd.sf_command(f._file, _GET_CUE_COUNT, _address(count), ctypes.sizeof(count))
    markers = []
    if count.value:  # room for the points the file has, not for MAX_MARKERS each time
        cues = _cues(min(count.value, MAX_MARKERS))
        if sf._snd.sf_command(f._file, _GET_CUE, _address(cues), ctypes.sizeof(cues)):
            markers = [[p.indx, p.position, p.name.decode("latin-1")]
                       for p in cues.cue_points[:min(cues.cue_count, len(cues.cue_points))]]
    inst = _Instrument()
    has_inst = sf._snd.sf_command(f._file, _GET_INSTRUMENT, _address(inst), ctypes.sizeof(inst))
    return Metadata({k: v for k, v in f.copy_metadata().items() if k in TAGS},
                    _fields(info) if got else None, markers,
                    _instrument_fields(inst) if has_inst else None)


def write_metadata(f: sf.SoundFile, metadata: Metadata | None) -> list[str]:
    """Give a file just opened for writing (nothing written yet) ``metadata``;
    returns what its format could not keep, in words."""
    if metadata is None:
        return []
    lost = _write_broadcast(f, metadata) + _write_tags(f, metadata)
    if f.format in MARKER_FORMATS:
        _write_markers(f, metadata)
        return lost
    if metadata.markers:
        lost.append(f"{len(metadata.markers)} markers ({f.format} files keep none here)")
    if metadata.instrument is not None:
        lost.append(f"the loop points and root key ({f.format} files keep none here)")
    return lost


def _write_broadcast(f: sf.SoundFile, metadata: Metadata) -> list[str]:
    lost = []
    if metadata.broadcast is not None:
        info = _fill(_BroadcastInfo(), metadata.broadcast)
        if info.version >= 2:
            for name in LOUDNESS:
                setattr(info, name, NOT_MEASURED)
        size = _BroadcastInfo.coding_history.offset + info.coding_history_size + 4
        if not sf._snd.sf_command(f._file, _SET_BROADCAST_INFO, _address(info), size):
            lost.append(f"the bext chunk ({f.format} files have no place for it)")
    return lost


def _write_tags(f: sf.SoundFile, metadata: Metadata) -> list[str]:
    refused = []
    for name, text in metadata.tags.items():
        try:
            setattr(f, name, text)
        except RuntimeError:  # (sf.LibsndfileError) the format holds no text
            refused.append(name)
    if not refused:
        return []
    return [f"the tags {', '.join(refused)} ({f.format} files have no place for them)"]


def _write_markers(f: sf.SoundFile, metadata: Metadata) -> None:
    """The cue points (their names come after: :func:`add_marker_names`) and smpl."""
    if metadata.markers:
        cues = _cues(len(metadata.markers))
        cues.cue_count = len(metadata.markers)
        for point, (index, frame, _) in zip(cues.cue_points, metadata.markers, strict=True):
            point.indx, point.position, point.sample_offset = index, frame, frame
            point.fcc_chunk = int.from_bytes(b"data", "little")
        sf._snd.sf_command(f._file, _SET_CUE, _address(cues), ctypes.sizeof(cues))
    if metadata.instrument is not None:
        inst = _fill_instrument(metadata.instrument)
        sf._snd.sf_command(f._file, _SET_INSTRUMENT, _address(inst), ctypes.sizeof(inst))


def add_marker_names(path, format: str, metadata: Metadata | None) -> None:
    """Append the markers' names to a WAV file libsndfile has written and closed
    (a ``LIST/adtl`` chunk of ``labl`` chunks, each naming a cue point by its id),
    and count it in the RIFF size."""
    named = [(index, name) for index, _, name in (metadata.markers if metadata else [])
             if name]
    if not named or format not in MARKER_FORMATS:
        return
    append_chunk(path, b"LIST", b"adtl" + b"".join(
        pack_chunk(b"labl", struct.pack("<I", index & 0xFFFFFFFF)
                   + name.encode("latin-1", "replace") + b"\0") for index, name in named))


def _instrument_fields(inst: _Instrument) -> dict:
    return {**{name: getattr(inst, name) for name in INSTRUMENT},
            "loops": [[lp.mode, lp.start, lp.end, lp.count]
                      for lp in inst.loops[:min(inst.loop_count, 16)]]}


def _fill_instrument(fields) -> _Instrument:
    """ValueError naming what does not fit."""
    inst = _Instrument()
    try:
        for name in INSTRUMENT:
            value = fields[name]
            if type(value) is not int:
                raise TypeError(f"{name} = {value!r} is not a whole number")
            setattr(inst, name, value)
        loops = fields["loops"][:16]
        for loop, (mode, start, end, count) in zip(inst.loops, loops, strict=False):
            loop.mode, loop.start, loop.end, loop.count = mode, start, end, count
        inst.loop_count = len(loops)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"the smpl fields are not valid ({type(e).__name__}: {e})") from e
    return inst


def _address(struct_: ctypes.Structure | ctypes.c_uint32):
    return sf._ffi.cast("void *", ctypes.addressof(struct_))


def _fields(info: _BroadcastInfo) -> dict:
    size = min(info.coding_history_size, HISTORY_BYTES)
    return {**{name: getattr(info, name).decode("latin-1") for name in BEXT_TEXT},
            "time_reference": info.time_reference_low | info.time_reference_high << 32,
            "version": info.version,
            "umid": ctypes.string_at(ctypes.addressof(info) + _BroadcastInfo.umid.offset,
                                     64).hex(),
            **{name: getattr(info, name) for name in LOUDNESS},
            "coding_history": info.coding_history[:size].decode("latin-1")}


def _fill(info: _BroadcastInfo, fields: dict) -> _BroadcastInfo:
    """``info`` holding ``fields`` (as :func:`_fields` gives them); ValueError
    naming a field that is missing or does not fit."""
    try:
        for name, size in BEXT_TEXT.items():
            setattr(info, name, _text(fields[name], size))
        reference = int(fields["time_reference"])
        info.time_reference_low, info.time_reference_high = reference & 0xFFFFFFFF, reference >> 32
        info.version = int(fields["version"])
        umid = bytes.fromhex(fields["umid"])[:64]  # binary: zero bytes inside it too
        ctypes.memmove(ctypes.addressof(info) + _BroadcastInfo.umid.offset, umid, len(umid))
        for name in LOUDNESS:
            setattr(info, name, int(fields[name]))
        history = _text(fields["coding_history"], HISTORY_BYTES - 4)
        info.coding_history, info.coding_history_size = history, len(history)
    except (KeyError, TypeError, ValueError, OverflowError) as e:
        raise ValueError(f"the bext fields are not valid ({type(e).__name__}: {e})") from e
    return info


def _text(value, size: int) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not text")
    return value.encode("latin-1", "replace")[:size]
