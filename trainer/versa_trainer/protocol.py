"""
The trainer protocol, Python side: every event a trainer prints is checked against the schemas of contract.json
(generated from the server's src/training/trainer-protocol.ts) before it is written, so that a trainer that would
break the protocol fails here, with the reason, instead of being refused by the server. Also the parameters' defaults
(from src/training/adapters.ts), so that a direct run and a run from Versa use the same ones.
"""
import json
import os
import re
import sys

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "contract.json"), "r", encoding="utf-8") as _handle:
    CONTRACT = json.load(_handle)

PROTOCOL = CONTRACT["protocol"]
EVENTS = CONTRACT["events"]


class ProtocolError(ValueError):
    """An event that the server would refuse."""


def adapter_defaults(adapter):
    """`{model, <parameter>: default, ...}` of an adapter, as the server defines them."""
    spec = CONTRACT["adapters"][adapter]
    return dict({"model": spec["default_model"]}, **{name: p["default"] for name, p in spec["params"].items()})


def adapter_models(adapter):
    return list(CONTRACT["adapters"][adapter]["models"])


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    # As in JSON (and on the server): 3.0 is an integer.
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def check(schema, value, path="/"):
    """Raises ProtocolError when `value` breaks `schema` (the JSON Schema keywords the protocol's schemas use)."""
    if "anyOf" in schema:
        for option in schema["anyOf"]:
            try:
                check(option, value, path)
                return
            except ProtocolError:
                pass
        raise ProtocolError("%s matches none of its allowed types: %r" % (path, value))
    kind = schema.get("type")
    if kind is not None and not _TYPES[kind](value):
        raise ProtocolError("%s must be %s, got %r" % (path, kind, value))
    if "const" in schema and value != schema["const"]:
        raise ProtocolError("%s must be %r, got %r" % (path, schema["const"], value))
    if "minimum" in schema and value < schema["minimum"]:
        raise ProtocolError("%s must be >= %s, got %r" % (path, schema["minimum"], value))
    if "maximum" in schema and value > schema["maximum"]:
        raise ProtocolError("%s must be <= %s, got %r" % (path, schema["maximum"], value))
    if "minLength" in schema and len(value) < schema["minLength"]:
        raise ProtocolError("%s must not be shorter than %d" % (path, schema["minLength"]))
    if "pattern" in schema and not re.search(schema["pattern"], value):
        raise ProtocolError("%s must match %s, got %r" % (path, schema["pattern"], value))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            check(schema["items"], item, "%s%d/" % (path, i))
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                raise ProtocolError("%s lacks %s" % (path, name))
        properties = schema.get("properties", {})
        for name, item in value.items():
            if name in properties:
                check(properties[name], item, path + name + "/")
                continue
            patterns = [s for p, s in schema.get("patternProperties", {}).items() if re.search(p, name)]
            for pattern_schema in patterns:
                check(pattern_schema, item, path + name + "/")
            extra = schema.get("additionalProperties", True)
            if not patterns and extra is False:
                raise ProtocolError("%s has no member %s" % (path, name))
            if not patterns and isinstance(extra, dict):
                check(extra, item, path + name + "/")


def event_line(event, **fields):
    """The line of one event, checked against its schema."""
    fields = dict({"event": event, "protocol": PROTOCOL}, **fields)
    if event not in EVENTS:
        raise ProtocolError("unknown event %s (one of %s)" % (event, ", ".join(EVENTS)))
    line = json.dumps(fields, allow_nan=False, default=_plain)
    check(EVENTS[event], json.loads(line), "%s event: /" % event)
    return line


def emit(event, **fields):
    """One event per line on stdout; Versa parses these (anything else on stdout is ignored, stderr is logged)."""
    sys.stdout.write(event_line(event, **fields) + "\n")
    sys.stdout.flush()


def finish(metrics, artifacts, params, duration_s, env):
    """The end of a run that went well: its `metrics` event (a dict: task, metrics, per_class, …), an `artifact` event
    per file written (name -> path under the run folder), then `finished`."""
    emit("metrics", **metrics)
    for name, path in artifacts.items():
        emit("artifact", name=name, path=path)
    emit("finished", params=params, duration_s=duration_s, env=env)


def _plain(value):
    try:
        return value.item()
    except AttributeError:
        return str(value)
