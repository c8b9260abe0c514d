"""``specpaint repair``: a restoration module over a file or a region of it.

    specpaint repair declick take.wav -o fixed.wav --sensitivity 6
    specpaint repair denoise take.wav -o clean.wav --profile 0:0.4 --amount 15
    specpaint repair dehum take.wav -o quiet.wav --start 10 --end 70 --high 2000

Every module's settings become options here from their one declaration
(``app.session.repairs.MODULES``): ``amount_db`` is ``--amount``, an off/on choice
is a flag. One line says what was repaired; a module that finds nothing says
so on stderr and writes the input as it was (round-tripped).
"""

import json
import sys
from pathlib import Path


def flag(name: str) -> str:
    return "--" + name.removesuffix("_db").replace("_", "-")


def add_parser(sub, analysis_args, quality_arg) -> None:
    from app.session.repairs import MODULES

    p = sub.add_parser(
        "repair", help="de-noise, de-click, de-hum or de-clip a file (or a region of it)",
        description="Run a restoration module over a file or a region (time range, "
                    "optionally a band, a channel) and write the result. Modules: " +
                    "; ".join(f"{m.name}: {m.help}" for m in MODULES.values()))
    p.add_argument("module", choices=list(MODULES))
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--start", type=float, default=None, help="region start, seconds")
    p.add_argument("--end", type=float, default=None, help="region end, seconds")
    p.add_argument("--low", type=float, default=None, help="region's lowest frequency, Hz")
    p.add_argument("--high", type=float, default=None, help="region's highest frequency, Hz")
    p.add_argument("--channel", type=int, default=None, help="one channel (default: all)")
    p.add_argument("--profile", default=None, metavar="S:S",
                   help="denoise: a noise-only stretch to learn from, e.g. 0:0.5")
    seen = set()
    for module in MODULES.values():
        for param in module.params:
            if param.name in seen:
                continue
            seen.add(param.name)
            where = f"{module.name}: {param.help}"
            if param.choices == ("off", "on"):
                p.add_argument(flag(param.name), dest=param.name, action="store_const",
                               const="on", default=None, help=where)
            else:
                p.add_argument(flag(param.name), dest=param.name, default=None,
                               metavar=param.unit or "VALUE", help=f"{where} "
                               f"({param.describe_range()}, default {param.default})")
    p.add_argument("--json", action="store_true",
                   help="print the report (and each click or run repaired) as JSON")
    p.add_argument("--bits", default=None,
                   help="16, 24, 32 or float (default: the source's, where the format has it)")
    p.add_argument("--no-dither", action="store_true",
                   help="no TPDF dither for 16-bit output given by --bits (at the source's "
                        "depth there is none)")
    p.add_argument("--force", action="store_true", help="allow overwriting the source file")
    quality_arg(p)
    analysis_args(p)


def _profile(text: str | None):
    from engine.errors import ParameterError

    if text is None:
        return None
    try:
        a, b = (float(v) for v in text.split(":"))
    except ValueError as e:
        raise ParameterError(f"--profile: '{text}' is not START:END in seconds (e.g. "
                             "0:0.5)") from e
    return a, b


def cmd_repair(args, open_document, progress) -> None:
    from app.session.editor import Editor
    from app.session.repairs import MODULES
    from engine.errors import ParameterError
    from engine.io.export import check_destination, check_quality, same_depth

    check_destination(Path(args.output), Path(args.file), args.force)
    check_quality(Path(args.output), args.quality)
    module = MODULES[args.module]
    given = {p.name for m in MODULES.values() for p in m.params
             if getattr(args, p.name) is not None}
    foreign = sorted(given - {p.name for p in module.params})
    if foreign:
        raise ParameterError(f"{', '.join(flag(n) for n in foreign)}: not a setting of "
                             f"{module.name} (it has "
                             f"{', '.join(flag(p.name) for p in module.params)})")
    settings = {p.name: p.parse(getattr(args, p.name), flag(p.name)) for p in module.params
                if getattr(args, p.name) is not None}
    editor = Editor(open_document(args), history_limit=0)
    report = editor.repair(args.module, start=args.start, end=args.end, low=args.low,
                           high=args.high, channel=args.channel, profile=_profile(args.profile),
                           progress=progress(module.title.lower()), **settings)
    if not report.changed:
        print(f"specpaint: warning: {args.file}: {report.line()}", file=sys.stderr)
    # the source's depth unless told: what the repair left alone comes back as it was
    # (the source's own samples, on the grid of its depth: dither takes only the rest)
    depth = args.bits or same_depth(editor.doc.audio.subtype, Path(args.output))
    written = editor.export(args.output, bit_depth=depth, force=args.force, quality=args.quality,
                            dither=not args.no_dither, progress=progress("writing"))
    if args.json:
        print(json.dumps({"module": report.module, "changed": report.changed,
                          "summary": report.summary, "notes": report.notes,
                          "events": [{"seconds": t, "length_seconds": d, "channel": c}
                                     for t, d, c in report.events],
                          "output": str(args.output)}, indent=1))
    else:
        print(f"{report.line()}; {written.summary()}")
