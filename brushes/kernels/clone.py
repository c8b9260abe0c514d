from brushes.kernels.kernel import DabContext, Kernel, blend_complex
from brushes.params import Param
from engine.region import Rect


class Clone(Kernel):
    name = "clone"
    help = "Copy from a source offset in time and frequency, blended by the brush."
    params = (Param("offset_ms", -500.0, -600000.0, 600000.0, "ms",
                    "where to copy from, relative to the brush (negative = earlier)"),
              Param("offset_hz", 0.0, -96000.0, 96000.0, "Hz",
                    "frequency offset of the source (negative = lower)"))

    def reach_s(self, params: dict) -> float:
        return abs(params["offset_ms"]) / 1000

    def effect(self, ctx: DabContext):
        surface, r = ctx.surface, ctx.rect
        source_hz = max(ctx.dabs[0].freq + ctx.params["offset_hz"], 0.0)
        db = round(surface.bin_of(source_hz) - surface.bin_of(ctx.dabs[0].freq))
        df = round(surface.frame_of(ctx.params["offset_ms"] / 1000))
        source = Rect(r.bin0 + db, r.bin1 + db, r.frame0 + df, r.frame1 + df)
        inside = source.clip(surface.n_bins, surface.n_frames)
        target = ctx.before_z.clone()  # where the source lies outside the file: no change
        if not inside.empty:
            target[:, inside.bin0 - source.bin0:inside.bin1 - source.bin0,
                   inside.frame0 - source.frame0:inside.frame1 - source.frame0] = \
                ctx.canvas.complex_before(inside)
        return blend_complex(ctx, target)
