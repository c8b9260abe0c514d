"""What the controllers use: the painting session, the open document, jobs and workers,
autosave, playback, prompts."""
