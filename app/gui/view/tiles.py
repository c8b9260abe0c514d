"""GPU tiles of the spectrogram: levels of detail, partial uploads, a budget.

A tile covers 256 bins and 256 columns, each column the max over ``2**level``
frames. The view shows the level whose columns are about one pixel wide, so a
texture never exceeds GL_MAX_TEXTURE_SIZE and zoomed-out views cost what the
screen holds. Its texture (R32F, dB) is a pyramid over bins (:func:`bin_pyramid`)
so the shader reads three texels for a pixel row however many bins it spans. An
edit marks the texels it touches in every cached tile; the next frame re-renders
those columns (engine) and uploads them with glTexSubImage2D.
"""

import math
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from OpenGL import GL

from engine.model.document import Document
from engine.model.layer_view import layer_tile_db, tinted_tile_codes
from engine.region import Rect

# each layer's colour in the tinted view, by id (engine.model.layer_view.TINTS of them)
TINT_COLOURS = np.array([(1.0, 0.55, 0.15), (0.25, 0.7, 1.0), (0.45, 0.95, 0.35),
                         (1.0, 0.35, 0.6), (0.8, 0.5, 1.0), (1.0, 0.9, 0.3),
                         (0.3, 0.95, 0.85), (0.95, 0.95, 0.95)], np.float32)
TEXTURE_TILE = 256
PYRAMID_ROWS = 2 * TEXTURE_TILE  # shaders/spectrogram.frag reads this layout
MAX_TILES = 384  # 192 MiB of R32F textures


@dataclass
class Tile:
    texture: int
    rect: Rect  # document cells covered (frames already a multiple of the level's factor)
    factor: int
    cols: int
    rows: int
    pending: Rect | None = None  # texels (rows = bins, cols) to re-render, or None


def bin_pyramid(db: np.ndarray) -> np.ndarray:
    """``db`` (up to TEXTURE_TILE bins x columns) stacked with its maxima over 2, 4,
    ... TEXTURE_TILE bins: level k's rows start at ``PYRAMID_ROWS - PYRAMID_ROWS >> k``,
    row i the max of bins ``[i * 2**k, (i + 1) * 2**k)`` (the last over what is left)."""
    pyramid = np.full((PYRAMID_ROWS, db.shape[1]), -np.inf, np.float32)
    level = db
    for k in range(TEXTURE_TILE.bit_length()):
        offset = PYRAMID_ROWS - (PYRAMID_ROWS >> k)
        pyramid[offset:offset + len(level)] = level
        if len(level) % 2 and len(level) > 1:
            level = np.vstack([level, level[-1:]])
        level = np.maximum(level[0::2], level[1::2]) if len(level) > 1 else level
    return pyramid


def level_for(frames_per_pixel: float) -> int:
    return max(0, int(math.floor(math.log2(frames_per_pixel)))) if frames_per_pixel >= 2 else 0


class TileCache:
    def __init__(self):
        self.doc: Document | None = None
        self.channel: int | None = None
        self.layer_view: int | str | None = None  # a layer's id, "tinted", or None: the mix
        self.tiles: OrderedDict[tuple[int, int, int], Tile] = OrderedDict()
        self.uploads = 0  # texel sub-rects uploaded (tests and benchmarks read it)

    def set_document(self, doc: Document | None, channel: int | None) -> None:
        self.clear()
        self.doc, self.channel = doc, channel
        if doc is not None:
            doc.add_listener(self.on_edit)

    def clear(self) -> None:
        if self.doc is not None:
            self.doc.remove_listener(self.on_edit)
        if self.tiles:
            GL.glDeleteTextures([t.texture for t in self.tiles.values()])
        self.tiles.clear()

    def tile_rect(self, level: int, tx: int, ty: int) -> Rect:
        span = TEXTURE_TILE << level
        return Rect(ty * TEXTURE_TILE, (ty + 1) * TEXTURE_TILE, tx * span, (tx + 1) * span) \
            .clip(self.doc.n_bins, self.doc.n_frames)

    def visible(self, level: int, frames: tuple[float, float], bins: tuple[float, float]):
        span = TEXTURE_TILE << level
        f0, f1 = max(0, int(frames[0])), min(self.doc.n_frames, int(math.ceil(frames[1])) + 1)
        b0, b1 = max(0, int(bins[0])), min(self.doc.n_bins, int(math.ceil(bins[1])) + 1)
        for tx in range(f0 // span, (max(f1, f0 + 1) - 1) // span + 1):
            for ty in range(b0 // TEXTURE_TILE, (max(b1, b0 + 1) - 1) // TEXTURE_TILE + 1):
                yield (level, tx, ty)

    def on_edit(self, rect: Rect, channels: tuple[int, ...]) -> None:
        """Document listener: mark the texels ``rect`` touches in cached tiles."""
        if self.channel is not None and self.channel not in channels:
            return
        for tile in self.tiles.values():
            both = rect.intersect(tile.rect)
            if both.empty:
                continue
            f = tile.factor
            texels = Rect(both.bin0 - tile.rect.bin0, both.bin1 - tile.rect.bin0,
                          (both.frame0 - tile.rect.frame0) // f,
                          -(-(both.frame1 - tile.rect.frame0) // f))
            tile.pending = texels.union(tile.pending)

    def get(self, key, budget_end: float) -> Tile | None:
        """The tile, created or refreshed if time is left before ``budget_end``
        (perf_counter seconds); None if it must wait for a later frame."""
        tile = self.tiles.get(key)
        if tile is not None:
            self.tiles.move_to_end(key)
            if tile.pending is not None and time.perf_counter() < budget_end:
                self._refresh(tile)
            return tile
        if time.perf_counter() >= budget_end:
            return None
        return self._create(key)

    def _create(self, key) -> Tile:
        level, tx, ty = key
        rect = self.tile_rect(level, tx, ty)
        data = bin_pyramid(self._levels(rect, 1 << level))
        texture = GL.glGenTextures(1)
        GL.glBindTexture(GL.GL_TEXTURE_2D, texture)
        for name, value in ((GL.GL_TEXTURE_MIN_FILTER, GL.GL_NEAREST),
                            (GL.GL_TEXTURE_MAG_FILTER, GL.GL_NEAREST),
                            (GL.GL_TEXTURE_WRAP_S, GL.GL_CLAMP_TO_EDGE),
                            (GL.GL_TEXTURE_WRAP_T, GL.GL_CLAMP_TO_EDGE)):
            GL.glTexParameteri(GL.GL_TEXTURE_2D, name, value)
        GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
        GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, GL.GL_R32F, data.shape[1], data.shape[0], 0,
                        GL.GL_RED, GL.GL_FLOAT, data)
        tile = Tile(texture, rect, 1 << level, data.shape[1], rect.bin1 - rect.bin0)
        self.tiles[key] = tile
        while len(self.tiles) > MAX_TILES:
            _, old = self.tiles.popitem(last=False)
            GL.glDeleteTextures([old.texture])
        return tile

    def _levels(self, rect: Rect, factor: int) -> np.ndarray:
        """What a tile shows of ``rect`` (see :attr:`layer_view`)."""
        if self.layer_view is None:
            return self.doc.level_tile_db(rect, factor, self.channel)
        if self.layer_view == "tinted":
            return tinted_tile_codes(self.doc, rect, factor, channel=self.channel)
        return layer_tile_db(self.doc, rect, factor, channel=self.channel,
                             layer=self.layer_view)

    def _refresh(self, tile: Tile) -> None:
        """Re-render the pending columns, every bin of them (the pyramid's upper levels
        are maxima over the whole tile's height)."""
        texels, tile.pending = tile.pending.clip(tile.rows, tile.cols), None
        if texels.empty:
            return
        f, r = tile.factor, tile.rect
        cells = Rect(r.bin0, r.bin1, r.frame0 + texels.frame0 * f,
                     min(r.frame1, r.frame0 + texels.frame1 * f))
        data = bin_pyramid(self._levels(cells, f))
        GL.glBindTexture(GL.GL_TEXTURE_2D, tile.texture)
        GL.glPixelStorei(GL.GL_UNPACK_ALIGNMENT, 1)
        GL.glTexSubImage2D(GL.GL_TEXTURE_2D, 0, texels.frame0, 0, data.shape[1],
                           data.shape[0], GL.GL_RED, GL.GL_FLOAT, data)
        self.uploads += 1
