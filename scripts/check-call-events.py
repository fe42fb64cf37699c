#!/usr/bin/env python3
"""Checks call events against docs/call-event.schema.json and prints what callpush would do with each.

usage: check-call-events.py [FILE…]        (one event per line; standard input when no file is given)

Each input line gives one output line: `ok`, or the dead-letter reason(s) callpush would write as `x-dlq-reason`,
space-separated when several properties are wrong (callpush names the first of them in the order of the schema's
`required` list, then the optional properties). Lines are record values exactly as produced; a trailing newline is
not part of the value. Needs Python's `jsonschema` (Debian: python3-jsonschema).
"""

import json
import math
import pathlib
import sys

import jsonschema

SCHEMA_PATH = pathlib.Path(__file__).resolve().parent.parent / "docs" / "call-event.schema.json"
MAXIMUM_EVENT_BYTES = 16384
MAXIMUM_NESTING_DEPTH = 32


class NotJSON(Exception):
    pass


def reject_constant(name):
    raise NotJSON(f"{name} is not JSON")


def finite_float(text):
    value = float(text)
    if math.isinf(value):
        raise NotJSON("number overflows a double")
    return value


def depth(value, level=1):
    """Nesting depth: the top-level object is 1, as callpush counts it."""
    if isinstance(value, dict):
        return max([depth(member, level + 1) for member in value.values()], default=level)
    if isinstance(value, list):
        return max([depth(element, level + 1) for element in value], default=level)
    return level - 1


def parse(raw):
    """The value as RFC 8259 JSON in UTF-8 (an initial byte order mark is skipped), or NotJSON."""
    try:
        text = raw.decode("utf-8-sig")
        value = json.loads(text, parse_constant=reject_constant, parse_float=finite_float)
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone surrogate escape fails here
        return value
    except (UnicodeError, ValueError, NotJSON) as error:
        raise NotJSON(str(error)) from error


def check_order(schema):
    """Property paths in the order callpush checks them: the required ones, then the rest, each followed by its own
    properties."""
    order = []
    for name in schema["required"] + list(schema["properties"]):
        if name in order:
            continue
        order.append(name)
        order.extend(name + "." + member for member in schema["properties"][name].get("properties", {}))
    return {path: index for index, path in enumerate([""] + order)}


def reasons(raw, validator):
    if len(raw) > MAXIMUM_EVENT_BYTES:
        return ["event_too_large"]
    try:
        value = parse(raw)
    except NotJSON:
        return ["invalid_json"]
    if isinstance(value, (dict, list)) and depth(value) > MAXIMUM_NESTING_DEPTH:
        return ["nesting_too_deep"]
    by_path = {}
    for error in validator.iter_errors(value):
        path = ".".join(str(part) for part in error.absolute_path)
        if error.validator == "required":
            missing = [name for name in error.validator_value if name not in error.instance]
            for name in missing:
                by_path.setdefault(name, set()).add("missing_field:" + name)
        elif error.validator == "type" and path == "":
            by_path.setdefault(path, set()).add(error.schema["x-dlq-reason"])
        elif error.validator == "type":
            # null in a required property counts as absent; a wrong type outranks the property's other keywords.
            by_path[path] = {("missing_field:" if error.instance is None else "wrong_type:") + path}
        elif not any(reason.startswith(("wrong_type:", "missing_field:")) for reason in by_path.get(path, ())):
            by_path.setdefault(path, set()).add(error.schema["x-dlq-reason"])
    paths = sorted(by_path, key=lambda path: check_order(validator.schema).get(path, len(by_path)))
    return [reason for path in paths for reason in sorted(by_path[path])]


def main():
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))
    files = [open(name, "rb") for name in sys.argv[1:]] or [sys.stdin.buffer]
    for file in files:
        for line in file:
            found = reasons(line.rstrip(b"\n"), validator)
            print(" ".join(found) if found else "ok")
        file.close()


if __name__ == "__main__":
    main()
