"""``.spp`` projects, without Qt: ``write`` (a snapshot of a session saved whole or not
at all), ``read`` (checked before anything is built from it) and ``history`` (the undo
history's strokes packed and unpacked)."""
