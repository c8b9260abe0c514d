import math

from brushes.kernels.base import DabContext, Kernel, blend_magnitude
from brushes.params import Param


class Gain(Kernel):
    name = "gain"
    help = "Attenuate or boost; -inf dB erases. Phase is kept."
    params = (Param("gain_db", -30.0, -math.inf, 24.0, "dB",
                    "gain at full coverage; -inf (\"-inf\" in JSON) erases",
                    aliases=(("-inf", -math.inf),)),)

    def effect(self, ctx: DabContext):
        mag, phase = ctx.before
        gain_db = ctx.params["gain_db"]
        gain = 0.0 if math.isinf(gain_db) else 10 ** (gain_db / 20)
        return blend_magnitude(mag, mag * gain, ctx.coverage), phase
