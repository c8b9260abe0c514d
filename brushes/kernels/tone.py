import math

from brushes.kernels.kernel import DabContext, Kernel, add_complex
from brushes.params import Param


class Tone(Kernel):
    """Each dab adds the transform of a sinusoid at its frequency. A dab rewrites
    every frame under it, so along a stroke its trailing edge is where its
    sinusoid meets the previous dab's; when the pitch changes, the new dab's
    phase offset makes the two agree there: a painted glide stays one smooth
    partial instead of a string of clashing ones."""

    name = "tone"
    help = "Draw a steady partial along the stroke, with coherent phase: a clean tone."
    params = (Param("level_db", -20.0, -120.0, 0.0, "dBFS", "peak level of the tone"),)
    batchable = False

    def effect(self, ctx: DabContext):
        surface, r, dab = ctx.surface, ctx.rect, ctx.dabs[0]
        amplitude = 10 ** (ctx.params["level_db"] / 20)
        phase = self._continued_phase(ctx, dab.freq, surface.frame_of(dab.time),
                                      surface.frame_of(ctx.params["radius_ms"] / 1000))
        lines = surface.transform.sinusoid(dab.freq, amplitude, phase, bins=range(r.bin0, r.bin1),
                                       frame0=r.frame0, frame1=r.frame1, length=surface.length)
        # the level follows the stroke's coverage over time, not the dab's round
        # shape across frequency, which would cut into the tone's spectral peak
        return add_complex(ctx, lines, ctx.coverage.amax(0, keepdim=True))

    @staticmethod
    def _continued_phase(ctx: DabContext, freq: float, frame: float, radius: float) -> float:
        """Phase offset for this dab, continuous with the stroke's previous dab."""
        state = ctx.canvas.state.tone
        phase = 0.0
        if state is not None:
            prev_freq, prev_frame, prev_phase = state
            edge = frame - radius if frame >= prev_frame else frame + radius
            seconds = ctx.surface.transform.seconds_of(edge)
            phase = math.remainder(prev_phase + 2 * math.pi * (prev_freq - freq) * seconds,
                                   2 * math.pi)
        ctx.canvas.state.tone = (freq, frame, phase)
        return phase
