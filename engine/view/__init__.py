"""What a document looks like: rendering, colormaps, overviews, nnAudio views, pitch
grids."""
