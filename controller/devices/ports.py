"""Byte-stream ports the link layer reads and writes.

A *port* is anything with ``read_some() -> bytes`` (wait up to a short timeout, return what
arrived, ``b""`` if nothing; raise ``OSError`` -- ``serial.SerialException`` is one -- when the
device is gone), ``write(data)`` and ``close()``, plus a ``name`` for messages.

- :class:`PyserialPort` -- the controller side: any pyserial URL (``/dev/ttyUSB0``,
  ``/dev/pts/5``, ``socket://host:port``, ``loop://``), opened with ``serial.serial_for_url``.
- :class:`PtyPort` -- the device side of a pseudo-terminal (``os.openpty``), used by the
  simulators; :attr:`PtyPort.slave_path` is what the controller opens.
- :class:`TcpListener` -- a listening TCP socket for the simulators; :meth:`TcpListener.accept`
  returns a :class:`SocketPort` for the next connection; :attr:`TcpListener.url` is what the
  controller opens (``socket://127.0.0.1:PORT``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import socket
import tty
from typing import Protocol

import serial

DEFAULT_READ_TIMEOUT = 0.05


class Port(Protocol):
    """What :class:`controller.devices.link.SerialLink` needs from a byte stream."""

    name: str

    def read_some(self) -> bytes: ...

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class PortClosedError(OSError):
    """The other end of the stream went away (EOF)."""


class PyserialPort:
    """A pyserial port opened from a URL; raises ``serial.SerialException`` if it can't open."""

    def __init__(
        self, url: str, read_timeout: float = DEFAULT_READ_TIMEOUT, baudrate: int = 115200
    ) -> None:
        self.name = url
        self._serial = serial.serial_for_url(
            url, baudrate=baudrate, timeout=read_timeout, write_timeout=2.0
        )

    def read_some(self) -> bytes:
        s = self._serial
        data = s.read(s.in_waiting or 1)
        if data:
            more = s.in_waiting
            if more:
                data += s.read(more)
        return data

    def write(self, data: bytes) -> None:
        self._serial.write(data)

    def close(self) -> None:
        self._serial.close()


def _read_fd(fd: int, timeout: float) -> bytes:
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return b""
    data = os.read(fd, 65536)
    if not data:
        raise PortClosedError(errno.EIO, "end of stream")
    return data


def _write_fd(fd: int, data: bytes, timeout: float) -> bool:
    """Write all of ``data`` to a non-blocking fd; False if it stayed full for ``timeout``."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            _, ready, _ = select.select([], [fd], [], timeout)
            if not ready:
                return False
            continue
        view = view[n:]
    return True


class PtyPort:
    """The device end (master) of a new pseudo-terminal, both ends in raw mode.

    The slave end stays open here too, so the master does not see EIO while no controller has
    the slave open. :meth:`close` closes both: the controller's reads then fail, exactly like an
    unplugged USB adapter.
    """

    def __init__(
        self, read_timeout: float = DEFAULT_READ_TIMEOUT, write_timeout: float = 0.5
    ) -> None:
        self._master, self._slave = os.openpty()
        tty.setraw(self._master)
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self.slave_path = os.ttyname(self._slave)
        self.name = f"pty master for {self.slave_path}"
        self._timeout = read_timeout
        self._write_timeout = write_timeout
        self._closed = False
        self.bytes_dropped = 0

    def read_some(self) -> bytes:
        if self._closed:
            raise PortClosedError(errno.EBADF, "pty closed")
        return _read_fd(self._master, self._timeout)

    def write(self, data: bytes) -> None:
        if self._closed:
            raise PortClosedError(errno.EBADF, "pty closed")
        # Nobody reading the slave (no controller attached): the bytes are lost, as on a wire.
        if not _write_fd(self._master, data, self._write_timeout):
            self.bytes_dropped += len(data)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            for fd in (self._master, self._slave):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def opener(self) -> PtyPort:
        """Use as a link's port factory: the pty itself (it cannot be reopened once closed)."""
        if self._closed:
            raise PortClosedError(errno.EBADF, "pty closed")
        return self


class SocketPort:
    """One accepted TCP connection."""

    def __init__(self, sock: socket.socket, read_timeout: float = DEFAULT_READ_TIMEOUT):
        self._sock = sock
        self._timeout = read_timeout
        try:
            peer = sock.getpeername()
            self.name = f"tcp {peer[0]}:{peer[1]}"
        except OSError:
            self.name = "tcp"

    def read_some(self) -> bytes:
        ready, _, _ = select.select([self._sock], [], [], self._timeout)
        if not ready:
            return b""
        data = self._sock.recv(65536)
        if not data:
            raise PortClosedError(errno.ECONNRESET, "connection closed by peer")
        return data

    def write(self, data: bytes) -> None:
        self._sock.sendall(data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()


class TcpListener:
    """A listening socket (``port=0`` picks a free one); one connection at a time."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, read_timeout: float = 0.05):
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self._sock.listen(1)
        self.host, self.port = self._sock.getsockname()[:2]
        self.url = f"socket://{self.host}:{self.port}"
        self._timeout = read_timeout
        self._closed = False

    def accept(self, timeout: float = 0.25) -> SocketPort:
        """Wait up to ``timeout`` for a connection; ``TimeoutError`` if none came."""
        if self._closed:
            raise PortClosedError(errno.EBADF, "listener closed")
        ready, _, _ = select.select([self._sock], [], [], timeout)
        if not ready:
            raise TimeoutError("no connection yet")
        conn, _ = self._sock.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return SocketPort(conn, self._timeout)

    def close(self) -> None:
        self._closed = True
        self._sock.close()
