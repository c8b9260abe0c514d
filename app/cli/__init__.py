"""The command line, without Qt: ``main`` (the parser, the headless commands, errors in
one line), one module per larger command, and ``progress`` (what a command shows on
stderr while it works)."""
