"""The link layer of the table serial protocol, shared by the shoe and the table I/O board.

One :class:`SerialLink` per device stream. It owns two threads:

- the *reader* opens the port (and reopens it, every ``reconnect_interval`` seconds, after the
  device disappeared), feeds bytes to a :class:`~controller.devices.frames.FrameParser`, answers
  every frame but ACK/NAK with ``ACK`` (bad frames with a readable SEQ with ``NAK``), suppresses
  a frame whose SEQ equals the last one accepted (re-ACKed, not delivered twice) and hands each
  accepted frame to ``on_frame``;
- the *worker* sends queued frames stop-and-wait (one unacknowledged frame at a time, so the
  receiver's last-SEQ duplicate rule is exact), resends after ``resend_after`` (250 ms) up to
  ``max_resends`` (5) times and then reports the link down, sends heartbeats every
  ``heartbeat_interval`` seconds if asked to (devices do; the controller does not), and reports
  the peer offline when no valid frame arrived for ``rx_timeout`` seconds (two missed 1 s
  heartbeats: 2.25 s by default on the controller side). A frame whose resends ran out is not
  dropped: it stays first in line and is resent every ``down_retry_interval`` (1 s) with the
  same SEQ, so nothing is lost and nothing is acted on twice; the link is reported up again
  when it is acknowledged. The receiver's last accepted SEQ survives reconnects (a frame resent
  after a replug is still suppressed); the one exception is a ``HELLO`` as the first frame on a
  newly opened port: it starts a new device session (a device that rebooted may begin again at
  0001), so it is accepted even if its SEQ equals the last one of the old session.

Public interface::

    link = SerialLink(port, on_frame=callback, on_status=callback, heartbeat_interval=None,
                      rx_timeout=2.25, resend_after=0.25, max_resends=5, reconnect_interval=0.5,
                      faults=None, name="shoe")
    link.open()            # optional: open the port now, raising LinkError if it can't
    link.start()           # start the threads (the reader opens the port if not yet open)
    d = link.send("LOCK", "ON")   # queue a frame; d.wait(timeout) -> True once ACKed
    link.online            # port open, peer heard within rx_timeout, last send acknowledged
    link.stats()           # LinkStats snapshot (counters)
    link.wait_idle(t)      # everything queued has been acknowledged (or failed)
    link.close()

``port`` is a pyserial URL (``/dev/ttyUSB0``, ``/dev/pts/5``, ``socket://host:port``,
``loop://``) or a callable returning a :class:`~controller.devices.ports.Port`.
``on_frame(Frame)`` and ``on_status(LinkStatus)`` are called from the link's threads; keep them
short (put events on a queue). An exception in a callback is logged, never kills the link.
"""

from __future__ import annotations

import abc
import collections
import dataclasses
import logging
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.devices.frames import (
    Frame,
    FrameError,
    FrameParser,
    encode_frame,
    next_seq,
)
from controller.devices.ports import DEFAULT_READ_TIMEOUT, Port, PyserialPort

log = logging.getLogger(__name__)

RESEND_AFTER = 0.25
MAX_RESENDS = 5
HEARTBEAT_INTERVAL = 1.0
#: Two missed one-second heartbeats, plus a little slack for scheduling.
RX_TIMEOUT = 2.25
RECONNECT_INTERVAL = 0.5
#: After the link was reported down, the unacknowledged frame is still resent this often.
DOWN_RETRY_INTERVAL = 1.0


class LinkError(OSError):
    """The port could not be opened."""


@dataclass(frozen=True, slots=True)
class LinkStatus:
    """The link came up (``online``) or went down, and why."""

    online: bool
    reason: str


@dataclass(slots=True)
class LinkStats:
    """Counters since the link was created (a snapshot when returned by ``stats()``)."""

    bytes_in: int = 0
    noise_bytes: int = 0
    frames_in: int = 0
    frames_accepted: int = 0
    duplicates: int = 0
    frame_errors: int = 0
    naks_sent: int = 0
    acks_sent: int = 0
    acks_received: int = 0
    naks_received: int = 0
    frames_sent: int = 0
    resends: int = 0
    send_failures: int = 0  # frames resent max_resends times unacknowledged, or dropped
    link_downs: int = 0
    port_opens: int = 0
    port_losses: int = 0
    callback_errors: int = 0


@dataclass(frozen=True, slots=True)
class FaultConfig:
    """Fault injection for simulators (rates are probabilities 0..1 per transmitted frame).

    ``noise``: random bytes written before the frame; ``corrupt``: one byte of the frame
    changed; ``duplicate``: the frame written twice; ``drop_acks``: a received ACK ignored.
    """

    noise: float = 0.0
    corrupt: float = 0.0
    duplicate: float = 0.0
    drop_acks: float = 0.0
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("noise", "corrupt", "duplicate", "drop_acks"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} rate must be between 0 and 1, not {value}")

    @property
    def active(self) -> bool:
        return any((self.noise, self.corrupt, self.duplicate, self.drop_acks))


class Delivery:
    """A frame queued for reliable delivery; :meth:`wait` until it was ACKed or gave up."""

    __slots__ = ("type", "fields", "seq", "attempts", "deadline", "ok", "error", "overdue", "_done")

    def __init__(self, type_: str, fields: tuple[str, ...]) -> None:
        self.type = type_
        self.fields = fields
        self.seq: int | None = None
        self.attempts = 0
        self.deadline = 0.0
        self.ok: bool | None = None
        self.error = ""
        self.overdue = False  # resent max_resends times without an ACK: link reported down
        self._done = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        """True once acknowledged; False if it was dropped or ``timeout`` passed first."""
        self._done.wait(timeout)
        return bool(self.ok)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def _finish(self, ok: bool, error: str = "") -> None:
        self.ok = ok
        self.error = error
        self._done.set()

    def __repr__(self) -> str:
        return f"Delivery({self.type}|{'|'.join(self.fields)} seq={self.seq} ok={self.ok})"


def _millis_since(start: float) -> Callable[[], tuple[str, ...]]:
    return lambda: (str(int((time.monotonic() - start) * 1000)),)


class SerialLink:
    """One device stream: framing, ACK/NAK, resend, duplicates, heartbeats, reconnection."""

    def __init__(
        self,
        port: str | Callable[[], Port],
        *,
        on_frame: Callable[[Frame], None],
        on_status: Callable[[LinkStatus], None] | None = None,
        name: str = "link",
        heartbeat_interval: float | None = None,
        heartbeat_fields: Callable[[], tuple[str, ...]] | None = None,
        rx_timeout: float | None = RX_TIMEOUT,
        resend_after: float = RESEND_AFTER,
        max_resends: int = MAX_RESENDS,
        reconnect_interval: float = RECONNECT_INTERVAL,
        down_retry_interval: float = DOWN_RETRY_INTERVAL,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        faults: FaultConfig | None = None,
        max_queue: int = 1000,
    ) -> None:
        if isinstance(port, str):
            url = port
            self._opener: Callable[[], Port] = lambda: PyserialPort(url, read_timeout)
            self.port_name = url
        else:
            self._opener = port
            self.port_name = getattr(port, "__qualname__", repr(port))
        self.name = name
        self._on_frame = on_frame
        self._on_status = on_status
        self._hb_interval = heartbeat_interval
        self._hb_fields = heartbeat_fields or _millis_since(time.monotonic())
        self._rx_timeout = rx_timeout
        self._resend_after = resend_after
        self._max_resends = max_resends
        self._reconnect_interval = reconnect_interval
        self._down_retry = down_retry_interval
        self._faults = faults if faults is not None and faults.active else None
        self._rng = random.Random(faults.seed if faults else None)
        self._max_queue = max_queue

        self._parser = FrameParser()
        self._stats = LinkStats()
        self._stats_lock = threading.Lock()
        self._cond = threading.Condition()  # guards queue/outstanding/port/silent
        self._write_lock = threading.Lock()  # one writer at a time; guards the tx SEQ
        self._status_lock = threading.RLock()
        self._queue: collections.deque[Delivery] = collections.deque()
        self._outstanding: Delivery | None = None
        self._port: Port | None = None
        self._tx_seq = 1
        self._last_accepted: int | None = None
        self._fresh_port = False  # no frame accepted yet since the port was (re)opened
        self._silent = False
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._next_hb = 0.0
        self._last_rx = 0.0
        # status
        self._port_open = False
        self._rx_alive = rx_timeout is None
        self._tx_ok = True
        self._online = False
        self._last_open_error = ""

    # ----------------------------------------------------------------- public

    def open(self) -> None:
        """Open the port now; :class:`LinkError` with a one-line reason if that fails."""
        if self._port is not None:
            return
        try:
            port = self._opener()
        except Exception as exc:  # pyserial raises SerialException, ValueError, OSError...
            raise LinkError(f"cannot open {self.port_name}: {exc}") from None
        self._attach(port)

    def start(self) -> None:
        """Start the reader and worker threads (idempotent)."""
        if self._threads:
            return
        # The first heartbeat comes one interval after start: HELLO goes first on power-up.
        self._next_hb = time.monotonic() + (self._hb_interval or 0.0)
        for target, suffix in ((self._run_reader, "reader"), (self._run_worker, "worker")):
            t = threading.Thread(target=target, name=f"{self.name}-{suffix}", daemon=True)
            t.start()
            self._threads.append(t)

    def close(self) -> None:
        """Stop the threads and close the port. Queued frames fail with 'link closed'."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=5)
        with self._cond:
            pending = list(self._queue)
            self._queue.clear()
            if self._outstanding is not None:
                pending.insert(0, self._outstanding)
                self._outstanding = None
            port, self._port = self._port, None
        for d in pending:
            d._finish(False, "link closed")
        if port is not None:
            self._close_port(port)
        self._set_status(port_open=False, reason="link closed")

    def send(self, type_: str, *fields: str, urgent: bool = False) -> Delivery:
        """Queue a frame for reliable delivery (validated now: FrameEncodeError if bad).

        ``urgent`` puts it at the head of the queue (behind only the one frame already awaiting
        its ACK): the board's LOCK ON uses it.
        """
        encode_frame(0, type_, *fields)  # validate before queueing
        d = Delivery(type_, tuple(fields))
        dropped: Delivery | None = None
        with self._cond:
            if self._stop.is_set():
                d._finish(False, "link closed")
                return d
            if len(self._queue) >= self._max_queue:
                dropped = self._queue.popleft()
            if urgent:
                self._queue.appendleft(d)
            else:
                self._queue.append(d)
            self._cond.notify_all()
        if dropped is not None:
            self._count("send_failures")
            dropped._finish(False, "send queue full")
            log.warning("%s: send queue full, dropped %r", self.name, dropped)
        return d

    @property
    def online(self) -> bool:
        return self._online

    @property
    def port_open(self) -> bool:
        """The port is open (the device may still be silent)."""
        return self._port is not None

    @property
    def silent(self) -> bool:
        return self._silent

    @silent.setter
    def silent(self, value: bool) -> None:
        """A silent link writes nothing and ignores what it reads (fault injection)."""
        with self._cond:
            self._silent = bool(value)
            if not value:
                now = time.monotonic()
                self._next_hb = now
                if self._outstanding is not None:
                    self._outstanding.deadline = now
            self._cond.notify_all()

    def stats(self) -> LinkStats:
        with self._stats_lock:
            snap = dataclasses.replace(self._stats)
        snap.noise_bytes = self._parser.noise_bytes
        return snap

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is queued or awaiting an ACK; False on timeout."""
        end = time.monotonic() + timeout
        with self._cond:
            while self._queue or self._outstanding is not None:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
        return True

    def wait_online(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not self._online:
            if time.monotonic() >= end:
                return False
            time.sleep(0.01)
        return True

    # --------------------------------------------------------------- internals

    def _count(self, name: str, n: int = 1) -> None:
        with self._stats_lock:
            setattr(self._stats, name, getattr(self._stats, name) + n)

    def _set_status(
        self,
        *,
        reason: str,
        port_open: bool | None = None,
        rx_alive: bool | None = None,
        tx_ok: bool | None = None,
    ) -> None:
        """Update the link state; report a change of ``online``. Never call holding _cond."""
        with self._status_lock:
            if port_open is not None:
                self._port_open = port_open
            if rx_alive is not None:
                self._rx_alive = rx_alive
            if tx_ok is not None:
                self._tx_ok = tx_ok
            online = self._port_open and self._rx_alive and self._tx_ok
            if online == self._online:
                return
            self._online = online
            if not online:
                self._count("link_downs")
            log.info("%s: link %s (%s)", self.name, "up" if online else "down", reason)
            if self._on_status is not None:
                try:
                    self._on_status(LinkStatus(online, reason))
                except Exception:
                    self._count("callback_errors")
                    log.exception("%s: status callback failed", self.name)

    def _attach(self, port: Port) -> None:
        with self._cond:
            self._port = port
            self._parser.reset()
            self._fresh_port = True
            d = self._outstanding
            if d is not None:
                d.deadline = time.monotonic()  # resend at once on the new connection
            tx_ok = d is None or not d.overdue
            self._cond.notify_all()
        self._count("port_opens")
        self._last_open_error = ""
        log.info("%s: opened %s", self.name, getattr(port, "name", self.port_name))
        rx = self._rx_timeout is None
        self._last_rx = time.monotonic()
        self._set_status(port_open=True, rx_alive=rx, tx_ok=tx_ok, reason="port opened")

    def _detach(self, port: Port, reason: str) -> None:
        with self._cond:
            if self._port is not port:
                return
            self._port = None
        self._close_port(port)
        self._count("port_losses")
        log.warning("%s: %s", self.name, reason)
        rx = self._rx_timeout is None
        self._set_status(port_open=False, rx_alive=rx, reason=reason)

    def _close_port(self, port: Port) -> None:
        try:
            port.close()
        except Exception:  # closing a vanished device may fail in many ways
            log.debug("%s: error closing port", self.name, exc_info=True)

    def _write(
        self,
        type_: str,
        fields: tuple[str, ...],
        seq: int | None = None,
        delivery: Delivery | None = None,
    ) -> int | None:
        """Write one frame now (a new SEQ unless ``seq`` is given); None if no port/silent.

        For a frame awaiting its ACK, ``delivery.seq`` is recorded, and the frame counted as
        sent (or resent), *before* the bytes go out: the peer may answer at once, and the
        reader matches its ACK against ``delivery.seq`` (and counts it).
        """
        failed: tuple[Port, Exception] | None = None
        counter = None
        with self._write_lock:
            port = self._port
            if port is None or self._silent:
                return None
            if seq is None:
                seq = self._tx_seq
                self._tx_seq = next_seq(seq)
            if delivery is not None and delivery.seq != seq:
                with self._cond:  # lock order: _write_lock, then _cond (never the reverse)
                    delivery.seq = seq
            data = encode_frame(seq, type_, *fields)
            if self._faults is not None:
                data = self._mangle(data)
            if delivery is not None:
                counter = "resends" if delivery.attempts else "frames_sent"
                self._count(counter)
            try:
                port.write(data)
            except Exception as exc:
                failed = (port, exc)
        if failed is not None:
            if counter is not None:
                self._count(counter, -1)  # it never went out
            self._detach(failed[0], f"port lost on write: {failed[1]}")
            return None
        return seq

    def _mangle(self, frame: bytes) -> bytes:
        f, rng = self._faults, self._rng
        assert f is not None
        out = frame
        if f.corrupt and rng.random() < f.corrupt:
            i = rng.randrange(len(frame))
            b = bytearray(frame)
            b[i] = (b[i] + rng.randrange(1, 256)) % 256
            out = bytes(b)
        if f.duplicate and rng.random() < f.duplicate:
            out = out + frame
        if f.noise and rng.random() < f.noise:
            out = rng.randbytes(rng.randrange(1, 24)) + out
        return out

    # reader --------------------------------------------------------------

    def _run_reader(self) -> None:
        while not self._stop.is_set():
            port = self._port
            if port is None:
                try:
                    port = self._opener()
                except Exception as exc:
                    msg = str(exc)
                    if msg != self._last_open_error:
                        log.info("%s: cannot open %s: %s", self.name, self.port_name, msg)
                        self._last_open_error = msg
                    if not isinstance(exc, TimeoutError):
                        self._stop.wait(self._reconnect_interval)
                    continue
                if self._stop.is_set():
                    self._close_port(port)
                    break
                self._attach(port)
            try:
                data = port.read_some()
            except Exception as exc:
                if not self._stop.is_set():
                    self._detach(port, f"port lost: {exc}")
                continue
            if data:
                self._on_bytes(data)

    def _on_bytes(self, data: bytes) -> None:
        self._count("bytes_in", len(data))
        if self._silent:
            return
        for item in self._parser.feed(data):
            if isinstance(item, FrameError):
                self._count("frame_errors")
                log.debug("%s: discarded frame: %s (seq %s)", self.name, item.reason, item.seq)
                if item.seq is not None:
                    self._write("NAK", (f"{item.seq:04d}",))
                    self._count("naks_sent")
                continue
            self._on_valid_frame(item)

    def _on_valid_frame(self, frame: Frame) -> None:
        self._count("frames_in")
        now = time.monotonic()
        self._last_rx = now
        if not self._rx_alive:
            self._set_status(rx_alive=True, reason="device speaking")
        if frame.type in ("ACK", "NAK"):
            self._on_ack_nak(frame, now)
            return
        self._write("ACK", (f"{frame.seq:04d}",))
        self._count("acks_sent")
        fresh, self._fresh_port = self._fresh_port, False
        new_session = fresh and frame.type == "HELLO"
        if frame.seq == self._last_accepted and not new_session:
            self._count("duplicates")
            return
        self._last_accepted = frame.seq
        self._count("frames_accepted")
        try:
            self._on_frame(frame)
        except Exception:
            self._count("callback_errors")
            log.exception("%s: frame callback failed for %s", self.name, frame)

    def _on_ack_nak(self, frame: Frame, now: float) -> None:
        if len(frame.fields) != 1 or not (len(frame.fields[0]) == 4 and frame.fields[0].isdigit()):
            self._count("frame_errors")
            log.debug("%s: malformed %s %s", self.name, frame.type, frame.fields)
            return
        seq = int(frame.fields[0])
        if frame.type == "ACK":
            self._count("acks_received")
            f = self._faults
            if f is not None and f.drop_acks and self._rng.random() < f.drop_acks:
                return
            done: Delivery | None = None
            with self._cond:
                d = self._outstanding
                if d is not None and d.seq == seq:
                    self._outstanding = None
                    done = d
                    self._cond.notify_all()
            if done is not None:
                done._finish(True)
                if done.overdue or not self._tx_ok:
                    self._set_status(tx_ok=True, reason=f"{done.type} SEQ {seq:04d} acknowledged")
        else:
            self._count("naks_received")
            with self._cond:
                d = self._outstanding
                if d is not None and d.seq == seq:
                    d.deadline = now  # resend at once
                    self._cond.notify_all()

    # worker --------------------------------------------------------------

    def _run_worker(self) -> None:
        while not self._stop.is_set():
            to_send: Delivery | None = None
            failed: Delivery | None = None  # just became overdue: report the link down
            went_offline = False
            with self._cond:
                now = time.monotonic()
                usable = self._port is not None and not self._silent
                d = self._outstanding
                # A heartbeat due now is queued first, so that it can go out in this pass
                # rather than on the next wake-up.
                if (
                    self._hb_interval is not None
                    and usable
                    and now >= self._next_hb
                ):
                    self._next_hb = now + self._hb_interval
                    hb_pending = (d is not None and d.type == "HB") or any(
                        q.type == "HB" for q in self._queue
                    )
                    if not hb_pending:
                        self._queue.append(Delivery("HB", ()))
                if d is not None and usable and now >= d.deadline:
                    if d.attempts > self._max_resends and not d.overdue:
                        d.overdue = True
                        failed = d
                    to_send = d
                elif d is None and usable and self._queue:
                    to_send = self._queue.popleft()
                    self._outstanding = to_send
                if (
                    self._rx_timeout is not None
                    and self._rx_alive
                    and not self._silent
                    and now - self._last_rx > self._rx_timeout
                ):
                    went_offline = True
                wait = 0.05
                if self._outstanding is not None and to_send is None:
                    wait = max(0.0, min(wait, self._outstanding.deadline - now))
                if to_send is None and not went_offline:
                    self._cond.wait(wait)
                    continue
            if failed is not None:
                self._count("send_failures")
                reason = (
                    f"no acknowledgement of {failed.type} SEQ {failed.seq:04d} after"
                    f" {self._max_resends} resends"
                    if failed.seq is not None
                    else f"could not send {failed.type}"
                )
                failed.error = reason
                log.warning("%s: %s; still resending every %.1f s", self.name, reason,
                            self._down_retry)
                self._set_status(tx_ok=False, reason=reason)
            if went_offline:
                self._set_status(
                    rx_alive=False, reason=f"nothing heard for {self._rx_timeout:.2f} s"
                )
            if to_send is not None:
                if to_send.type == "HB" and to_send.seq is None:
                    to_send.fields = self._hb_fields()
                seq = self._write(to_send.type, to_send.fields, to_send.seq, to_send)
                with self._cond:
                    if seq is not None:  # counted as sent or resent by _write
                        to_send.seq = seq
                        to_send.attempts += 1
                    overdue = to_send.attempts > self._max_resends
                    to_send.deadline = time.monotonic() + (
                        self._down_retry if overdue else self._resend_after
                    )


class DeviceClient(abc.ABC):
    """The controller's end of one serial device: a :class:`SerialLink` whose valid frames are
    decoded by :meth:`_decode` and passed on by :meth:`_deliver`, and whose status changes, like
    the device's events, go to ``on_event`` (or, without a callback, to the :attr:`events`
    queue). A frame the subclass cannot decode (its :attr:`protocol_error`) is counted in
    :attr:`protocol_errors` and logged, never delivered."""

    #: The exception the subclass's :meth:`_decode` raises for bad frame content.
    protocol_error: type[Exception] = ValueError

    def __init__(self, port: str | Callable[[], Port], on_event: Callable[[Any], None] | None,
                 name: str, link_options: dict[str, Any]) -> None:
        self.events: queue.Queue[Any] = queue.Queue()
        self._on_event = on_event or self.events.put
        self._lock = threading.Lock()
        self.name = name
        self.protocol_errors = 0
        link_options.setdefault("name", name)
        self.link = SerialLink(
            port, on_frame=self._handle_frame, on_status=self._on_event, **link_options
        )

    def _handle_frame(self, frame: Frame) -> None:
        try:
            event = self._decode(frame)
        except self.protocol_error as exc:
            with self._lock:
                self.protocol_errors += 1
            log.warning("%s protocol error (frame %04d): %s", self.name, frame.seq, exc)
            return
        if event is not None:
            self._deliver(event)

    @abc.abstractmethod
    def _decode(self, frame: Frame) -> Any:
        """One valid frame of this device as an event, or None (heartbeats)."""

    def _deliver(self, event: Any) -> None:
        """Note what the controller's end must remember of ``event``, then pass it on."""
        self._on_event(event)

    def start(self, require_open: bool = False) -> None:
        """Start the link; with ``require_open`` raise LinkError now if the port won't open."""
        if require_open:
            self.link.open()
        self.link.start()

    def close(self) -> None:
        self.link.close()

    @property
    def online(self) -> bool:
        return self.link.online
