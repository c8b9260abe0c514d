"""How a local batch's worker processes start (``specpaint batch --jobs N``).

A worker started fresh (``spawn``) imports torch and the painting modules
itself: about 2 s of CPU on this machine, after the batch process has spent the
same importing them. On Linux the workers are forked from the batch process
itself once it has imported them, while it is still one thread: forking a
process that has never run torch's threads, nor touched a GPU, is safe, and a
worker then costs milliseconds and no import. :func:`prepare` makes the numeric
libraries load without their thread pools (OpenBLAS starts its threads when numpy
loads), and :func:`pool_context` forks only from a process of one thread on a
machine without a GPU driver. Elsewhere (another platform, a GPU machine, a
process with threads already: a test's), the workers are forked from a
``forkserver`` that has imported :data:`PRELOAD` once, or spawned. This module
imports nothing heavy, so it can run before them.

Each worker paints with one thread, keeps the memory it frees for its next
stack (:func:`keep_heap`), leaves Ctrl+C to the batch and dies with it: each
watches the batch process (``parent_process()``, the process that asked for it;
a worker of a forkserver would outlive a batch killed with -9 if it watched its
own parent, the forkserver, which lives as long as any of its children).
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
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def pool_context():
    """The start method for worker processes: a fork of this process where that is
    safe (Linux, one thread, no GPU driver: a process that asked torch about a GPU may
    have started CUDA, which a fork cannot use), else a forkserver with
    :data:`PRELOAD` imported where there is one, else spawn (never a fork of a
    process torch has threads in)."""
    if sys.platform.startswith("linux") and _threads() == 1 and not gpu_driver_present():
        return multiprocessing.get_context("fork")
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def _threads() -> int:
    """This process's threads (0 where /proc does not say)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


def prepare() -> None:
    """In a batch process, before numpy and torch load: have them load with one
    thread each (:data:`ONE_THREAD`), so that the workers can be forked from this
    process (no OpenBLAS thread started; where no GPU driver is present) and paint
    with one thread each. A batch process that paints itself (``--jobs 1``, a GPU)
    then has one thread too: one or two made no difference on 2 cores (docs/batch.md).
    Where they are loaded already (a caller's process: a test), nothing changes, not
    even the environment its later children get."""
    if "numpy" not in sys.modules and "torch" not in sys.modules:
        os.environ.update(ONE_THREAD)


def gpu_driver_present() -> bool:
    """Whether this machine may have a GPU torch can use (an NVIDIA or ROCm driver, or
    a Mac), found without importing torch."""
    return sys.platform == "darwin" or any(
        os.path.exists(p) for p in ("/proc/driver/nvidia/version", "/dev/kfd"))


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
    memory then stays with the worker (app.batch.budget reserves it)."""
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
    saved = {name: os.environ.get(name) for name in ONE_THREAD}
    os.environ.update(ONE_THREAD)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
