"""Frames, CRC and the incremental parser (pure; no I/O)."""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.devices.frames import (
    MAX_BODY,
    Frame,
    FrameEncodeError,
    FrameError,
    FrameParser,
    crc16,
    encode_frame,
    next_seq,
)


def test_crc_check_value():
    assert crc16(b"123456789") == 0x29B1
    assert f"{crc16(b'123456789'):04X}" == "29B1"


def test_encode_layout():
    raw = encode_frame(3, "CARD", "7D", "120003")
    assert raw.startswith(b"\x020003|CARD|7D|120003\x03")
    assert raw.endswith(b"\r\n")
    assert raw[-6:-2] == b"%04X" % crc16(b"0003|CARD|7D|120003")


def test_seq_wraps():
    assert next_seq(9999) == 0
    assert next_seq(0) == 1


@pytest.mark.parametrize(
    "seq,type_,fields",
    [
        (10000, "HB", ("1",)),
        (-1, "HB", ("1",)),
        (1, "hb", ()),
        (1, "", ()),
        (1, "SIGN", ("a|b",)),
        (1, "SIGN", ("caf\u00e9",)),
        (1, "SIGN", ("tab\there",)),
        (1, "SIGN", ("x" * MAX_BODY,)),
    ],
)
def test_encode_refuses(seq, type_, fields):
    with pytest.raises(FrameEncodeError):
        encode_frame(seq, type_, *fields)


def test_round_trip_with_empty_field_and_split_feed():
    raw = encode_frame(42, "LIGHT", "3", "ON", "")
    p = FrameParser()
    out = []
    for b in raw:  # one byte at a time
        out += p.feed(bytes([b]))
    assert out == [Frame(42, "LIGHT", ("3", "ON", ""))]


def test_max_body_accepted_and_one_more_refused():
    body_room = MAX_BODY - len("0001|SIGN|")
    ok = encode_frame(1, "SIGN", "x" * body_room)
    assert FrameParser().feed(ok) == [Frame(1, "SIGN", ("x" * body_room,))]
    body = b"0002|SIGN|" + b"x" * (body_room + 1)
    too_long = b"\x02" + body + b"\x03" + b"%04X\r\n" % crc16(body)
    p = FrameParser()
    out = p.feed(too_long + encode_frame(3, "HB", "5"))
    assert out == [FrameError("body too long", 2), Frame(3, "HB", ("5",))]


def test_errors_report_readable_seq():
    good = encode_frame(7, "CARD", "QH", "10")
    bad_crc = good[:-6] + (b"0000" if good[-6:-2] != b"0000" else b"1111") + b"\r\n"
    p = FrameParser()
    assert p.feed(bad_crc) == [FrameError("CRC mismatch", 7)]
    assert p.feed(b"\x02garbage\x03ABCD\r\n") == [FrameError("CRC mismatch", None)]
    lower = good[:-6] + good[-6:-2].lower() + b"\r\n"
    if lower != good:
        assert p.feed(lower) == [FrameError("bad CRC digits", 7)]
    assert p.feed(good[:-2] + b"XX") == [FrameError("bad trailer (no CR LF)", 7)]
    # cut short by a new frame: the first is reported, the second parsed
    assert p.feed(good[:10] + good) == [
        FrameError("cut short by STX", 7),
        Frame(7, "CARD", ("QH", "10")),
    ]
    # a well-formed CRC over a malformed body
    body = b"12|CARD"
    assert p.feed(b"\x02" + body + b"\x03" + b"%04X\r\n" % crc16(body)) == [
        FrameError("malformed body", None)
    ]


def test_noise_counted_and_discarded():
    p = FrameParser()
    out = p.feed(b"\x00\xff\x03hello" + encode_frame(1, "HB", "0") + b"\r\n\x7f")
    assert out == [Frame(1, "HB", ("0",))]
    assert p.noise_bytes == 11


def _stream_with_faults(n: int, seed: int, corrupt_rate: float = 0.05):
    """n frames, ~5% with one byte changed, random noise between frames, some duplicates."""
    rng = random.Random(seed)
    chunks: list[bytes] = []
    expected: list[Frame] = []
    seq = 9000  # wraps 9999 -> 0000 on the way
    for i in range(n):
        frame = Frame(seq, "CARD", (rng.choice("A23456789TJQK") + rng.choice("SHDC"), str(i)))
        raw = frame.encode()
        if rng.random() < corrupt_rate:
            b = bytearray(raw)
            j = rng.randrange(len(b))
            b[j] = (b[j] + rng.randrange(1, 256)) % 256
            chunks.append(bytes(b))
        else:
            chunks.append(raw)
            expected.append(frame)
            if rng.random() < 0.01:
                chunks.append(raw)  # a duplicate on the wire
                expected.append(frame)
        if rng.random() < 0.3:
            chunks.append(rng.randbytes(rng.randrange(1, 40)))
        seq = next_seq(seq)
    return b"".join(chunks), expected


def test_ten_thousand_frames_five_percent_corrupt_parser_only():
    data, expected = _stream_with_faults(10_000, seed=11)
    p = FrameParser()
    frames: list[Frame] = []
    rng = random.Random(5)
    pos = 0
    while pos < len(data):  # arbitrary chunk boundaries
        step = rng.randrange(1, 600)
        frames += [x for x in p.feed(data[pos : pos + step]) if isinstance(x, Frame)]
        pos += step
    assert frames == expected
    assert 9_400 < len({f.fields[1] for f in frames}) < 9_600


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=20))
def test_fuzz_parser_never_raises_never_yields_a_frame(chunks):
    p = FrameParser()
    for chunk in chunks:
        for item in p.feed(chunk):
            assert isinstance(item, FrameError)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 9999),
            st.sampled_from(["HB", "CARD", "BET", "SIGN"]),
            st.lists(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E,
                                                    blacklist_characters="|"), max_size=12),
                     max_size=3),
            st.binary(max_size=50),
        ),
        max_size=15,
    )
)
def test_valid_frames_survive_any_noise_between_them(items):
    stream = b""
    expected = []
    for seq, type_, fields, noise in items:
        f = Frame(seq, type_, tuple(fields))
        stream += noise + f.encode()
        expected.append(f)
    out = [x for x in FrameParser().feed(stream) if isinstance(x, Frame)]
    assert out == expected


_field = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=8)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 9999),
    st.sampled_from(["HELLO", "SHUFFLE", "CARD", "ERR", "HB", "BET", "MAIN", "BUTTON", "X"]),
    st.lists(_field, max_size=4),
)
def test_decoders_raise_only_protocol_errors(seq, type_, fields):
    from controller.devices.board import BoardProtocolError, decode_board_frame
    from controller.devices.shoe import ShoeProtocolError, decode_shoe_frame

    frame = Frame(seq, type_, tuple(fields))
    for decode, error in ((decode_shoe_frame, ShoeProtocolError),
                          (lambda f: decode_board_frame(f, 7), BoardProtocolError)):
        with contextlib.suppress(error):
            decode(frame)
