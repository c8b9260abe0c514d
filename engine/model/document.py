"""A document: audio, its transform, and the editable magnitude and phase.

The coefficients are one complex64 tensor on the engine device, stored
frames-major (``[ch, frames, bins]`` in memory, so analysis writes and
resynthesis reads whole frames contiguously): analysis stores them as they come
and resynthesis reads them as they are, and only what a brush or the view reads
is turned into magnitude and phase (a dab's rect, a tile). Brushes see
magnitude and phase, ``[ch, bins, frames]`` as the transform's axes are.

The untouched original is the decoded audio: the original coefficients of any
rect are recomputed from it on demand (:meth:`Document.original`), which is
exact and costs a small fraction of the memory of a second spectrogram.

Brushes edit through the region API: :meth:`read` a rect, :meth:`write` it
back; every write is reported to listeners (resynthesis, the view) and
accumulated in a dirty rect (:meth:`take_dirty`).

A document is a stack of layers (:attr:`layers`, engine.model.layer_stack) whose mix is the
coefficients above: the region API reads and writes the active layer (or the one
named), and rendering and resynthesis read the mix. A document with one layer
holds and does exactly what it did before layers.
"""

import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator

import numpy as np
import torch

from engine.coeffs import magnitude, polar_parts
from engine.errors import ParameterError
from engine.io.audio import Audio, load
from engine.model.frame_store import FrameStore, Shared
from engine.model.layer_sources import Computed
from engine.model.layer_stack import LayerStack, StackState
from engine.progress import CancelFlag, ProgressFn, drain, scaled, step
from engine.region import Rect, merged_spans
from engine.runtime.cost import confirm_cost
from engine.runtime.device import pick_device, with_cpu_fallback
from engine.runtime.memory import available_memory
from engine.runtime.stats import timed
from engine.transforms import make as make_transform
from engine.transforms.transform import Transform
from engine.view import render
from engine.view.overview import BlockMaxima

ORIGINAL_CHUNKS_KEPT = 4  # chunks of the recording's analysis kept for restore
HELD_ABOVE = 1 << 30  # a document whose coefficients take more holds only HELD_BYTES of them,
HELD_BYTES = 1 << 29  # the most recently used (engine.model.frame_store: the rest analysed again)
BUILT_AT_ONCE = 1024  # frames analysed a step when a document is too large to hold whole
BEHIND_TURN_S = 0.05  # analyse_behind's steps: the document is let go between them

Listener = Callable[[Rect, tuple[int, ...]], None]
MEMORY_SHARE = 0.8  # of the memory available, what one document may take


def document_bytes(channels: int, length: int, transform, *, content: bool = False) -> int:
    """What a document of ``length`` samples may hold: its coefficients (complex64; all
    of them, though past HELD_ABOVE it holds HELD_BYTES unless read), the recording, its
    resynthesized waveform, and ``content`` (a re-analysis's audio)."""
    cells = channels * transform.n_frames(length) * transform.n_bins
    return 8 * cells + 4 * channels * length * (3 if content else 2)


def check_fits(audio: Audio, transform, *, content: bool = False, streamed: bool = False) -> int:
    """Refuse, before allocating anything, an analysis that memory cannot hold
    (``streamed``: one chunk of it at a time, engine.io.stream); the bytes it holds."""
    need = document_bytes(audio.channels, audio.frames if not streamed else min(
        audio.frames, 4 * transform.hop * 1024), transform, content=content) + \
        (8 * audio.channels * audio.frames if streamed else 0)
    have = available_memory()
    if need > MEMORY_SHARE * have:
        raise ParameterError(
            f"this analysis ({transform!r}) of {audio.duration:.1f} s of {audio.channels}-channel "
            f"audio needs {need / 2**30:.1f} GiB ({transform.n_bins} bins x "
            f"{transform.n_frames(audio.frames)} frames per channel), more than the "
            f"{MEMORY_SHARE:.0%} of the {have / 2**30:.1f} GiB available that one document may "
            "take: use a larger hop, fewer bins or a shorter file")
    return need


class Document:
    def __init__(self, audio: Audio, *, transform: "str | Transform" = "stft",
                 device: torch.device | str | None = None, progress: ProgressFn | None = None,
                 cancel: CancelFlag | None = None, content: np.ndarray | None = None,
                 confirm: Callable[[str], bool] | None = None,
                 reuse: "tuple[Document, int] | None" = None, **settings):
        """``transform``: "stft" (settings n_fft, hop, window) or "cq" (bins_per_octave,
        fmin), see :func:`engine.transforms.make`; or a transform itself. ``content``:
        what to analyze when it is not the recording itself (an edited version of it,
        float32 ``[ch, n]``); the recording stays the original that restore and heal go
        back to. ``confirm(text) -> bool``: asked whether to go on when the settings
        would cost much (engine.runtime.cost), before anything is allocated.
        ``reuse``: (an older document of this analysis, where the new content is its
        own samples moved: ``(lo, hi, shift)`` each, see :meth:`_shared`): a time edit
        (engine.model.splice). The older document's cells there are shared, not
        computed, and the rest is analysed when first read (engine.model.frame_store)."""
        self._setup(audio, transform, device, content, settings, confirm)

        def analyze(dev: torch.device) -> None:
            self._analyze(dev, progress, cancel, reuse)

        _, self.device = with_cpu_fallback(analyze, self.device)

    def _setup(self, audio: Audio, transform, device, content, settings: dict,
               confirm: Callable[[str], bool] | None) -> None:
        self.audio = audio
        self._content = content
        self.sample_rate = audio.sample_rate
        self.length = audio.frames
        self.device = pick_device(device)
        self.transform = transform if isinstance(transform, Transform) else \
            make_transform(audio.sample_rate, transform, self.device, **settings)
        resident = check_fits(audio, self.transform, content=content is not None)
        confirm_cost(audio, self.transform, resident=resident, confirm=confirm)
        self._listeners: list[Listener] = []
        self._dirty: Rect | None = None
        self._held: list | None = None  # marks kept while a worker writes (hold_marks)
        self._written: list[list[tuple[int, int]]] = [[] for _ in range(audio.channels)]
        self._overview = BlockMaxima()

    @classmethod
    def open(cls, path: str | os.PathLike, *, allow_truncated: bool = False,
             progress: ProgressFn | None = None, cancel: CancelFlag | None = None,
             **analysis) -> "Document":
        """Load ``path`` and analyze it; ``analysis``: transform and its settings, device."""
        audio = load(path, allow_truncated=allow_truncated, progress=scaled(progress, 0, 0.3),
                     cancel=cancel)
        return cls(audio, progress=scaled(progress, 0.3, 1.0), cancel=cancel, **analysis)

    @timed("analysis")
    def _analyze(self, device: torch.device, progress, cancel, reuse=None) -> None:
        drain(self._analysis(device, progress, cancel, reuse))

    def _analysis(self, device: torch.device, progress, cancel, reuse=None) -> Iterator[None]:
        """Analyse the content a chunk of frames a step (or, with ``reuse``, share what
        the older document holds and leave the rest until it is read)."""
        self.transform = self.transform.to(device)
        self.source = torch.from_numpy(self.audio.samples).to(device)
        self._original_chunks: OrderedDict = OrderedDict()  # see _original_chunk
        self._content_cells = self.source if self._content is None else \
            torch.from_numpy(self._content).to(device)
        channels, frames = self.audio.channels, self.transform.n_frames(self.length)
        shape = (channels, frames, self.transform.n_bins)
        chunk = self.transform.analysis_chunk(channels)
        analyse = _weak(self._analyse_frames)
        self._edited = reuse is not None
        budget = HELD_BYTES if 8 * shape[0] * shape[1] * shape[2] > HELD_ABOVE else None
        if reuse is not None or budget is not None:
            shared = () if reuse is None else self._shared(reuse, frames)
            store = FrameStore(shape, device, analyse=analyse, grain=chunk, shared=shared,
                               budget=budget)
            self.layers = LayerStack(store, Computed(self._recording_frames))
            if reuse is not None:
                self._overview.adopt(reuse[0]._overview, shared, store)
            else:  # too large to hold whole: its overview, the frames held as they fit
                piece = chunk * max(1, BUILT_AT_ONCE // chunk)
                for f0 in range(0, frames, piece):
                    step(f0 / frames, progress, cancel)
                    self._overview.get(store, (f0, min(frames, f0 + piece)))
                    yield
            step(1.0, progress, None)
            return
        coef = torch.empty(shape, dtype=torch.complex64, device=device)
        self.layers = LayerStack(FrameStore.whole(coef, analyse=analyse, grain=chunk),
                                 Computed(self._recording_frames))
        for f0 in range(0, frames, chunk):
            step(f0 / frames, progress, cancel)
            f1 = min(frames, f0 + chunk)
            coef[:, f0:f1] = self._frames(f0, f1)
            yield
        step(1.0, progress, None)

    def _analyse_frames(self, frame0: int, frame1: int) -> torch.Tensor:
        """The content's analysis over frames ``[frame0, frame1)``, ``[ch, frames, bins]``
        (each frame's bits whatever the frames asked with it: tests/engine/test_stft.py,
        the constant-Q's whole blocks)."""
        t = self.transform
        chunk = t.analysis_chunk(self.audio.channels)  # a chunk at a time: cache-sized
        out = torch.empty((self.audio.channels, frame1 - frame0, t.n_bins),
                          dtype=torch.complex64, device=self._content_cells.device)
        for f0 in range(frame0, frame1, chunk):
            f1 = min(frame1, f0 + chunk)
            out[:, f0 - frame0:f1 - frame0] = self._frames(f0, f1)
        return out

    def _frames(self, frame0: int, frame1: int) -> torch.Tensor:
        """One chunk of the content's analysis, ``[ch, frames, bins]`` (a view)."""
        return self.transform.forward_frames(self._content_cells, frame0, frame1) \
            .transpose(-1, -2)

    def _shared(self, reuse: "tuple[Document, list[tuple[float, float, int]]]",
                frames: int) -> tuple[Shared, ...]:
        """What this document (a time edit of ``reuse``'s, engine.model.splice) holds of
        the older one's cells: for each ``(lo, hi, shift)`` of ``reuse`` (new samples
        ``[lo, hi)`` are the old content's at ``+ shift``), where the shift is whole
        frames of the transform's grid, the frames whose analysis reads only those
        samples and nothing the old document wrote. The older document's cells must be
        its own (no layers) on the same analysis."""
        old, moved = reuse
        if not isinstance(old.layers.mix, FrameStore) or old.transform.settings() != \
                self.transform.settings():
            return ()
        t, store = self.transform, old.layers.mix
        written = merged_spans([s for spans in old.written_samples() for s in spans])

        def starting(sample: float, count: int) -> int:  # the first frame reading from it on
            return _first(lambda k: t.frame_span(k, k + 1)[0] >= sample, count)

        def past(sample: float, count: int) -> int:  # the first frame reading past it
            return _first(lambda k: t.frame_span(k, k + 1)[1] > sample, count)

        parts = []
        for lo, hi, shift in moved:
            if shift % t.shift_samples:
                continue
            by = shift // t.hop
            j0 = max(starting(lo, frames), -by)
            j1 = min(past(hi, frames), old.n_frames - by)
            for a, b in written:  # old frames reading written samples are not shared
                k0, k1 = past(a, old.n_frames) - by, starting(b, old.n_frames) - by
                if min(k0, j1) > j0:
                    parts.append(Shared(j0, min(k0, j1), store, j0 + by))
                j0 = max(j0, k1)
            if j1 > j0:
                parts.append(Shared(j0, j1, store, j0 + by))
        return tuple(parts)

    def reanalyzed(self, edited: np.ndarray, progress: ProgressFn | None = None,
                   cancel: CancelFlag | None = None, **analysis) -> "Document":
        """A new document of the same recording on another analysis (transform and
        settings, as for the constructor), holding ``edited`` (this document's
        resynthesis): changing the analysis keeps every edit."""
        return Document(self.audio, device=self.device, progress=progress, cancel=cancel,
                        content=np.ascontiguousarray(edited, dtype=np.float32), **analysis)

    # -- shape and units -------------------------------------------------------
    @property
    def mix(self) -> torch.Tensor:
        """The mix, the coefficients rendered and resynthesized, as one tensor (for
        tests and scripts: a document a time edit made holds them in runs, which this
        joins, analysing what was not yet)."""
        cells = self.layers.mix
        return cells.dense() if isinstance(cells, FrameStore) else cells

    @property
    def cells(self) -> "torch.Tensor | FrameStore":
        """The mix as it is held (read as a ``[ch, frames, bins]`` tensor is)."""
        return self.layers.mix

    @property
    def channels(self) -> int:
        return self.cells.shape[0]

    @property
    def n_frames(self) -> int:
        return self.cells.shape[1]

    @property
    def n_bins(self) -> int:
        return self.cells.shape[2]

    @property
    def nbytes(self) -> int:
        """Memory held by the coefficients (the mix and the layers) and the recording."""
        return self.cells.numel() * self.cells.element_size() + self.layers.nbytes + \
            self.source.numel() * self.source.element_size()

    def nbytes_beside(self, other: "Document") -> int:
        """What :attr:`nbytes` counts that ``other`` does not hold too (a time edit's
        document shares cells with the one before it)."""
        def held(doc: Document) -> dict[int, int]:
            cells = doc.cells
            if isinstance(cells, FrameStore):
                return cells.held()
            return {cells.untyped_storage().data_ptr(): cells.untyped_storage().nbytes()}

        theirs, cells = held(other), self.cells.numel() * self.cells.element_size()
        apart = sum(n for ptr, n in held(self).items() if ptr not in theirs)
        return self.nbytes - cells + min(cells, apart)

    @property
    def magnitude(self) -> torch.Tensor:
        """``[ch, bins, frames]`` magnitude of everything, computed (a whole-document
        copy: for tests and scripts; brushes and views read rects)."""
        return magnitude(self.mix).transpose(1, 2)

    @property
    def phase(self) -> torch.Tensor:
        """``[ch, bins, frames]`` phase of everything, computed as :attr:`magnitude`."""
        return self.mix.angle().transpose(1, 2)

    def full_rect(self) -> Rect:
        return Rect(0, self.n_bins, 0, self.n_frames)

    @property
    def full_scale(self) -> float:
        """Magnitude of a full-scale sine at its peak bin: the 0 dB reference."""
        return self.transform.full_scale

    def bin_of(self, hz: float) -> float:
        return self.transform.bin_of(hz)

    def hz_of(self, bin_: float) -> float:
        return self.transform.hz_of(bin_)

    def frame_of(self, seconds: float) -> float:
        return self.transform.frame_of(seconds)

    def bin_span(self, freq: float, hz: float) -> float:
        """How many bins ``hz`` spans upwards from ``freq`` (negative: downwards): a
        width in Hz means a different number of bins at each pitch on a log axis."""
        return self.transform.bin_of(freq + hz) - self.transform.bin_of(freq)

    def channel_indices(self, channel: int | None) -> tuple[int, ...]:
        if channel is None:
            return tuple(range(self.channels))
        if not -self.channels <= channel < self.channels:
            raise ParameterError(f"channel {channel} does not exist; this document has "
                                 f"{self.channels} channel(s), numbered 0 to {self.channels - 1}")
        return (channel % self.channels,)

    def _channel_slice(self, channel: int | None) -> slice:
        chans = self.channel_indices(channel)
        return slice(chans[0], chans[-1] + 1)

    # -- region API ------------------------------------------------------------
    def read(self, rect: Rect, channel: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Magnitude and phase over ``rect``: ``[ch, bins, frames]`` float32."""
        return polar_parts(self.read_complex(rect, channel))

    def read_complex(self, rect: Rect, channel: int | None = None, *,
                     layer: int | None = None) -> torch.Tensor:
        """A copy of a layer's coefficients over ``rect`` (the active layer's, or those
        of the layer whose id is ``layer``): ``[ch, bins, frames]`` complex64."""
        rect = rect.clip(self.n_bins, self.n_frames)
        # always a copy: contiguous() returns the live cells themselves when the view is
        # contiguous already (one frame of one channel), and an undo patch kept them
        return self.layers.read(rect, self._channel_slice(channel), layer) \
            .transpose(1, 2).clone(memory_format=torch.contiguous_format)

    def write(self, rect: Rect, magnitude: torch.Tensor, phase: torch.Tensor,
              *, channel: int | None = None) -> Rect:
        """Store ``[ch, bins, frames]`` magnitude and phase over ``rect`` (already
        clipped to the document, as :meth:`read` returns them); returns the dirty rect."""
        if magnitude.shape != phase.shape:
            raise ParameterError(f"magnitude {tuple(magnitude.shape)} and phase "
                                 f"{tuple(phase.shape)} differ in shape")
        return self.write_complex(rect, torch.polar(magnitude.to(self.device, torch.float32),
                                                    phase.to(self.device, torch.float32)),
                                  channel)

    def write_complex(self, rect: Rect, coeffs: torch.Tensor,
                      channel: int | None = None, *, layer: int | None = None) -> Rect:
        """Store ``[ch, bins, frames]`` complex coefficients over ``rect`` in a layer (as
        :meth:`read_complex` names it), as :meth:`write`."""
        rect = rect.clip(self.n_bins, self.n_frames)
        chans = self.channel_indices(channel)
        expected = (len(chans), *rect.shape)
        if tuple(coeffs.shape) != expected:
            raise ParameterError(f"region data of shape {tuple(coeffs.shape)} does not fit "
                                 f"{rect} on {len(chans)} channel(s): expected {expected}")
        coeffs = coeffs.to(self.device, torch.complex64)
        self.layers.write(rect, coeffs.transpose(1, 2), slice(chans[0], chans[-1] + 1),
                          layer_id=layer)
        self._mark(rect, chans)
        return rect

    def original(self, rect: Rect, channel: int | None = None, *,
                 layer: int | None = None) -> torch.Tensor:
        """What restore paints back over ``rect``: ``[ch, bins, frames]``; the unedited
        recording for its layer, what another layer was made of for it
        (engine.model.layer_stack)."""
        rect = rect.clip(self.n_bins, self.n_frames)
        c = self._channel_slice(channel)
        if self.layers.plain:
            return self._recording(rect, c)
        return self.layers.origin(rect, c, layer).transpose(1, 2)

    def _recording(self, rect: Rect, c: slice) -> torch.Tensor:
        """The recording's analysis over ``rect`` (clipped), ``[ch, bins, frames]``."""
        size = self.transform.chunk_frames
        first, last = rect.frame0 // size, -(-rect.frame1 // size)
        parts = [self._original_chunk(c, k)[:, rect.bins] for k in range(first, last)]
        whole = torch.cat(parts, -1) if len(parts) > 1 else parts[0]
        return whole[..., rect.frame0 - first * size:rect.frame1 - first * size]

    def _recording_frames(self, rect: Rect, c: slice) -> torch.Tensor:
        """:meth:`_recording` frames-major, a copy (the layers' source of it)."""
        return self._recording(rect, c).transpose(1, 2).contiguous()

    def set_layers(self, state: StackState) -> Rect | None:
        """Make ``state`` the document's layers (app.session.layer_ops makes them, undo puts
        them back); listeners hear of the rect where the mix changed (or, with the
        layers' remix deferred, of each piece as :meth:`remix_some` recomputes it)."""
        rect = self.layers.set_state(state)
        if rect is not None:
            self._mark(rect, tuple(range(self.channels)))
        return rect

    def remix_some(self, deadline: float | None = None) -> bool:
        """Recompute the mix where a deferred layer change left it (engine.model.layer_stack),
        until ``deadline`` (None: all); whether some is left."""
        for rect in self.layers.remix_some(deadline):
            self._mark(rect, tuple(range(self.channels)))
        return bool(self.layers.pending)

    def _original_chunk(self, channels: slice, index: int) -> torch.Tensor:
        """Every bin of analysis chunk ``index`` of the recording, kept for the next
        dabs: a restore stroke reads the same chunk dozens of times, and on the
        constant-Q transform any part of a chunk costs its whole FFT."""
        key = (channels.start, channels.stop, index)
        if key not in self._original_chunks:
            size = self.transform.chunk_frames
            src = self.source[channels]  # a view: cost independent of length
            self._original_chunks[key] = self.transform.forward_frames(
                src, index * size, min(self.n_frames, (index + 1) * size))
            if len(self._original_chunks) > ORIGINAL_CHUNKS_KEPT:
                self._original_chunks.popitem(last=False)
        self._original_chunks.move_to_end(key)
        return self._original_chunks[key]

    def render(self, rect: Rect | None = None, width: int | None = None,
               height: int | None = None, *, channel: int | None = None,
               **style) -> np.ndarray:
        """RGBA image of ``rect`` (default: everything) at ``width`` x ``height``
        (default: one pixel per frame and bin); ``channel`` None shows the loudest
        channel at each point. ``style``: colormap, top_db, range_db, log_freq."""
        rect = (rect or self.full_rect()).clip(self.n_bins, self.n_frames)
        if rect.empty:
            raise ParameterError(f"{rect} lies outside the document ({self.n_bins} bins x "
                                 f"{self.n_frames} frames)")
        c = self._channel_slice(channel)
        width = rect.shape[1] if width is None else width
        height = rect.shape[0] if height is None else height
        return render.render(self.cells[c], rect, width=width, height=height, ref=self.full_scale,
                             transform=self.transform, blocks=self._blocks(c), **style)

    def level_tile_db(self, rect: Rect, factor: int = 1, channel: int | None = None) -> np.ndarray:
        """dB levels of ``rect`` pooled by ``factor`` frames, for a view's tiles."""
        rect = rect.clip(self.n_bins, self.n_frames)
        c = self._channel_slice(channel)
        return render.level_tile_db(self.cells[c], rect, factor, ref=self.full_scale,
                                    blocks=self._blocks(c))

    def prepare_overview(self, frames: tuple[int, int] | None = None) -> None:
        """Build the zoomed-out overview now (a worker does, before a view asks), of
        ``frames`` (a range: what a view shows) or all of them."""
        self._overview.get(self.cells, frames)

    @property
    def analysing(self) -> bool:
        """Whether a time edit left frames to analyse, or its overview to build, which
        :meth:`analyse_some` does a piece at a time (the window: :meth:`analyse_behind`;
        the view analyses what it shows first, when it draws it)."""
        return self._edited and self._overview.next_stale(1) is not None

    def analyse_behind(self) -> threading.Thread | None:
        """Do :meth:`analyse_some`'s work in a thread of its own (the window's: its GUI
        thread never pays for it), holding the document weakly (it ends with it, or
        when nothing is left, which an exit waits for); None when nothing is left now."""
        if not self.analysing:
            return None
        held = weakref.ref(self)

        def run() -> None:
            while (doc := held()) is not None and \
                    doc.analyse_some(time.perf_counter() + BEHIND_TURN_S):
                del doc

        # not a daemon: one stopped by the interpreter's exit mid-FFT aborts the process
        thread = threading.Thread(target=run, name="analysis behind")
        thread.start()
        return thread

    def analyse_some(self, deadline: float) -> bool:
        """Analyse what a time edit left and build its overview, a chunk of frames at
        a time, until ``deadline`` (a ``time.perf_counter()`` value); whether some is
        left."""
        chunk = self.transform.analysis_chunk(self.channels)
        while (span := self._overview.next_stale(chunk)) is not None:
            self._overview.get(self.cells, span)
            if time.perf_counter() > deadline:
                return self._overview.next_stale(1) is not None
        return False

    def loud_blocks(self, below_peak_db: float) -> tuple[torch.Tensor, int]:
        """For each bin, in how many of the file's blocks of frames (every channel's)
        it comes within ``below_peak_db`` of the document's loudest cell (``[bins]``
        int64, zeros for a silent file), and how many blocks there are. From the
        overview: cheap once it is built."""
        blocks = self._overview.get(self.cells)
        total = blocks.shape[0] * blocks.shape[1]
        peak = float(blocks.max()) if blocks.numel() else 0.0
        if not peak > 0:
            return torch.zeros(self.n_bins, dtype=torch.int64), total
        loud = blocks >= peak * 10 ** (-below_peak_db / 20)
        return loud.sum(dim=(0, 1)).cpu(), total

    def _blocks(self, channels: slice):
        """The overview's block maxima of ``channels``, computed when a view asks."""
        return lambda f0, f1: self._overview.get(self.cells, (f0, f1))[channels]

    def packed_texture(self, rect: Rect, channel: int = 0, **levels) -> np.ndarray:
        """Full-resolution R = magnitude, G = phase texture of ``rect`` (see engine.view.render)."""
        rect = rect.clip(self.n_bins, self.n_frames)
        c = self.channel_indices(channel)[0]
        return render.packed_rgba(*self.read(rect, c), ref=self.full_scale, **levels)

    def coefficients(self, frame0: int, frame1: int) -> torch.Tensor:
        """Complex coefficients of frames ``[frame0, frame1)``, all channels and bins:
        ``[ch, bins, frames]``, a view of the live store (do not write through it)."""
        return self.cells[:, frame0:frame1].transpose(1, 2)

    # -- change tracking -------------------------------------------------------
    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def hold_marks(self) -> None:
        """Keep what writes mark (the written frames, the listeners' news) until
        :meth:`release_marks`: a worker writes, and the listeners (the view, the
        resynthesis) hear of it on the GUI thread."""
        self._held = []

    def release_marks(self) -> None:
        """Mark what was written since :meth:`hold_marks`, now."""
        held, self._held = self._held, None
        for rect, channels in held or ():
            self._mark(rect, channels)

    def _mark(self, rect: Rect, channels: tuple[int, ...]) -> None:
        if rect.empty:
            return
        if self._held is not None:
            self._held.append((rect, channels))
            return
        for c in channels:
            self._written[c] = merged_spans(self._written[c] + [(rect.frame0, rect.frame1)])
        self._dirty = rect.union(self._dirty)
        self._overview.invalidate(rect.frame0, rect.frame1, bin0=rect.bin0, bin1=rect.bin1)
        for listener in list(self._listeners):
            listener(rect, channels)

    @property
    def content_samples(self) -> np.ndarray:
        """What the coefficients were analysed from, float32 ``[ch, n]``: the recording,
        or the edited audio a re-analysis was given."""
        return self.audio.samples if self._content is None else self._content

    def written_frames(self) -> list[list[tuple[int, int]]]:
        """Per channel, the frames written since the analysis (a copy), for an undo step
        to put back (engine.model.history)."""
        return [list(spans) for spans in self._written]

    def set_written(self, frames: list[list[tuple[int, int]]]) -> None:
        """Make ``frames`` (from :meth:`written_frames`) what has been written: an undo
        that put every cell back makes its samples the content's again once the
        resynthesis splices the span its writes queued."""
        self._written = [list(spans) for spans in frames]

    def written_samples(self) -> list[list[tuple[int, int]]]:
        """Per channel, the samples some write since the analysis reaches (merged
        half-open spans): outside them the output is :attr:`content_samples` as they
        are (engine.model.resynth)."""
        t, n = self.transform, self.length
        return [merged_spans([t.samples_affected(a, b, n) for a, b in frames])
                for frames in self._written]

    def take_dirty(self) -> Rect | None:
        """The union of the rects written since the last call, then forget it."""
        dirty, self._dirty = self._dirty, None
        return dirty


def _first(past, count: int) -> int:
    """The first ``k`` in ``[0, count)`` for which ``past(k)`` holds (``count``: none),
    ``past`` holding from some ``k`` on."""
    lo, hi = 0, count
    while lo < hi:
        mid = (lo + hi) // 2
        if past(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _weak(method):
    """``method`` called through a weak reference to its object: a document's store
    does not keep the document alive (engine.model.layer_sources.Computed)."""
    ref = weakref.WeakMethod(method)
    return lambda *args: ref()(*args)
