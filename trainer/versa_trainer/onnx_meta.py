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


def export_onnx(torch, module, size, path, output_name, entries):
    """Exports `module` (input `images [1, 3, S, S]`) as one self-contained ONNX file with `entries` as metadata.
    PyTorch 2.x defaults to the dynamo exporter, which writes opset 18 and moves the weights into a side file
    (`.onnx.data`) that a registry storing one file would lose: the TorchScript exporter (opset 12) is asked for where
    it exists, else the dynamo exporter with the weights kept inside."""
    import inspect
    import os

    example = torch.zeros(1, 3, size, size)
    options = {"input_names": ["images"], "output_names": [output_name]}
    accepted = inspect.signature(torch.onnx.export).parameters
    with torch.no_grad():
        if "dynamo" not in accepted:
            torch.onnx.export(module, example, path, opset_version=12, **options)
        else:
            try:
                torch.onnx.export(module, example, path, opset_version=12, dynamo=False, **options)
            except Exception:  # a PyTorch without the TorchScript exporter
                extra = {"external_data": False} if "external_data" in accepted else {}
                torch.onnx.export(module, example, path, opset_version=18, dynamo=True, **options, **extra)
    if os.path.exists(path + ".data"):
        raise SystemExit("the ONNX export wrote its weights to a separate file; Versa registers one file")
    add_metadata(path, entries)


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
