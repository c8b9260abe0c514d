"""The desktop app (Qt, OpenGL): ``main`` starts it; ``window`` is the main window,
which owns its controllers; the canvas, rulers, panels and docks draw; ``editing``
turns pen events into strokes on the engine."""
