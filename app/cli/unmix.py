"""``specpaint unmix``: a file unmixed into layers, one stem per layer.

    specpaint unmix take.wav -o stems/ --method hpss
    specpaint unmix song.flac -o stems/ --method nmf:2 --hints marks.json

Methods (engine.unmix): hpss (harmonic, percussive, residual; hpss:1 for two
parts), tonal-noise, nmf:K. ``--hints``: a JSON list of marks steering an nmf unmix
(brushes.unmix): ``[{"part": 0, "points": [[1.0, 440], [2.0, 440]], "radius_ms": 50,
"radius_hz": 60}, ...]``. The stems add up to the input (within float32 rounding).
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
                   help="hpss (or hpss:MARGIN), tonal-noise, or nmf:K (default hpss)")
    p.add_argument("--hints", default=None, metavar="JSON",
                   help="marks steering an nmf unmix: [{part, points, radius_ms, radius_hz}]")
    p.add_argument("--format", default="wav", help="the stems' file type (default wav)")
    p.add_argument("--bits", default=None, help="16, 24, 32 or float (default per format)")
    p.add_argument("--no-dither", action="store_true", help="no TPDF dither for 16-bit output")
    analysis_args(p)


def cmd_unmix(args, open_document, progress) -> None:
    from brushes.script import Editor, load_stroke_script
    from engine import unmix
    from engine.errors import ParameterError
    from engine.export import FORMATS

    method = unmix.parse(args.method)  # refused before the file is read
    suffix = "." + args.format.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ParameterError(f"--format {args.format}: use one of "
                             f"{', '.join(sorted(f[1:] for f in FORMATS))}")
    marks = load_stroke_script(args.hints) if args.hints else None
    folder = Path(args.output_dir)
    if folder.exists() and not folder.is_dir():
        raise ParameterError(f"{folder}: not a folder; give a folder for the stems")
    editor = Editor(open_document(args), history_limit=0)
    try:
        made = editor.unmix(str(method), marks=marks, progress=progress("unmixing"))
    except ParameterError as e:
        raise ParameterError(f"{args.hints}: {e}" if args.hints and "marks" in str(e)
                             else str(e)) from e
    try:
        folder.mkdir(exist_ok=True)
    except OSError as e:
        raise ParameterError(f"{folder}: cannot make the folder for the stems ({e})") from e
    reports = editor.export_stems(folder, stem=Path(args.file).stem, suffix=suffix,
                                  bit_depth=args.bits, dither=not args.no_dither,
                                  progress=progress("writing"))
    for layer, report in zip(made, reports, strict=True):
        print(f"{layer.name}: {report.summary()}")
    print(f"unmixed {args.file} by {method} into {len(made)} stems in {folder}",
          file=sys.stderr)
