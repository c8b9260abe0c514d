"""``python -m engine.transforms PAGE``: the analysis settings' table written anew into
PAGE (between its markers); with no PAGE, printed."""

import sys
from pathlib import Path

from engine.transforms.settings import markdown, with_table

if len(sys.argv) > 1:
    page = Path(sys.argv[1])
    page.write_text(with_table(page.read_text()))
else:
    print(markdown(), end="")
