"""Frames read by several processes at once, the results in the order the frames came.

A lab scores suites of thousands of frames (``monster-match vision-eval``, ``recognize``). One
core reads a 720p frame in about 60 ms, so ten thousand frames take some ten minutes on one
core and a fraction of that on all of them. Each worker process is spawned (a fork of a process
whose OpenCV or onnxruntime threads have run can deadlock) and holds its own copy of the
reading state, typically a :class:`vision.recognize.Recognizer`: pickled without its
onnxruntime sessions, which each worker opens again with the same settings and checks as any
process does (:mod:`vision.kernels`). So every frame is read exactly as one process reads it:
the same cards, confidences and corners, in the same order; only the wall time differs.

    >>> from vision.parallel import read_in_order
    >>> list(read_in_order(pow, [1, 2, 3], state=2, workers=1))   # pow(state, item)
    [2, 4, 8]
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Frames handed out ahead of the one awaited, per worker: enough to keep every worker busy
#: while the results are written in order, few enough that a long video's frames, decoded
#: here and sent to the workers, do not pile up in memory.
AHEAD_PER_WORKER = 2

_STATE: list[Any] = [None]  # the worker's own copy of the reading state


class WorkerError(RuntimeError):
    """A worker process died (killed, out of memory) before it returned a frame's read."""


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the OS says, else all)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _start(state: Any) -> None:
    import signal

    import cv2

    # Ctrl-C reaches the terminal's whole process group: the main process stops the pool
    # (what has not started is cancelled, the frames being read finish), and a worker
    # interrupted too would only print a traceback of its own. Until here SIGINT was held
    # back (_sigint_held: a worker takes in its copy of the state, opening its models,
    # before this runs); one that came meanwhile is dropped as it is let through.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    cv2.setNumThreads(1)  # one core a worker: the processes are the parallelism
    _STATE[0] = state


@contextmanager
def _sigint_held() -> Iterator[None]:
    """SIGINT held back (blocked) in this thread for the block, and one that came meanwhile
    delivered after it. A worker spawned in the block starts with it held back (a signal
    mask outlives fork and exec) until :func:`_start` ignores it: Ctrl-C while a worker
    still takes in its copy of the state would otherwise print that worker's traceback."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):  # (Windows: no signal masks)
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _run(read: Callable[[Any, T], R], item: T) -> R:
    return read(_STATE[0], item)


def read_in_order(read: Callable[[Any, T], R], items: Iterable[T], state: Any,
                  workers: int = 1) -> Iterator[R]:
    """``read(state, item)`` for each of ``items``, yielded in their order.

    With ``workers`` 1, in this process on ``state`` itself. With more, in that many spawned
    processes, each given a pickled copy of ``state`` once: ``read`` must then be a function
    a worker can import (defined at a module's top level), and ``read``'s items and results
    picklable. An exception ``read`` raises is raised here, at its item's place; so a caller
    that wants the other items read returns its errors as values. Items are taken from
    ``items`` as workers need them (:data:`AHEAD_PER_WORKER`), so ``items`` may be a long
    generator. A generator closed early (the reader of the output left) cancels what has not
    started and waits for the frames being read.
    """
    if workers <= 1:
        for item in items:
            yield read(state, item)
        return
    pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=_start,
                               initargs=(state,))
    pending: deque[Future] = deque()
    try:
        for item in items:
            with _sigint_held():  # (a submit may spawn a worker)
                pending.append(pool.submit(_run, read, item))
            if len(pending) > AHEAD_PER_WORKER * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BrokenProcessPool:
        raise WorkerError("a worker process died before it returned its frame (killed, or "
                          "out of memory); the results before it are complete") from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
