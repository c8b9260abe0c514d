"""What the user sees of the document: the OpenGL canvas, its tiles, overlays, rulers
and view state."""
