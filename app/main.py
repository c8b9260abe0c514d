"""``specpaint``: the desktop app (``specpaint [FILE]``, ``specpaint gui``) or one of
the headless commands (``specpaint --help``). The one entry point: the command line
(:mod:`app.cli`) runs the commands and is given the app to start, so it never imports
Qt; Qt is imported only when the app starts."""

import sys


def start_app(args) -> int:
    from app.gui.start import run

    return run(args.file, args.device)


def main(argv: list[str] | None = None) -> int:
    from app.cli.commands import main as run_command

    return run_command(argv, gui=start_app)


if __name__ == "__main__":
    sys.exit(main())
