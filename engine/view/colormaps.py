"""The colormaps a spectrogram can be drawn with (engine.view.render draws them). A
module of its own, without torch, so the command line can list them before it
loads anything heavy."""

COLORMAPS = ("viridis", "magma", "inferno", "plasma", "cividis", "gray")
