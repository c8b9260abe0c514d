"""How a local batch's worker processes start (``specpaint batch --jobs N``).

A worker started fresh (``spawn``) imports torch and the painting modules
itself: about a second on this machine's 2 cores, after the batch process has
spent the same importing them. Where the platform has one (Linux, macOS), the
workers are forked from a ``forkserver`` that has imported :mod:`app.batch.tasks`
once (forking a process that has never run torch's threads, nor touched a GPU,
is safe), and :func:`start_early` starts that server while the batch process
is still importing, so the two imports share the cores. This module imports
nothing heavy, so it can run before them.

Each worker paints with one thread, keeps the memory it frees for its next
stack (:func:`keep_heap`), leaves Ctrl+C to the batch and dies with it. A
forked worker's parent is the forkserver, which lives as long as any of its
children (they hold its pipe open), so a worker watching its parent
(``PR_SET_PDEATHSIG``) would outlive a batch killed with -9, and so would the
forkserver: each worker watches the batch itself (``parent_process()``, the
process that asked for it).
"""

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from contextlib import contextmanager

PRELOAD = ["app.batch.tasks"]  # what every worker needs, imported once by the forkserver
KEPT_HEAP = 256 << 20  # bytes: allocations up to this come from the heap, and as much freed stays
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


def pool_context():
    """The start method for worker processes: a forkserver with :data:`PRELOAD`
    imported where there is one, else spawn (never a fork of a process torch has
    threads in)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def start_early(device: str | None) -> None:
    """Start the forkserver now, when the batch will likely run worker processes on
    the CPU (``device``: the one asked for, or None for auto), so that it imports
    the painting modules while this process does. A guess that is wrong costs only
    time: on a GPU the forkserver is not started here (it would sit idle), and the
    pool starts it on its first worker wherever it was not."""
    asked = (device or os.environ.get("SPECPAINT_DEVICE") or "auto").lower()
    gpu = sys.platform == "darwin" or any(
        os.path.exists(p) for p in ("/proc/driver/nvidia/version", "/dev/kfd"))
    if asked == "cpu" or (asked == "auto" and not gpu):
        context = pool_context()
        if context.get_start_method() == "forkserver":
            import multiprocessing.forkserver

            with one_thread_each():
                multiprocessing.forkserver.ensure_running()


def worker_setup() -> None:
    """In each worker: one thread for painting (the processes share the cores), Ctrl+C
    left to the batch (which lets it finish its files), and death with the batch."""
    import torch

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)
    keep_heap()
    threading.Thread(target=_die_with, args=(multiprocessing.parent_process(),),
                     name="die with the batch", daemon=True).start()


def keep_heap() -> None:
    """Keep freed memory up to KEPT_HEAP for the next allocation, where the C library
    is glibc. By default glibc gives an allocation above 32 MiB back to the kernel when
    it is freed, and the next one is faulted in again page by page: a stack of 8 ten-second
    files' coefficients (56 MiB) took 27 ms to allocate and zero afresh, 3 ms reused,
    and a worker paints stacks of one shape one after another. Up to KEPT_HEAP of freed
    memory then stays with the worker (app.batch.memory reserves it)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(M_MMAP_THRESHOLD, KEPT_HEAP)
        libc.mallopt(M_TRIM_THRESHOLD, KEPT_HEAP)
    except (OSError, AttributeError):  # a C library without mallopt: its defaults stand
        pass


def _die_with(batch) -> None:
    """Wait for the batch (the process that started this worker, whichever start
    method) to end, then end this worker at once, as kill -9 would: a worker left
    painting after its batch was killed would write files no journal records."""
    batch.join()
    os._exit(1)


@contextmanager
def one_thread_each():
    """One thread a worker for every numeric library, in the environment the workers
    (and the forkserver) start with, read when the libraries load: OpenBLAS's threads
    (numpy's dot products) spin while they wait, and 2 workers with 2 threads each on
    2 cores took 10.5 s for 100 files against 6.4 s with one each."""
    names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update({name: "1" for name in names})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
