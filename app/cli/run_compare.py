"""``specpaint compare REF TEST``: the front of :mod:`engine.measure.comparison`."""

import json
import math
import sys

LABELS = {"snr_db": ("SNR", "dB"), "si_sdr_db": ("SI-SDR", "dB"),
          "lsd_db": ("log-spectral distance", "dB"), "mrstft": ("multi-resolution STFT", ""),
          "mel_db": ("mel distance", "dB"), "pesq_wb": ("PESQ-WB", "(1-4.64)"),
          "stoi": ("STOI", "(0-1)")}


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="how far TEST is from REF: SNR, SI-SDR, spectral and "
                                       "perceptual distances")
    p.add_argument("ref", metavar="REF")
    p.add_argument("test", metavar="TEST")
    p.add_argument("--channel", type=int, default=None,
                   help="compare this channel of each (default: all, averaged)")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")


def cmd_compare(args) -> None:
    from engine.errors import ParameterError
    from engine.io.audio import load
    from engine.measure.comparison import aligned, compare, finite_or_none

    ref, test = load(args.ref), load(args.test)
    notes = [f"{args.ref}: {n}" for n in ref.notes] + [f"{args.test}: {n}" for n in test.notes]
    samples = test.samples
    if test.sample_rate != ref.sample_rate:
        try:
            import soxr
        except ImportError as e:
            raise ParameterError(f"{args.test} is at {test.sample_rate} Hz and {args.ref} at "
                                 f"{ref.sample_rate} Hz; resampling needs soxr "
                                 "(pip install 'spectropaint[metrics]')") from e
        samples = soxr.resample(samples.T, test.sample_rate, ref.sample_rate, "VHQ").T
        notes.append(f"TEST resampled from {test.sample_rate} to {ref.sample_rate} Hz (soxr)")
    x, y, cut = aligned(ref.samples, samples, ref_name="REF", test_name="TEST",
                        channel=args.channel)
    result = compare(x, y, ref.sample_rate)
    notes += cut + result.notes
    if args.json:
        print(json.dumps({"ref": args.ref, "test": args.test, "sample_rate": ref.sample_rate,
                          "metrics": {k: finite_or_none(v) for k, v in result.metrics.items()},
                          "notes": notes}, indent=1))
        return
    for key, value in result.metrics.items():
        name, unit = LABELS[key]
        shown = "n/a" if value is None else "undefined" if math.isnan(value) else \
            f"{value:.3f}" if math.isfinite(value) else f"{value}"
        print(f"{name:<24}{shown:>10} {unit}")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
