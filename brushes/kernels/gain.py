import math

from brushes.kernels.kernel import DabContext, Kernel, settle
from brushes.params import Param


class Gain(Kernel):
    name = "gain"
    help = "Attenuate or boost; -inf dB erases. Phase is kept."
    params = (Param("gain_db", -30.0, -math.inf, 24.0, "dB",
                    "gain at full coverage; -inf (\"-inf\" in JSON) erases",
                    aliases=(("-inf", -math.inf),)),)

    def effect(self, ctx: DabContext):
        gain_db = ctx.params["gain_db"]
        gain = 0.0 if math.isinf(gain_db) else 10 ** (gain_db / 20)
        return settle(ctx, ctx.before_z * (1 + ctx.coverage * (gain - 1)), ctx.coverage)
