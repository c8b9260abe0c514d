"""SpectroPaint's headless engine: audio in and out, transforms, the document
of magnitude and phase, resynthesis and rendering. No Qt, no OpenGL."""
