"""``specpaint unmix``: a file unmixed into layers, one stem per layer.

    specpaint unmix take.wav -o stems/ --method hpss
    specpaint unmix song.flac -o stems/ --method nmf:2 --hints marks.json
    specpaint unmix interview.wav -o stems/ --method voice

Methods (engine.unmix): hpss (harmonic, percussive, residual; hpss:1 for two
parts), tonal-noise, nmf:K, voice (voice and background). ``--hints``: a JSON list
of marks steering an nmf unmix (app.session.unmixing): ``[{"part": 0, "points": [[1.0,
440], [2.0, 440]], "radius_ms": 50, "radius_hz": 60}, ...]``. The stems add up to
the input (within float32 rounding).
"""

import sys
from pathlib import Path


def add_parser(sub, analysis_args) -> None:
    p = sub.add_parser("unmix", help="split a file into layers and write one stem per layer",
                       description="Unmix a file into layers that add up to it (no model "
                                   "downloaded) and write each as a stem: "
                                   "OUTDIR/<file>-<n>-<layer>.wav.")
    p.add_argument("file")
    p.add_argument("-o", "--output-dir", required=True, help="folder for the stems (made if "
                   "missing)")
    p.add_argument("--method", default="hpss",
                   help="hpss (or hpss:MARGIN), tonal-noise, nmf:K, or voice (voice and "
                        "background; default hpss)")
    p.add_argument("--hints", default=None, metavar="JSON",
                   help="marks steering an nmf unmix: [{part, points, radius_ms, radius_hz}]")
    p.add_argument("--format", default="wav", help="the stems' file type (default wav)")
    p.add_argument("--bits", default=None, help="16, 24, 32 or float (default per format)")
    p.add_argument("--no-dither", action="store_true", help="no TPDF dither for 16-bit output")
    analysis_args(p)


def cmd_unmix(args, open_document, progress) -> None:
    from app.session.editor import Editor
    from app.session.stem_set import earlier, manifest_path
    from engine import unmix
    from engine.errors import ParameterError
    from engine.io.export import FORMATS

    method = unmix.parse(args.method)  # what it is given is refused before the file is read
    suffix = "." + args.format.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ParameterError(f"--format {args.format}: use one of "
                             f"{', '.join(sorted(f[1:] for f in FORMATS))}")
    fmt, depths, _ = FORMATS[suffix]
    if args.bits is not None and str(args.bits) not in depths:
        raise ParameterError(f"--bits {args.bits}: {fmt} stems are written with one of "
                             f"{', '.join(depths)}")
    if args.hints and method.name != "nmf":
        raise ParameterError(f"--hints steers an nmf unmix, not {method}: use --method nmf:K")
    marks = read_marks(args.hints, len(method.parts)) if args.hints else None
    folder = Path(args.output_dir)
    if folder.exists() and not folder.is_dir():
        raise ParameterError(f"{folder}: not a folder; give a folder for the stems")
    if folder.is_dir():  # a folder holding stems no set names: refused before the work
        earlier(folder, Path(args.file).stem)
    editor = Editor(open_document(args), history_limit=0)
    made = editor.unmix(str(method), marks=marks, progress=progress("unmixing"))
    try:
        folder.mkdir(exist_ok=True)
    except OSError as e:
        raise ParameterError(f"{folder}: cannot make the folder for the stems ({e})") from e
    reports = editor.export_stems(folder, stem=Path(args.file).stem, suffix=suffix,
                                  bit_depth=args.bits, dither=not args.no_dither,
                                  progress=progress("writing"))
    for layer, report in zip(made, reports, strict=True):
        print(f"{layer.name}: {report.summary()}")
    print(f"unmixed {args.file} by {method} into {len(made)} stems in {folder} (named in "
          f"{manifest_path(folder, Path(args.file).stem).name})",
          file=sys.stderr)


def read_marks(path: str, parts: int) -> list[dict]:
    """The marks of a ``--hints`` file, checked for an unmix into ``parts`` parts; a
    ParameterError naming the file."""
    from app.session.editor import load_json_list
    from app.session.marks import checked_marks
    from engine.errors import ParameterError

    marks = load_json_list(path, what="marks file", items="marks")
    try:
        return checked_marks(marks, parts, "marks")
    except ParameterError as e:
        raise ParameterError(f"{path}: {e}") from e
