"""Read an ONNX model's protobuf wire format just far enough to give int8 tensors new values.

The runtime has onnxruntime but not the ``onnx`` package (a training dependency), and
onnxruntime cannot edit a graph. What :mod:`vision.kernels` needs is small: the graph's nodes
(their inputs, outputs and operator), its int8 initializers' values, and a copy of the model
with some of those values replaced. Protobuf's wire format is a sequence of (field number,
wire type, value) records, a sub-message being a length-delimited value; the walk below finds
each record by offset, skips every field it does not need by its wire type, and a rewrite
copies every other record's bytes as they were.

Field numbers (onnx.proto): ModelProto.graph 7; GraphProto.node 1, .initializer 5;
NodeProto.input 1, .output 2, .op_type 4; TensorProto.dims 1, .data_type 2, .int32_data 5,
.name 8, .raw_data 9.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

#: TensorProto.DataType values used here
INT8 = 3
UINT8 = 2

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class WireError(ValueError):
    """Bytes that are not a protobuf message of the shape expected."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it.

    >>> _varint(bytes([0xAC, 0x02]), 0)
    (300, 2)
    """
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise WireError("truncated or overlong varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _encode_varint(value: int) -> bytes:
    """``value`` (0 or more) as a varint.

    >>> _encode_varint(300).hex()
    'ac02'
    """
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _length_delimited(number: int, payload: bytes) -> bytes:
    """A length-delimited field ``number`` holding ``payload``, as it is written."""
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


@dataclass(frozen=True)
class Field:
    """One field of a message: ``start`` where its record (key) begins, ``end`` where it
    ends. ``value`` is the number of a varint, else where the value's bytes begin."""

    number: int
    wire: int
    start: int
    value: int
    end: int


def fields(buf: bytes, start: int = 0, end: int | None = None) -> Iterator[Field]:
    """Each field of the message in ``buf[start:end]``.

    >>> [(f.number, f.wire, f.value, f.end) for f in fields(bytes([8, 150, 1, 18, 1, 97]))]
    [(1, 0, 150, 3), (2, 2, 5, 6)]
    """
    end = len(buf) if end is None else end
    pos = start
    while pos < end:
        record = pos
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = _varint(buf, pos)
            yield Field(number, wire, record, value, pos)
            continue
        if wire == _LEN:
            width, pos = _varint(buf, pos)
        elif wire in (_I64, _I32):
            width = 8 if wire == _I64 else 4
        else:
            raise WireError(f"unsupported wire type {wire} (field {number})")
        if pos + width > end:
            raise WireError(f"field {number} runs past its message")
        yield Field(number, wire, record, pos, pos + width)
        pos += width
    if pos != end:
        raise WireError("message runs past its end")


@dataclass(frozen=True)
class Node:
    """A graph node: its operator and the names of its inputs and outputs."""

    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class Initializer:
    """A constant tensor of the graph; ``raw`` the (start, end) of its ``raw_data`` in the
    file, ``None`` where its values are stored otherwise (typed fields such as
    ``int32_data``); ``span`` the (start, end) of the tensor's message."""

    name: str
    data_type: int
    dims: tuple[int, ...]
    raw: tuple[int, int] | None
    span: tuple[int, int]


def _text(buf: bytes, start: int, end: int) -> str:
    try:
        return buf[start:end].decode("utf-8")
    except UnicodeDecodeError:
        raise WireError(f"a name at byte {start} is not UTF-8 text") from None


def _node(buf: bytes, start: int, end: int) -> Node:
    inputs: list[str] = []
    outputs: list[str] = []
    op_type = ""
    for f in fields(buf, start, end):
        if f.wire != _LEN:
            continue
        if f.number == 1:
            inputs.append(_text(buf, f.value, f.end))
        elif f.number == 2:
            outputs.append(_text(buf, f.value, f.end))
        elif f.number == 4:
            op_type = _text(buf, f.value, f.end)
    return Node(op_type, tuple(inputs), tuple(outputs))


def _initializer(buf: bytes, start: int, end: int) -> Initializer:
    name = ""
    data_type = 0
    dims: list[int] = []
    raw: tuple[int, int] | None = None
    for f in fields(buf, start, end):
        if f.number == 1 and f.wire == _VARINT:
            dims.append(f.value)
        elif f.number == 1 and f.wire == _LEN:  # packed dims
            pos = f.value
            while pos < f.end:
                dim, pos = _varint(buf, pos)
                dims.append(dim)
        elif f.number == 2 and f.wire == _VARINT:
            data_type = f.value
        elif f.number == 8 and f.wire == _LEN:
            name = _text(buf, f.value, f.end)
        elif f.number == 9 and f.wire == _LEN:
            raw = (f.value, f.end)
    return Initializer(name, data_type, tuple(dims), raw, (start, end))


def _graph_field(model: bytes) -> Field:
    graphs = [f for f in fields(model) if f.number == 7 and f.wire == _LEN]
    if len(graphs) != 1:
        raise WireError(f"expected one graph in the model, found {len(graphs)}")
    return graphs[0]


def graph(model: bytes) -> tuple[list[Node], dict[str, Initializer]]:
    """The nodes and the initializers (by name) of a serialised ``ModelProto``.

    Raises :class:`WireError` where ``model`` has no graph or is not well formed.
    """
    g = _graph_field(model)
    nodes: list[Node] = []
    initializers: dict[str, Initializer] = {}
    for f in fields(model, g.value, g.end):
        if f.wire != _LEN:
            continue
        if f.number == 1:
            nodes.append(_node(model, f.value, f.end))
        elif f.number == 5:
            init = _initializer(model, f.value, f.end)
            initializers[init.name] = init
    return nodes, initializers


def int8_values(model: bytes, init: Initializer) -> np.ndarray:
    """The values of an int8 or uint8 initializer, from ``raw_data`` or ``int32_data``.

    Raises :class:`WireError` for another type.
    """
    if init.data_type not in (INT8, UINT8):
        raise WireError(f"{init.name}: not an int8 or uint8 tensor (type {init.data_type})")
    dtype = np.int8 if init.data_type == INT8 else np.uint8
    if init.raw is not None:
        return _counted(init, np.frombuffer(model[init.raw[0]:init.raw[1]], dtype).copy())
    ints: list[int] = []
    for f in fields(model, *init.span):
        if f.number != 5:
            continue
        if f.wire == _VARINT:
            ints.append(f.value)
        elif f.wire == _LEN:  # packed
            pos = f.value
            while pos < f.end:
                value, pos = _varint(model, pos)
                ints.append(value)
    # int32 fields are written as 64-bit two's complement varints
    signed = [v - (1 << 64) if v >= 1 << 63 else v for v in ints]
    return _counted(init, np.array(signed, np.int64).astype(dtype))


def _counted(init: Initializer, values: np.ndarray) -> np.ndarray:
    """``values``, if they are as many as ``init``'s dimensions hold (not so for a tensor
    whose values lie in an external file)."""
    if values.size != int(np.prod(init.dims, dtype=np.int64)):
        raise WireError(f"{init.name}: {values.size} values for dimensions {list(init.dims)}")
    return values


#: TensorProto fields that hold values: float_data, int32_data, string_data, int64_data,
#: raw_data, double_data, uint64_data; a tensor given new ``raw_data`` drops all of them
_VALUE_FIELDS = frozenset({4, 5, 6, 7, 9, 10, 11})


def with_raw_data(model: bytes, values: dict[str, bytes]) -> bytes:
    """``model`` with the named initializers' values replaced by ``raw_data`` (little-endian
    bytes of their type, as ONNX stores it); their other fields (name, type, dimensions) and
    the rest of the file as they were, the enclosing lengths written anew.

    Raises :class:`WireError` for a name that is not an initializer of the graph.
    """
    _, inits = graph(model)
    missing = sorted(set(values) - set(inits))
    if missing:
        raise WireError(f"no initializer named {missing[0]!r}")
    by_span = {inits[name].span: data for name, data in values.items()}
    g = _graph_field(model)
    body = bytearray()
    for f in fields(model, g.value, g.end):
        data = by_span.get((f.value, f.end)) if f.number == 5 and f.wire == _LEN else None
        if data is None:
            body += model[f.start:f.end]
            continue
        tensor = b"".join(model[t.start:t.end] for t in fields(model, f.value, f.end)
                          if t.number not in _VALUE_FIELDS)
        body += _length_delimited(5, tensor + _length_delimited(9, data))
    return model[:g.start] + _length_delimited(7, bytes(body)) + model[g.end:]
