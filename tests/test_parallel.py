"""Frames read by several processes (vision.parallel): real spawned workers, results in order,
errors at their place, a worker that dies named, and recognisers copied into workers reading
exactly as the original does."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from vision.evaluate import labelled_images
from vision.parallel import WorkerError, read_in_order
from vision.recognize import Recognizer, load_image

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def _scaled(state: int, item: int) -> tuple[int, int]:
    """An item times the state, and the worker's process id (13 refused where the state is 1)."""
    if item == 13 and state == 1:
        raise ValueError("thirteen is refused")
    return state * item, os.getpid()


def _dies_on_five(state: int, item: int) -> int:
    if item == 5:
        os._exit(3)  # a worker killed mid-frame (kill -9, the OOM killer)
    return item


def _sigint_ignored(state: None, item: int) -> bool:
    import signal

    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def _blas_threads(state: object, item: int) -> int:
    from threadpoolctl import threadpool_info

    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


def _read_sample(rec: Recognizer, path: Path) -> dict:
    result = rec.recognize(load_image(path))
    result.pop("elapsed_ms")
    return result


def test_results_come_in_the_order_of_the_items_from_several_processes() -> None:
    taken: list[int] = []

    def items():  # a generator: taken as the workers need them, not all at once
        for i in range(40):
            taken.append(i)
            yield i

    out = read_in_order(_scaled, items(), state=3, workers=2)
    first = next(out)
    assert first[0] == 0 and len(taken) < 40  # the first result before the last item
    rest = list(out)
    assert [v for v, _ in [first, *rest]] == [3 * i for i in range(40)]
    pids = {pid for _, pid in [first, *rest]}
    assert len(pids) == 2 and os.getpid() not in pids  # read by two workers, not here


def test_an_error_is_raised_at_its_item_after_the_ones_before() -> None:
    got = []
    with pytest.raises(ValueError, match="thirteen"):
        for value, _ in read_in_order(_scaled, range(20), state=1, workers=2):
            got.append(value)
    assert got == list(range(13))
    # one process: the same
    got = []
    with pytest.raises(ValueError, match="thirteen"):
        for value, _ in read_in_order(_scaled, range(20), state=1, workers=1):
            got.append(value)
    assert got == list(range(13))


def test_a_worker_that_dies_is_named_not_hung() -> None:
    got = []
    with pytest.raises(WorkerError, match="worker process died"):
        for value in read_in_order(_dies_on_five, range(12), state=None, workers=2):
            got.append(value)
    assert got == list(range(len(got))) and len(got) <= 5  # what came is whole and in order


def test_a_recogniser_copied_into_a_worker_reads_alike_with_its_settings() -> None:
    rec = Recognizer()
    rec.threshold = 0.9  # a setting changed after construction travels with it
    copy = pickle.loads(pickle.dumps(rec))
    assert copy.threshold == 0.9 and copy.session is not rec.session
    assert copy.gate_path == rec.gate_path and copy.gate_session is not None
    paths = [img for img, _ in labelled_images(SAMPLES)]
    here = [_read_sample(rec, p) for p in paths]
    assert list(read_in_order(_read_sample, paths, rec, workers=2)) == here
    # and the setting did travel: at the model's own 0.997 the samples read fewer cards
    # (41 against 54 at 0.9 when this was written)
    bundled = [_read_sample(Recognizer(), p) for p in paths]
    assert sum(len(r["cards"]) for r in here) > sum(len(r["cards"]) for r in bundled) > 0


def test_workers_leave_ctrl_c_to_the_main_process() -> None:
    """A terminal's Ctrl-C reaches every process of the group; a worker interrupted while it
    waits for a frame would print a traceback of its own, so workers ignore it and the main
    process stops the pool (tests/test_vision_cli.py: status 130, no worker left)."""
    import signal

    assert all(read_in_order(_sigint_ignored, range(4), state=None, workers=2))
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN  # not here


def test_a_single_threaded_recogniser_keeps_numpy_s_blas_on_one_thread() -> None:
    """BLAS threads on the pipeline's small matrix products only kept a second core busy
    (vision.recognize.one_blas_thread): a recogniser made for one thread, and its copy in a
    worker, leave numpy's BLAS one thread."""
    from threadpoolctl import threadpool_info, threadpool_limits

    if not any(i["user_api"] == "blas" for i in threadpool_info()):
        pytest.skip("numpy here has no BLAS threadpoolctl knows")
    threadpool_limits(2, user_api="blas")
    assert _blas_threads(None, 0) == 2
    rec = Recognizer()
    assert _blas_threads(None, 0) == 1
    assert list(read_in_order(_blas_threads, range(2), rec, workers=2)) == [1, 1]


_SLOW_START = '''
import sys, time
from vision.parallel import read_in_order


class SlowState:
    """A reading state that takes seconds to copy into a worker (as a recogniser opening
    its models does)."""

    def __init__(self):
        self.seconds = 3

    def __setstate__(self, state):
        time.sleep(state["seconds"])
        self.__dict__.update(state)


def read(state, item):
    return item


if __name__ == "__main__":
    print("reading", flush=True)
    try:
        print(list(read_in_order(read, range(4), SlowState(), workers=2)), flush=True)
    except KeyboardInterrupt:
        sys.exit(130)
'''


@pytest.mark.skipif(not hasattr(os, "killpg"),
                    reason="needs POSIX process groups, to send Ctrl-C as a terminal does")
def test_ctrl_c_while_a_worker_is_still_starting_prints_no_traceback(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the whole process group) while the workers are still taking in
    their copy of the reading state, before they could ignore it: SIGINT is held back in
    them from their spawn until they ignore it, so none prints a traceback; the main
    process stops."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "slow_start.py"
    script.write_text(_SLOW_START)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp_path, env=env,
                            start_new_session=True)
    assert proc.stdout.readline() == b"reading\n"
    time.sleep(1.5)  # the workers are spawned and still in their three seconds' copy
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err, err.decode()
    assert out == b""  # stopped: the list was never printed
