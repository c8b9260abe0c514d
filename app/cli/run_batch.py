"""``specpaint batch``: the command-line front of :mod:`app.batch.jobs`. What paints
the files (worker processes on the CPU, a GPU, or a GPU fed by CPU processes) is
chosen by app.batch.plan unless --device forces one, and said in one line.

Exit status: 0 when every file was painted and written, 1 when some failed
(each is in the journal and the report with its error), 2 on a usage error
(nothing is started), 130 when cancelled (finished files are kept; run again
with ``--resume`` to go on).
"""

import contextlib
import math
import os
import sys
import time
from pathlib import Path

EXIT_SOME_FAILED, EXIT_CANCELLED = 1, 130


def add_parser(sub, analysis_args, quality_arg) -> None:
    p = sub.add_parser(
        "batch", help="paint the same strokes on many files",
        description="Paint a stroke script (or one --line stroke) on every file given: files, "
                    "folders (recursively) and globs. Outputs mirror the inputs under "
                    "OUTDIR. Exit status 0: all done; 1: some files failed (see "
                    "batch-report.json); 2: usage error; 130: cancelled (--resume goes on).")
    p.add_argument("inputs", nargs="+", metavar="INPUT")
    p.add_argument("-o", "--output-dir", required=True, metavar="OUTDIR")
    p.add_argument("--strokes", help="JSON stroke script")
    p.add_argument("--preset", help="preset for a quick --line stroke")
    p.add_argument("--brush", help="bare brush type for a quick --line stroke")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="parameter of the --line stroke (repeatable)")
    p.add_argument("--line", help="straight stroke through seconds:Hz points, e.g. 0:60,10:60")
    p.add_argument("--repair", action="append", default=[], metavar="NAME[:K=V,...]",
                   help="a restoration module over each whole file before the strokes, e.g. "
                        "declick:sensitivity=6 or dehum (repeatable)")
    p.add_argument("--repair-after", action="append", default=[], metavar="NAME[:K=V,...]",
                   help="the same, after the strokes")
    p.add_argument("--channel", default=None, help="all, or a channel number")
    p.add_argument("--format", default=None, help="write wav, flac, aiff, ogg, caf, w64, ... "
                                                  "(default: the input's format)")
    p.add_argument("--bits", default=None, help="16, 24, 32 or float (default: the input's)")
    p.add_argument("--no-dither", action="store_true", help="no TPDF dither for 16-bit output")
    quality_arg(p)
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes painting at once (default: what --device auto "
                        "chooses and says: one per CPU core as the memory allows, or one "
                        "process on a GPU, fed by the other cores where that is faster); "
                        "1: one process, a pipeline of threads")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run on a Dask cluster (tcp://host:port); needs spectropaint[cluster]")
    p.add_argument("--connect-timeout", type=float, default=20.0, metavar="SECONDS",
                   help="how long to wait for the --scheduler to answer (default: 20)")
    p.add_argument("--resume", action="store_true",
                   help="skip the files the journal in OUTDIR records as done")
    analysis_args(p)


def analysis(args) -> dict:
    from engine.transforms.settings import from_args

    return {**from_args(args), "device": args.device}


def repair_step(text: str) -> dict:
    """``NAME[:K=V,...]`` as a stroke script's repair step, each value read as the
    module declares it (a number, or a word such as ``50`` for de-hum's fundamental)."""
    from app.session.repairs import get_module
    from engine.errors import ParameterError

    name, _, rest = text.partition(":")
    module = get_module(name.strip(), f"--repair {text}")
    params = {p.name: p for p in module.params}
    settings = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ParameterError(f"--repair: '{item}' is not K=V (e.g. declick:sensitivity=6)")
        if key not in params:
            raise ParameterError(f"--repair {text}: {module.name} has no setting {key}; it "
                                 f"has {', '.join(params)}")
        settings[key] = params[key].parse(value, f"--repair {text}: {key}")
    return {"repair": module.name, "set": settings}


def cmd_batch(args, quick_stroke) -> int:
    from app.batch.cluster import check_in_worker, worker_pool
    from app.batch.jobs import Settings, check_outputs, find_jobs, output_suffix
    from app.batch.plan import GPU_DECODERS
    from app.batch.stacks import check_settings
    from app.session.editor import checked_script, load_stroke_script, with_presets_resolved
    from engine.errors import ParameterError

    if args.jobs is not None and args.jobs < 1:
        raise ParameterError(f"--jobs {args.jobs}: give 1 or more")
    if not math.isfinite(args.connect_timeout) or args.connect_timeout <= 0:
        raise ParameterError(f"--connect-timeout {args.connect_timeout:g}: give a positive "
                             "number of seconds")
    strokes = load_stroke_script(args.strokes) if args.strokes else \
        [quick_stroke(args)] if args.line or args.preset or args.brush else []
    strokes = [repair_step(r) for r in args.repair] + strokes + \
        [repair_step(r) for r in args.repair_after]
    if not strokes:
        raise ParameterError("give --strokes FILE, --line with --preset or --brush, or "
                             "--repair NAME")
    try:  # checked as apply checks it (app.session.editor.checked_script)
        strokes = with_presets_resolved(strokes)
    except ParameterError as e:
        raise ParameterError(f"{args.strokes or 'command line'}: {e}") from e
    settings = Settings(strokes, analysis(args), args.bits, not args.no_dither,
                        quality=args.quality)
    checked_script(settings.strokes)  # its mistakes first, before the files are looked for
    outdir = Path(args.output_dir)
    suffix = output_suffix(args.format)
    skipped: list[str] = []  # dangling links, FIFOs: said, and listed in the report
    jobs = find_jobs(args.inputs, outdir, suffix, skipped)
    if skipped:
        print(f"specpaint: skipped {skipped[0]}" + (f" and {len(skipped) - 1} more" if
              len(skipped) > 1 else "") + " (not files; listed in the report)", file=sys.stderr)
    check_outputs(jobs, args.bits, args.quality)
    plan = None if args.scheduler else _plan(args, settings, jobs)
    with contextlib.ExitStack() as running:
        pool = running.enter_context(worker_pool(plan.workers)) \
            if plan is not None and plan.workers > 1 else None
        if pool is not None and plan.mode != GPU_DECODERS:  # the workers start with it
            check_in_worker(pool, settings)
        else:  # a bad script or setting stops here, before any file
            check_settings(settings)
        return _run(args, settings, jobs, plan, pool=pool, skipped=skipped)


def _plan(args, settings, jobs):
    """What paints the batch (app.batch.plan), said in one line; the device the files
    are painted on goes into ``settings``."""
    from app.batch.probe import measured_plan
    from engine.runtime.device import ENV_VAR, pick_device

    asked = (args.device or os.environ.get(ENV_VAR) or "auto").strip().lower()
    if asked != "auto":
        asked = str(pick_device(asked))  # a device this machine has, or a one-line error
    plan = measured_plan(jobs, settings, asked=asked, processes=args.jobs)
    print(plan.line(), file=sys.stderr)
    settings.analysis["device"] = plan.device
    return plan


def _run(args, settings, jobs, plan, *, pool, skipped: list[str]) -> int:
    """The batch, its settings checked: run the files not done yet (on ``pool``'s
    processes where there is one, as ``plan`` says), journal and report."""
    from app.batch.jobs import Journal, keep_settings, output_suffix, write_report
    from app.batch.pipeline import run_local
    from app.batch.plan import GPU_DECODERS
    from app.cli.progress_line import Status

    outdir, suffix = Path(args.output_dir), output_suffix(args.format)
    outdir.mkdir(parents=True, exist_ok=True)
    keep_settings(outdir, settings, suffix, args.resume)
    journal = Journal(outdir, args.resume)
    todo = [j for j in jobs if not journal.done(j)]
    if changed := [j for j in todo if journal.changed(j)]:
        print(f"specpaint: {changed[0].input}" + (f" and {len(changed) - 1} more" if
              len(changed) > 1 else "") + " changed since painted; painting again",
              file=sys.stderr)
    status = Status(len(todo), skipped=len(jobs) - len(todo))
    started = time.perf_counter()
    try:
        if args.scheduler:
            from app.batch.cluster import run_cluster

            run_cluster(args.scheduler, todo, settings, journal, status,
                        connect_timeout=args.connect_timeout)
        elif pool is not None and plan.mode == GPU_DECODERS:
            run_local(todo, settings, journal, status, helpers=pool)
        elif pool is not None and len(todo) > 1:
            from app.batch.cluster import run_processes

            run_processes(todo, settings, journal, status, workers=plan.workers, pool=pool)
        else:
            run_local(todo, settings, journal, status)
    except KeyboardInterrupt:
        status.close()
        report = write_report(outdir, jobs, journal, time.perf_counter() - started,
                              skipped=skipped)
        print(f"specpaint: cancelled after {report['done']} of {report['total']} file(s); "
              f"they are kept. Run again with --resume to go on.", file=sys.stderr)
        return EXIT_CANCELLED
    finally:
        journal.close()
    status.close()
    report = write_report(outdir, jobs, journal, time.perf_counter() - started,
                              skipped=skipped)
    print(f"{report['done']} of {report['total']} file(s) done, {report['failed']} failed, "
          f"in {report['seconds']:.1f} s; report: {outdir / 'batch-report.json'}")
    if args.stats:
        print("files' stages, summed over workers: " + ", ".join(
            f"{name} {total:.2f} s" for name, total in report["stage_seconds"].items()),
            file=sys.stderr)
    return EXIT_SOME_FAILED if report["failed"] else 0

