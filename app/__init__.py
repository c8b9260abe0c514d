"""SpectroPaint's user-facing layer, in four wings over ``brushes/`` and ``engine/``:

- ``app.cli``: the command line (no Qt): its parser, the headless commands and what
  they show while they work;
- ``app.batch``: jobs over many files (no Qt): the batch (a journal, a pipeline,
  worker processes, Dask, a memory budget) and the features dataset;
- ``app.project``: ``.spp`` projects read and written (no Qt);
- ``app.gui``: the desktop app (Qt, OpenGL): the window, its controllers, the canvas,
  the panels.

``app.main`` is the ``specpaint`` command, the one entry point. docs/architecture.md
draws the house."""
