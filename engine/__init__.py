"""SpectroPaint's headless engine: audio in and out, transforms, the document
of magnitude and phase, resynthesis and rendering. No Qt, no OpenGL.

Tensors of 2 MB and more go on 2 MB pages (torch's ``THP_MEM_ALLOC_ENABLE``, read
at its first large allocation, so set here before any): a fresh coefficient array
of a minute of stereo (300 MB on the constant-Q grid) otherwise costs 75 000 page
faults, a third of its forward transform's time. ``THP_MEM_ALLOC_ENABLE=0`` turns
it off.
"""

import os

os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
