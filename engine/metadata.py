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

The chunk goes through libsndfile's own ``SFC_GET/SET_BROADCAST_INFO`` commands
(soundfile exposes ``sf_command``), so it lands where libsndfile writes headers:
after ``fmt``, before ``data``."""

import ctypes
from dataclasses import dataclass, field

import soundfile as sf

TAGS = ("title", "copyright", "software", "artist", "comment", "date", "album", "license",
        "tracknumber", "genre")
_GET_BROADCAST_INFO, _SET_BROADCAST_INFO = 0x10F0, 0x10F1  # sndfile.h
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


@dataclass(frozen=True)
class Metadata:
    """``tags``: {name in TAGS: text}; ``broadcast``: the bext fields by name
    (text as str, ``time_reference`` and ``version`` as int, ``umid`` as hex,
    the loudness fields as int), None when the file has no bext chunk."""

    tags: dict[str, str] = field(default_factory=dict)
    broadcast: dict | None = None

    def to_json(self) -> dict:
        return {"tags": dict(self.tags), "broadcast": self.broadcast}

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
        return cls(dict(tags), broadcast)


def read_metadata(f: sf.SoundFile) -> Metadata:
    """The tags and bext chunk of a file open for reading."""
    info = _BroadcastInfo()
    got = sf._snd.sf_command(f._file, _GET_BROADCAST_INFO, _address(info), ctypes.sizeof(info))
    return Metadata({k: v for k, v in f.copy_metadata().items() if k in TAGS},
                    _fields(info) if got else None)


def write_metadata(f: sf.SoundFile, metadata: Metadata | None) -> list[str]:
    """Give a file just opened for writing (nothing written yet) ``metadata``;
    returns what its format could not keep, in words."""
    if metadata is None:
        return []
    lost = []
    if metadata.broadcast is not None:
        info = _fill(_BroadcastInfo(), metadata.broadcast)
        if info.version >= 2:
            for name in LOUDNESS:
                setattr(info, name, NOT_MEASURED)
        size = _BroadcastInfo.coding_history.offset + info.coding_history_size + 4
        if not sf._snd.sf_command(f._file, _SET_BROADCAST_INFO, _address(info), size):
            lost.append(f"the bext chunk ({f.format} files have no place for it)")
    refused = []
    for name, text in metadata.tags.items():
        try:
            setattr(f, name, text)
        except RuntimeError:  # (sf.LibsndfileError) the format holds no text
            refused.append(name)
    if refused:
        lost.append(f"the tags {', '.join(refused)} ({f.format} files have no place for them)")
    return lost


def _address(info: _BroadcastInfo):
    return sf._ffi.cast("void *", ctypes.addressof(info))


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
