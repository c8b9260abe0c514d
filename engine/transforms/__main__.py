"""``python -m engine.transforms PAGE``: the analysis settings' table written anew into
PAGE (between its markers); with no PAGE, printed."""

import sys
from pathlib import Path

from engine.transforms.settings import markdown, with_table


def main(argv: list[str]) -> None:
    if argv:
        page = Path(argv[0])
        page.write_text(with_table(page.read_text()))
    else:
        print(markdown(), end="")


if __name__ == "__main__":
    main(sys.argv[1:])
