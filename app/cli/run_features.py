"""``specpaint features``: the front of :mod:`app.batch.feature_jobs`."""

import sys
from pathlib import Path

from app.cli.progress_line import TerminalProgress


def add_parser(sub) -> None:
    p = sub.add_parser("features", help="log-mel features of many files into a memory-mapped "
                                        "array, a mapping table and a manifest")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="files, folders or globs")
    p.add_argument("-o", "--output-dir", required=True, metavar="OUTDIR")
    p.add_argument("--sr", type=int, default=4096, help="resample to this rate (4096)")
    p.add_argument("--n-fft", type=int, default=64)
    p.add_argument("--hop", type=int, default=16)
    p.add_argument("--n-mels", type=int, default=32)
    p.add_argument("--segment", default="1024:512", metavar="LENGTH:HOP",
                   help="segment length and hop in samples at --sr (1024:512)")
    p.add_argument("--subsegment", default=None, metavar="LENGTH:HOP",
                   help="cut each segment again (e.g. 512:256)")
    p.add_argument("--dtype", default="float16", choices=("float16", "float32"))
    p.add_argument("--pool", default=None, choices=("mean", "max"),
                   help="reduce each item's frames to one (the mean or the max of their dB): "
                        "features [items, n_mels, 1]")


def _pair(text: str | None, option: str) -> tuple[int | None, int | None]:
    from engine.errors import ParameterError

    if text is None:
        return None, None
    try:
        length, hop = (int(v) for v in text.split(":"))
    except ValueError as e:
        raise ParameterError(f"{option} {text}: give LENGTH:HOP in samples, e.g. 1024:512") from e
    return length, hop


def cmd_features(args) -> int:
    from app.batch.feature_jobs import extract
    from app.batch.jobs import find_jobs
    from engine.measure.logmel import FeatureSettings
    from engine.runtime.device import pick_device

    segment, segment_hop = _pair(args.segment, "--segment")
    sub, sub_hop = _pair(args.subsegment, "--subsegment")
    settings = FeatureSettings(args.sr, args.n_fft, args.hop, args.n_mels, segment, segment_hop,
                               sub, sub_hop, args.dtype, args.pool)
    settings.check()
    skipped: list[str] = []  # dangling links, FIFOs: said, and listed in the manifest
    paths = [job.input for job in find_jobs(args.inputs, Path(args.output_dir),
                                            skipped=skipped)]
    for what in skipped:
        print(f"specpaint: warning: skipped {what} (not a file)", file=sys.stderr)
    manifest = extract(paths, Path(args.output_dir), settings, pick_device(args.device),
                       progress=TerminalProgress("features"), skipped=skipped)
    failed = [f for f in manifest["files"] if "error" in f]
    for f in failed:
        print(f"specpaint: warning: {f['path']}: {f['error']}", file=sys.stderr)
    for note in manifest.get("notes", []):  # what a killed run had left
        print(f"specpaint: note: {note}", file=sys.stderr)
    shape = manifest["features"]["shape"]
    pooled = f", {args.pool} of {settings.frames} frames" if args.pool else ""
    print(f"{len(paths) - len(failed)} of {len(paths)} file(s): {shape[0]} items of "
          f"{shape[1]} mels x {shape[2]} frame(s) ({settings.dtype}{pooled}) in {args.output_dir}")
    return 1 if failed else 0
