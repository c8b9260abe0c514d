"""The ``specpaint`` command line: its parser, and the headless tools devices, info,
render, roundtrip, apply, repair, unmix, batch, features, compare, presets and demo (the
app itself is started by :mod:`app.main`).

Errors the user can act on print one line on stderr naming the file and the
problem, and exit with status 2; ``--debug`` shows the traceback instead.
Qt is imported only for the app, so the tools run on machines without a display.
"""

import argparse
import math
import os
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

from app.assets import DEMO
from app.cli import run_batch as cli_batch
from app.cli import run_compare as cli_compare
from app.cli import run_features as cli_features
from app.cli import run_repair as cli_repair
from app.cli import run_unmix as cli_unmix
from app.cli.progress_line import TerminalProgress

EXIT_USAGE = 2


def _clip_args(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument("--normalize", action="store_true", help="scale overs to -0.1 dBFS")
    group.add_argument("--limit", action="store_true", help="soft-limit overs below 0 dBFS")


def quality_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quality", type=float, default=None, metavar="Q",
                   help="Ogg Vorbis and MP3: 0 (smallest) to 10 (best), as oggenc counts "
                        "it (default: libsndfile's)")


def _clip_mode(args) -> str:
    return "normalize" if args.normalize else "limit" if args.limit else "report"


def _print_report(report, prefix: str = "") -> None:
    """An export's summary; overs written as they were get the options that tame them."""
    hint = "; use --normalize or --limit to avoid it" if report.clipped_samples and \
        report.action in ("clipped at full scale", "kept above 0 dBFS (float file)") else ""
    print(f"{prefix}{report.summary()}{hint}")


def _analysis_args(p: argparse.ArgumentParser) -> None:
    """The analysis options, one per setting of engine.transforms.settings."""
    from engine.transforms.settings import SETTINGS

    for s in SETTINGS:
        notes = [] if s.name == "transform" else [s.allowed()]
        notes += [] if s.default is None else [f"default {s.default}"]
        p.add_argument(s.flag, type=s.kind, default=s.default,
                       choices=s.choices if s.name == "transform" else None,
                       help=f"{s.transform + ': ' if s.transform else ''}{s.help} "
                            f"({'; '.join(notes)})")
    p.add_argument("--allow-truncated", action="store_true",
                   help="open the readable part of a cut-off file instead of refusing it")


def build_parser() -> argparse.ArgumentParser:
    from engine.view.colormaps import COLORMAPS

    parser = argparse.ArgumentParser(prog="specpaint", description="Paint on spectrograms.")
    parser.add_argument("--device", default=None,
                        help="auto (default), cpu, cuda, cuda:N or mps; or $SPECPAINT_DEVICE")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--stats", action="store_true",
                        help="print time per stage and peak memory at the end (stderr)")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("devices", help="the devices torch can see, the order, the one chosen")

    p = sub.add_parser("info", help="format, rate, channels, duration, peak, device")
    p.add_argument("file")

    p = sub.add_parser("render", help="write the spectrogram as a PNG")
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True, help="PNG file to write")
    p.add_argument("--colormap", default="viridis", choices=COLORMAPS)
    p.add_argument("--db-range", type=float, default=100.0, help="dB shown below the top")
    p.add_argument("--top-db", type=float, default=0.0, help="dB at the brightest colour")
    p.add_argument("--log-freq", action="store_true", help="logarithmic frequency axis")
    p.add_argument("--width", type=int, default=1920)
    p.add_argument("--height", type=int, default=None, help="default: one row per bin")
    p.add_argument("--channel", type=int, default=None, help="default: loudest of all")
    p.add_argument("--view", choices=("mel", "cqt", "vqt"), default=None,
                   help="a read-only nnAudio view instead of the paintable transform")
    _analysis_args(p)

    p = sub.add_parser("roundtrip", help="analyze, resynthesize and export")
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--bits", default=None, help="16, 24, 32 or float (default per format)")
    p.add_argument("--no-dither", action="store_true", help="no TPDF dither for 16-bit output")
    p.add_argument("--force", action="store_true", help="allow overwriting the source file")
    _clip_args(p)
    quality_arg(p)
    _analysis_args(p)

    p = sub.add_parser("apply", help="paint strokes on a file and export the result")
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--strokes", help="JSON stroke script")
    p.add_argument("--preset", help="preset for a quick --line stroke")
    p.add_argument("--brush", help="bare brush type for a quick --line stroke")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="override a parameter (repeatable)")
    p.add_argument("--line", help="straight stroke through seconds:Hz points, e.g. "
                   "1.0:1000,2.0:1000")
    p.add_argument("--channel", default=None, help="all, or a channel number")
    p.add_argument("--bits", default=None,
                   help="16, 24, 32 or float (default: the input's, where the format has it)")
    p.add_argument("--no-dither", action="store_true", help="no TPDF dither for 16-bit output")
    p.add_argument("--force", action="store_true", help="allow overwriting the source file")
    _clip_args(p)
    quality_arg(p)
    _analysis_args(p)

    sub.add_parser("presets", help="list built-in and user presets with their parameters")

    p = sub.add_parser("gui", help="open the desktop app (the default with no command)")
    p.add_argument("file", nargs="?", help="audio file or .spp project (default: the demo)")

    p = sub.add_parser("demo", help="render and round-trip the bundled demo into out/")
    p.add_argument("-o", "--output-dir", default="out")
    cli_batch.add_parser(sub, _analysis_args, quality_arg)
    cli_compare.add_parser(sub)
    cli_features.add_parser(sub)
    cli_repair.add_parser(sub, _analysis_args, quality_arg)
    cli_unmix.add_parser(sub, _analysis_args)
    return parser


def _open(args):
    from engine.model.document import Document
    from engine.transforms.settings import from_args

    doc = Document.open(args.file, **from_args(args), device=args.device,
                        allow_truncated=args.allow_truncated,
                        progress=(progress := TerminalProgress("analyzing")),
                        confirm=progress.warn_cost)
    for note in doc.audio.notes:
        print(f"specpaint: warning: {args.file}: {note}", file=sys.stderr)
    return doc


def cmd_devices(args) -> None:
    from engine.runtime.device import inventory

    print("\n".join(inventory(args.device)))


def cmd_info(args) -> None:
    from engine.io.audio import load
    from engine.runtime.device import describe, pick_device

    audio = load(args.file, progress=TerminalProgress("reading"))
    peak = audio.peak
    peak_db = f"{20 * math.log10(peak):.2f} dBFS" if peak > 0 else "silent"
    minutes, seconds = divmod(audio.duration, 60)
    print(f"file:        {args.file}")
    print(f"format:      {audio.format} {audio.subtype}")
    print(f"sample rate: {audio.sample_rate} Hz")
    print(f"channels:    {audio.channels}")
    print(f"duration:    {int(minutes)}:{seconds:06.3f} ({audio.frames} frames)")
    print(f"peak:        {peak_db}")
    print(f"device:      {describe(pick_device(args.device))}")
    for name, text in audio.metadata.tags.items():
        print(f"{name + ':':<13}{text}")
    if (bext := audio.metadata.broadcast) is not None:
        made = " ".join(filter(None, (bext["origination_date"], bext["origination_time"])))
        print(f"bext:        {bext['description']!r} from {bext['originator'] or '?'}"
              + (f", {made}" if made else ""))
        h, rest = divmod(bext["time_reference"] / audio.sample_rate, 3600)
        print(f"starts at:   {int(h):02d}:{int(rest // 60):02d}:{rest % 60:06.3f} after midnight "
              f"(time reference {bext['time_reference']} samples)")
    for index, frame, name in audio.metadata.markers:
        label = f"marker {index}:"
        print(f"{label:<13}{frame / audio.sample_rate:.3f} s{f' {name!r}' if name else ''}")
    if (inst := audio.metadata.instrument) is not None:
        loops = ", ".join(f"{start / audio.sample_rate:.3f}-{end / audio.sample_rate:.3f} s"
                          for _, start, end, _ in inst["loops"]) or "none"
        print(f"sampler:     root key {inst['basenote']}, loops {loops}")
    for note in audio.notes:
        print(f"note:        {note}")


def cmd_render(args) -> None:
    from engine.errors import ParameterError
    from engine.io.export import check_destination
    from engine.io.png import write_png

    out = Path(args.output)
    if out.suffix.lower() != ".png":
        raise ParameterError(f"{out}: the image must be a .png file")
    if args.channel is not None and args.channel < 0:
        raise ParameterError(f"--channel {args.channel}: channels are numbered from 0 (leave "
                             "--channel out for the loudest of all)")
    check_destination(out, Path(args.file), force=False)
    style = dict(colormap=args.colormap, top_db=args.top_db, range_db=args.db_range)
    if getattr(args, "view", None):
        image = _render_view(args, style)
    else:
        doc = _open(args)
        image = doc.render(width=args.width, height=args.height or doc.n_bins,
                           channel=args.channel, log_freq=args.log_freq, **style)
    cleared = write_png(image, out)
    print(f"wrote {out} ({image.shape[1]}x{image.shape[0]})" + (f"; {cleared}" if cleared else ""))


def _render_view(args, style):
    from engine.errors import ParameterError
    from engine.io.audio import load
    from engine.runtime.device import pick_device
    from engine.view import nnaudio_views as views

    audio = load(args.file, allow_truncated=args.allow_truncated,
                 progress=TerminalProgress("reading"))
    if args.channel is not None and not 0 <= args.channel < audio.channels:
        raise ParameterError(f"{args.file}: channel {args.channel} does not exist; the file "
                             f"has {audio.channels} channel(s), numbered 0 to {audio.channels - 1}")
    samples = audio.samples if args.channel is None else audio.samples[[args.channel]]
    mag = views.magnitude(samples, audio.sample_rate, args.view, device=pick_device(args.device))
    return views.render_view(mag, args.width, args.height or mag.shape[1], **style)


def cmd_roundtrip(args) -> None:
    """Analyse and resynthesize, streamed (engine.io.stream): nothing is painted, so no
    document is built."""
    from engine.io import stream
    from engine.io.audio import load
    from engine.io.export import check_destination, check_quality, export
    from engine.model.document import check_fits
    from engine.runtime.cost import confirm_cost
    from engine.runtime.device import pick_device
    from engine.transforms import make
    from engine.transforms.settings import from_args

    clip = _clip_mode(args)
    check_destination(Path(args.output), Path(args.file), args.force)
    check_quality(Path(args.output), args.quality)
    audio = load(args.file, allow_truncated=args.allow_truncated,
                 progress=TerminalProgress("reading"))
    for note in audio.notes:
        print(f"specpaint: warning: {args.file}: {note}", file=sys.stderr)
    transform = make(audio.sample_rate, device=pick_device(args.device), **from_args(args))
    progress = TerminalProgress("round trip")
    confirm_cost(audio, transform, resident=check_fits(audio, transform, streamed=True),
                 confirm=progress.warn_cost)
    wave, snr = stream.roundtrip(audio.samples, transform, progress=progress)
    report = export(wave, audio.sample_rate, args.output, bit_depth=args.bits,
                    source=args.file, force=args.force, clip=clip, dither=not args.no_dither,
                    quality=args.quality,
                    metadata=audio.metadata, layout=audio.layout,
                    progress=TerminalProgress("writing"))
    _print_report(report)
    print(f"round-trip SNR before writing: {snr:.1f} dB")


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return text  # a choice, or a word such as "-inf" or "all"


def _quick_stroke(args) -> dict:
    from engine.errors import ParameterError

    if not args.line or (args.preset is None) == (args.brush is None):
        raise ParameterError("give --strokes FILE, or --line with --preset or --brush")
    points = []
    for part in args.line.split(","):
        try:
            t, f = part.split(":")
            points.append([float(t), float(f)])
        except ValueError as e:
            raise ParameterError(f"--line: '{part}' is not seconds:Hz (e.g. 1.5:440)") from e
    settings = {}
    for item in args.set:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise ParameterError(f"--set: '{item}' is not NAME=VALUE (e.g. radius_hz=150)")
        settings[name.strip()] = _number(value.strip())
    stroke = {"points": points, "set": settings}
    stroke["preset" if args.preset else "brush"] = args.preset or args.brush
    if args.channel is not None:
        stroke["channel"] = _number(args.channel)
    return stroke


def cmd_apply(args) -> None:
    from app.session.editor import Editor, load_stroke_script
    from engine.errors import ParameterError
    from engine.io.export import check_destination, check_quality

    check_destination(Path(args.output), Path(args.file), args.force)
    check_quality(Path(args.output), args.quality)
    strokes = load_stroke_script(args.strokes) if args.strokes else [_quick_stroke(args)]
    editor = Editor(_open(args))
    try:
        count = editor.run_script(strokes)
    except ParameterError as e:
        raise ParameterError(f"{args.strokes or 'command line'}: {e}") from e
    for warning in editor.warnings:
        print(f"specpaint: warning: {args.strokes or 'command line'}: {warning}", file=sys.stderr)
    report = editor.export(args.output, bit_depth=args.bits, force=args.force,
                           quality=args.quality,
                           dither=not args.no_dither, clip=_clip_mode(args),
                           progress=TerminalProgress("writing"))
    painted = f"painted {count} of {len(strokes)} stroke(s)" if count else \
        f"nothing changed: none of the {len(strokes)} stroke(s) found anything to change"
    _print_report(report, f"{painted}; ")


def cmd_presets(args) -> None:
    from brushes.presets import all_presets
    from brushes.registry import get_brush

    for preset in all_presets().values():
        brush = get_brush(preset.brush)
        values, _ = brush.resolve(preset.params, preset.name)
        print(f"{preset.name}  [{preset.brush}]  {preset.path}")
        if preset.comment:
            print(f"    {preset.comment}")
        shown = [p for p in brush.params if p.name in preset.params] + \
            [p for p in brush.own if p.name not in preset.params]
        print("    " + ", ".join(f"{p.name}={values[p.name]}{p.unit and ' ' + p.unit}"
                                 for p in shown))
        for pname, curves in preset.inputs.items():
            for iname, curve in curves.items():
                print(f"    {pname} follows {iname}: {[list(pt) for pt in curve]}")


def cmd_demo(args) -> None:
    from engine.errors import OutputError
    from engine.io.audio import AudioError
    from engine.transforms.settings import defaults

    if not DEMO.exists():
        raise AudioError(f"{DEMO}: the bundled demo is missing; run `make demo` to make it")
    out = Path(args.output_dir)
    try:  # before anything is printed: no partial output
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{out}: cannot create the folder ({e.strerror}); give -o a folder "
                          "you can write to") from e
    if not os.access(out, os.W_OK | os.X_OK):
        raise OutputError(f"{out}: cannot write in this folder (read-only or not yours); give "
                          "-o a folder you can write to")
    common = dict(file=str(DEMO), **defaults(), allow_truncated=False, device=args.device)
    cmd_info(argparse.Namespace(**common))
    cmd_render(argparse.Namespace(**common, output=str(out / "demo.png"), width=1600,
                                  height=800, channel=None, colormap="magma", top_db=0.0,
                                  db_range=90.0, log_freq=True))
    cmd_roundtrip(argparse.Namespace(**common, output=str(out / "demo-roundtrip.wav"),
                                     bits=None, force=False, normalize=False, limit=False,
                                     no_dither=False, quality=None))


def _one_line_warnings(message, category, filename, lineno, file=None, line=None):
    print(f"specpaint: warning: {message}", file=sys.stderr)


def _with_default_command(argv: list[str]) -> list[str]:
    """``specpaint`` and ``specpaint FILE`` mean ``specpaint gui [FILE]``."""
    i = _command_at(argv)
    if i is None:
        return argv
    if i >= len(argv) or argv[i] not in (*COMMANDS, "gui"):
        return argv[:i] + ["gui"] + argv[i:]
    return argv


def _command_at(argv: list[str]) -> int | None:
    """Where the command's name is, or would be, in ``argv`` (past the global options);
    None when help is asked for."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] in ("-h", "--help"):
            return None
        i += 2 if argv[i] == "--device" else 1
    return i


def _command(argv: list[str]) -> str | None:
    i = _command_at(argv)
    return argv[i] if i is not None and i < len(argv) else None


Command = Callable[[argparse.Namespace], "int | None"]


def _no_gui(args) -> int:
    print("specpaint: error: the app starts from `specpaint` (app.main), not app.cli",
          file=sys.stderr)
    return EXIT_USAGE


COMMANDS: dict[str, Command] = {"devices": cmd_devices, "info": cmd_info, "render": cmd_render,
            "roundtrip": cmd_roundtrip, "apply": cmd_apply, "presets": cmd_presets,
            "demo": cmd_demo,
            "batch": lambda args: cli_batch.cmd_batch(args, _quick_stroke),
            "compare": cli_compare.cmd_compare, "features": cli_features.cmd_features,
            "repair": lambda args: cli_repair.cmd_repair(args, _open, TerminalProgress),
            "unmix": lambda args: cli_unmix.cmd_unmix(args, _open, TerminalProgress)}


def main(argv: list[str] | None = None, *, gui: Command | None = None) -> int:
    """Run one command; ``gui`` runs the ``gui`` command (the app: :mod:`app.main`
    gives it, so this wing never imports Qt)."""
    argv = _with_default_command(sys.argv[1:] if argv is None else argv)
    if _command(argv) == "batch":  # before the parser loads numpy and torch
        from app.batch.processes import prepare

        prepare()
    args = build_parser().parse_args(argv)
    from engine.errors import Cancelled, SpectroPaintError

    warnings.showwarning = _one_line_warnings
    started = time.perf_counter()
    try:
        command = (gui or _no_gui) if args.command == "gui" else COMMANDS[args.command]
        status = command(args)
    except BrokenPipeError:  # output piped into `head` and the like: not an error
        sys.stdout = open(os.devnull, "w")  # keep the exit-time flush quiet
        return 0
    except (SpectroPaintError, KeyboardInterrupt) as e:
        if args.debug:
            traceback.print_exc()
        if isinstance(e, (KeyboardInterrupt, Cancelled)):
            print("specpaint: cancelled; nothing was written", file=sys.stderr)
            return 130
        message = str(e)
        source = getattr(args, "file", None)
        if source and not message.startswith(str(source)) and str(source) not in message:
            message = f"{source}: {message}"
        print(f"specpaint: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    if args.debug:
        print(f"done in {time.perf_counter() - started:.2f} s", file=sys.stderr)
    if args.stats:
        from engine.runtime.stats import summary

        print("\n".join(summary(time.perf_counter() - started)), file=sys.stderr)
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
