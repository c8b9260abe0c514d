"""Complex coefficients to the magnitude and phase that brushes and views read."""

import torch


def magnitude(coeffs: torch.Tensor) -> torch.Tensor:
    """|z| as sqrt(re^2 + im^2): twice as fast as torch.abs (which guards against
    overflow that magnitudes of audio, at most a frame's length, never reach)."""
    parts = torch.view_as_real(coeffs)
    re, im = parts[..., 0], parts[..., 1]
    return torch.mul(re, re).addcmul_(im, im).sqrt_()


def magnitude_of(cells, key: tuple) -> torch.Tensor:
    """The magnitude of ``cells[key]`` (``[ch, frames, bins]``: a tensor, or a store held
    in runs, engine.model.frame_store, read a run at a time: never its complex cells
    joined first)."""
    parts = cells.parts(key) if hasattr(cells, "parts") else [cells[key]]
    mags = [magnitude(p) for p in parts]
    return mags[0] if len(mags) == 1 else torch.cat(mags, 1)


def polar_parts(coeffs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Magnitude and phase of complex coefficients."""
    return magnitude(coeffs), coeffs.angle()
