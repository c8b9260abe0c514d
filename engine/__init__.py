"""SpectroPaint's headless engine: audio in and out, transforms, the document
of complex coefficients, resynthesis and rendering. No Qt, no OpenGL.

Two process settings, made here so they are in place before torch starts (they
are read when its allocator and its OpenMP pool first run; set either yourself to
override):

- ``THP_MEM_ALLOC_ENABLE=1``: tensors of 2 MB and more go on 2 MB pages. A fresh
  coefficient array of a minute of stereo (300 MB on the constant-Q grid) otherwise
  costs 38 000 page faults, a third of its forward transform's time.
- ``OMP_WAIT_POLICY=PASSIVE``: torch's worker threads sleep between parallel
  regions instead of spinning. With every core busy elsewhere, spinning threads
  fight the other work: opening and analysing 10 minutes of stereo took 12.1 s
  under load against 3.8 s idle; passive, 3.8 s and 3.0 s (2 cores, 2 threads).
  The thread count stays torch's default (one per core).
"""

import os

os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
