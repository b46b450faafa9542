"""Frames of the table serial protocol: CRC, encoding and an incremental parser.

Pure code, no I/O. A frame on the wire is::

    STX body ETX crc CR LF        (0x02 ... 0x03 XXXX 0x0D 0x0A)

where ``body`` is printable ASCII (at most :data:`MAX_BODY` bytes) of the form
``SEQ|TYPE|FIELD...`` and ``crc`` is the CRC-16/CCITT-FALSE of the body in four upper-case hex
digits (see ``shared/protocols/table-serial.md``).

Public interface:

- :func:`crc16` -- CRC-16/CCITT-FALSE of some bytes (``crc16(b"123456789") == 0x29B1``).
- :class:`Frame` -- one decoded frame (``seq``, ``type``, ``fields``); :meth:`Frame.encode`.
- :func:`encode_frame` -- the wire bytes for ``seq``, ``type`` and fields, validated.
- :class:`FrameError` -- a discarded frame: ``reason`` and ``seq`` (``None`` if unreadable);
  the receiver answers it with ``NAK`` when ``seq`` is not ``None``.
- :class:`FrameParser` -- ``feed(data) -> list[Frame | FrameError]``; bytes outside frames are
  discarded and counted in ``noise_bytes``; a new STX always resynchronises.
- :func:`next_seq` -- ``9999 -> 0`` wrapping increment.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass

STX = 0x02
ETX = 0x03
CR = 0x0D
LF = 0x0A
MAX_BODY = 200
SEQ_MODULUS = 10_000

_STX_B = b"\x02"
_ETX_B = b"\x03"
_TRAILER_LEN = 6  # four CRC digits, CR, LF
_HEX_UPPER = frozenset(b"0123456789ABCDEF")
_BODY_RE = re.compile(rb"(\d{4})\|([A-Z][A-Z0-9]*)((?:\|[\x20-\x7b\x7d\x7e]*)*)\Z")
_SEQ_RE = re.compile(rb"(\d{4})(?:\||\Z)")
_FIELD_RE = re.compile(r"[\x20-\x7b\x7d\x7e]*")


class FrameEncodeError(ValueError):
    """A frame that cannot be written: bad SEQ, TYPE or field, or a body that is too long."""


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final xor.

    >>> f"{crc16(b'123456789'):04X}"
    '29B1'
    """
    # binascii.crc_hqx is the non-reflected CRC-CCITT with a caller-chosen initial value.
    return binascii.crc_hqx(data, 0xFFFF)


def next_seq(seq: int) -> int:
    """The SEQ after ``seq``: one more, wrapping 9999 -> 0000."""
    return (seq + 1) % SEQ_MODULUS


@dataclass(frozen=True, slots=True)
class Frame:
    """One valid frame: its sequence number, type (e.g. ``"CARD"``) and fields (strings)."""

    seq: int
    type: str
    fields: tuple[str, ...] = ()

    @property
    def body(self) -> str:
        return "|".join((f"{self.seq:04d}", self.type, *self.fields))

    def encode(self) -> bytes:
        """The wire bytes of this frame (validated like :func:`encode_frame`)."""
        return encode_frame(self.seq, self.type, *self.fields)


@dataclass(frozen=True, slots=True)
class FrameError:
    """A frame that was discarded; ``seq`` is the SEQ if it could be read (answer with NAK)."""

    reason: str
    seq: int | None = None


def encode_frame(seq: int, type_: str, *fields: str) -> bytes:
    """Encode one frame; refuses anything the protocol does not allow.

    >>> encode_frame(3, "CARD", "7D", "120003")
    b'\\x020003|CARD|7D|120003\\x03D418\\r\\n'
    """
    if not isinstance(seq, int) or not 0 <= seq < SEQ_MODULUS:
        raise FrameEncodeError(f"SEQ must be 0..9999, not {seq!r}")
    if not re.fullmatch(r"[A-Z][A-Z0-9]*", type_ or ""):
        raise FrameEncodeError(f"bad frame TYPE {type_!r}")
    for f in fields:
        if not isinstance(f, str) or not _FIELD_RE.fullmatch(f):
            raise FrameEncodeError(f"bad field {f!r}: printable ASCII without '|' only")
    body = "|".join((f"{seq:04d}", type_, *fields)).encode("ascii")
    if len(body) > MAX_BODY:
        raise FrameEncodeError(f"frame body is {len(body)} bytes, at most {MAX_BODY} allowed")
    return b"\x02" + body + b"\x03" + b"%04X\r\n" % crc16(body)


def _readable_seq(body: bytes) -> int | None:
    m = _SEQ_RE.match(body)
    return int(m.group(1)) if m else None


class FrameParser:
    """Incremental frame parser: feed it bytes as they arrive, get frames and errors out.

    The parser never raises on input. Bytes outside a frame are discarded (counted in
    :attr:`noise_bytes`). A frame cut short by a new STX, too long, with a bad CRC, a malformed
    body or a bad trailer is reported as a :class:`FrameError`, and parsing resumes at the next
    STX.
    """

    __slots__ = ("_buf", "noise_bytes", "frames", "errors")

    def __init__(self) -> None:
        self._buf = bytearray()
        self.noise_bytes = 0
        self.frames = 0
        self.errors = 0

    def reset(self) -> None:
        """Forget any partial frame (e.g. after the port was reopened)."""
        self._buf.clear()

    def feed(self, data: bytes) -> list[Frame | FrameError]:
        """Consume ``data``; return the frames and errors completed by it, in order."""
        out: list[Frame | FrameError] = []
        buf = self._buf
        buf += data
        pos = 0
        n = len(buf)
        while pos < n:
            if buf[pos] != STX:
                start = buf.find(_STX_B, pos)
                if start < 0:
                    self.noise_bytes += n - pos
                    pos = n
                    break
                self.noise_bytes += start - pos
                pos = start
            # buf[pos] is STX: look for the end of the body (ETX) or a new STX.
            limit = min(n, pos + 1 + MAX_BODY + 1)
            etx = buf.find(_ETX_B, pos + 1, limit)
            stx = buf.find(_STX_B, pos + 1, etx if etx >= 0 else limit)
            if stx >= 0:
                out.append(FrameError("cut short by STX", _readable_seq(bytes(buf[pos + 1 : stx]))))
                self.errors += 1
                pos = stx
                continue
            if etx < 0:
                if limit - pos >= MAX_BODY + 2:
                    body = bytes(buf[pos + 1 : pos + 1 + MAX_BODY])
                    out.append(FrameError("body too long", _readable_seq(body)))
                    self.errors += 1
                    pos += 1  # the rest is discarded as noise up to the next STX
                    continue
                break  # need more bytes
            end = etx + 1 + _TRAILER_LEN
            trailer_stx = buf.find(_STX_B, etx + 1, min(end, n))
            body = bytes(buf[pos + 1 : etx])
            if trailer_stx >= 0:
                out.append(FrameError("cut short by STX", _readable_seq(body)))
                self.errors += 1
                pos = trailer_stx
                continue
            if end > n:
                break  # need more bytes
            out.append(self._decode(body, bytes(buf[etx + 1 : end])))
            pos = end
        del buf[:pos]
        return out

    def _decode(self, body: bytes, trailer: bytes) -> Frame | FrameError:
        crc_text = trailer[:4]
        if trailer[4] != CR or trailer[5] != LF:
            self.errors += 1
            return FrameError("bad trailer (no CR LF)", _readable_seq(body))
        if not all(c in _HEX_UPPER for c in crc_text):
            self.errors += 1
            return FrameError("bad CRC digits", _readable_seq(body))
        if int(crc_text, 16) != crc16(body):
            self.errors += 1
            return FrameError("CRC mismatch", _readable_seq(body))
        m = _BODY_RE.match(body)
        if m is None:
            self.errors += 1
            return FrameError("malformed body", _readable_seq(body))
        rest = m.group(3)
        fields = tuple(rest[1:].decode("ascii").split("|")) if rest else ()
        self.frames += 1
        return Frame(int(m.group(1)), m.group(2).decode("ascii"), fields)
