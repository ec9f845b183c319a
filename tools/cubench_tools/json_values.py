"""A JSON value read from a result file: whether it is a number, a field checked to be of its
kind, and how a message names a value that is not."""
import json

from .input_error import InputError



def describe(value):
    """How a JSON value reads in a message: its type, and short text for strings."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f"the string {json.dumps(value[:40])}"
    if isinstance(value, (int, float)):
        return repr(value)
    return "an object" if isinstance(value, dict) else "a list"


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def checked_field(prefix, where, obj, key, kind, required=True, default=None):
    """obj[key] checked to be of kind ("string", "list", "object"); a message begins with prefix
    (the file, and what of it is read), and where names obj."""
    if key not in obj:
        if required:
            raise InputError(f"{prefix}: {where} has no \"{key}\"")
        return default
    value = obj[key]
    ok = {"string": isinstance(value, str), "list": isinstance(value, list),
          "object": isinstance(value, dict)}[kind]
    if not ok:
        article = "an" if kind == "object" else "a"
        raise InputError(f"{prefix}: {where}: \"{key}\" is {describe(value)}, not {article} {kind}")
    return value


def checked_choice(prefix, where, obj, key, choices):
    value = checked_field(prefix, where, obj, key, "string")
    if value not in choices:
        raise InputError(f"{prefix}: {where}: \"{key}\" is {describe(value)}, not "
                         f"{', '.join(choices[:-1])} or {choices[-1]}")
    return value
