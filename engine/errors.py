"""The errors the engine raises. Each message says which file or value is at
fault, what is wrong with it and what to do, so the CLI and the GUI can show
it as it is, in one line, without a traceback."""


class SpectroPaintError(Exception):
    """Base of every error meant to be shown to the user."""


class AudioError(SpectroPaintError):
    """An audio file cannot be read or written."""


class TruncatedAudio(AudioError):
    """A file cut short or damaged part way: its readable part can still be opened
    (``allow_truncated``). ``problem`` says what is wrong, without the CLI's flag,
    for a front end that offers its own way to open that part."""

    def __init__(self, problem: str, remedy: str):
        super().__init__(f"{problem}; use --allow-truncated to {remedy}")
        self.problem = problem


class ParameterError(SpectroPaintError, ValueError):
    """An analysis, render or export setting is out of range."""


class DeviceError(SpectroPaintError):
    """The requested compute device does not exist on this machine."""


class Cancelled(SpectroPaintError):
    """Long work was cancelled by the user; nothing was written."""


class OutputError(SpectroPaintError):
    """A file could not be written (full disk, permissions); nothing was."""
