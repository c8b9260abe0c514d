"""What a project file that cannot be opened or saved raises: one line, the file and
what is wrong with it."""

from engine.errors import SpectroPaintError


class ProjectError(SpectroPaintError):
    pass
