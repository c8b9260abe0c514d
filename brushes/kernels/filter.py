import torch

from brushes.kernels.kernel import DabContext, Kernel, blend_magnitude, with_magnitude
from brushes.params import Param

ORDER = 2  # Butterworth-like order of the smooth response: no brick wall, no ringing


def response(rho: torch.Tensor, mode: str, *, cutoff: float, bandwidth: float) -> torch.Tensor:
    def lowpass(c):
        return 1.0 / (1.0 + (rho / c) ** (2 * ORDER))

    if mode == "lowpass":
        return lowpass(cutoff)
    if mode == "highpass":
        return 1.0 - lowpass(cutoff)
    lo, hi = max(cutoff - bandwidth / 2, 1e-3), cutoff + bandwidth / 2
    return lowpass(hi) * (1.0 - lowpass(lo))


class Filter(Kernel):
    name = "filter"
    help = ("Low/high/band-pass the 2-D spectrum of the magnitude under the brush: lowpass "
            "smooths texture into haze, highpass keeps only detail. Phase is kept.")
    params = (Param("mode", "lowpass", choices=("lowpass", "highpass", "bandpass"),
                    help="which spatial frequencies of the magnitude pass"),
              Param("cutoff", 0.2, 0.01, 1.4, "", "cutoff, as a fraction of the highest "
                    "spatial frequency"),
              Param("bandwidth", 0.2, 0.01, 1.4, "", "width of the band (bandpass only)"))
    local = False  # the 2-D spectrum of the whole rect

    def effect(self, ctx: DabContext):
        mag, p = ctx.before_mag, ctx.params
        bins, frames = mag.shape[-2:]
        fu = torch.fft.fftfreq(bins, device=mag.device) * 2  # -1 .. 1 of Nyquist
        fv = torch.fft.rfftfreq(frames, device=mag.device) * 2
        rho = torch.sqrt(fu[:, None] ** 2 + fv[None, :] ** 2)
        spectrum = torch.fft.rfft2(mag) * response(rho, p["mode"], cutoff=p["cutoff"],
                                                   bandwidth=p["bandwidth"])
        filtered = torch.fft.irfft2(spectrum, s=(bins, frames)).clamp_(min=0.0)
        return with_magnitude(ctx, blend_magnitude(mag, filtered, ctx.coverage))
