"""Adds metadata_props (ModelProto field 14) to a serialized ONNX model without the onnx package: protobuf lets a
repeated field be appended at the end of a message, so the entries are encoded and concatenated."""


def _varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _string_field(field, text):
    data = text.encode("utf-8")
    return _varint((field << 3) | 2) + _varint(len(data)) + data


def add_metadata(path, entries):
    blob = bytearray()
    for key, value in entries.items():
        entry = _string_field(1, key) + _string_field(2, value)
        blob += _varint((14 << 3) | 2) + _varint(len(entry)) + entry
    with open(path, "ab") as handle:
        handle.write(bytes(blob))


def names_literal(names):
    """Ultralytics' `names` metadata: a Python dict literal {0: 'a', 1: 'b'} (what src/inference reads)."""
    parts = []
    for index, name in enumerate(names):
        parts.append("%d: '%s'" % (index, name.replace("\\", "\\\\").replace("'", "\\'")))
    return "{" + ", ".join(parts) + "}"
