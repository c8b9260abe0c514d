"""SpectroPaint's user-facing layer: the CLI now, the Qt GUI later."""
