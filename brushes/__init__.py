"""Brush kernels, strokes, history and presets (built on the engine; no Qt)."""
