"""What a command shows while it works, on stderr: a task's percentage
(:class:`TerminalProgress`) and the batch's live status (:class:`Status`: files/s,
MB/s, queues, memory, ETA), each one line rewritten in place on a terminal and
plain lines every so often otherwise (a log file, a CI job)."""

import os
import sys
import time

LINE_EVERY_S = 0.25  # terminal redraws
LOG_EVERY_S = 10.0  # plain lines


class TerminalProgress:
    """``label  42%`` on one rewritten line when stderr is a terminal; elsewhere (a log),
    after :meth:`warn_cost`, a line every 10 %."""

    def __init__(self, label: str):
        self.label, self.shown, self.last = label, sys.stderr.isatty(), -1
        self.every = 1  # percent between reports

    def __call__(self, fraction: float) -> None:
        pct = int(fraction * 100) // self.every * self.every
        if self.shown and pct != self.last:
            self.last = pct
            tty = sys.stderr.isatty()  # the line rewritten (carriage return), or one a step
            start, end = ("\r", "\n" if pct >= 100 else "") if tty else ("", "\n")
            print(f"{start}{self.label} {pct:3d}%", end=end, file=sys.stderr, flush=True)

    def warn_cost(self, text: str) -> bool:
        """The engine's ``confirm``: settings that cost much (engine.runtime.cost) are a warning
        line with the figures, and progress shows even off a terminal; work goes on."""
        print(f"specpaint: warning: {text}; Ctrl+C cancels", file=sys.stderr, flush=True)
        if not self.shown:
            self.shown, self.every = True, 10
        return True


def rss_bytes() -> int:
    """This process's resident memory now (Linux; 0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def device_memory() -> str:
    import torch  # loaded by then: the batch painted with it

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return f"{torch.cuda.memory_allocated() / 2**20:,.0f} MiB"
    return "-"


class Status:
    def __init__(self, total: int, skipped: int = 0, stream=None):
        self.stream = stream or sys.stderr
        self.on_terminal = self.stream.isatty()
        self.total, self.skipped = total, skipped
        self.done = self.failed = 0
        self.bytes = 0
        self.waiting = (0, 0)  # decoded, painted
        self.start = time.perf_counter()
        self.shown = 0.0
        self.peak_rss = 0

    def queues(self, decoded: int, painted: int) -> None:
        self.waiting = (decoded, painted)

    def finished(self, record) -> None:
        if record.status == "done":
            self.done += 1
        else:
            self.failed += 1
            where = "" if record.error.startswith(record.input) else f"{record.input}: "
            self._print(f"failed: {where}{record.error}")
        self.bytes += record.bytes
        self.peak_rss = max(self.peak_rss, rss_bytes())
        now = time.perf_counter()
        if now - self.shown >= (LINE_EVERY_S if self.on_terminal else LOG_EVERY_S) or \
                self.done + self.failed == self.total:
            self.shown = now
            self._show(self.line())

    def line(self) -> str:
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        count = self.done + self.failed
        rate = count / elapsed
        left = self.total - count
        eta = f"{left / rate:,.0f} s" if rate > 0 else "-"
        return (f"{count}/{self.total} files ({self.failed} failed"
                + (f", {self.skipped} done before" if self.skipped else "") + ")  "
                f"{rate:.1f} files/s  {self.bytes / 2**20 / elapsed:.1f} MB/s  "
                f"queued {self.waiting[0]}+{self.waiting[1]}  "
                f"RSS {rss_bytes() / 2**20:,.0f} MiB  device {device_memory()}  ETA {eta}")

    def _show(self, text: str) -> None:
        if self.on_terminal:
            self.stream.write("\r\x1b[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def _print(self, text: str) -> None:
        self.stream.write(("\r\x1b[K" if self.on_terminal else "") + text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.on_terminal:
            self.stream.write("\n")
            self.stream.flush()
