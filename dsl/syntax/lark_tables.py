"""JSON for data that has tuples and integer-keyed dicts (lark's parser tables).

Plain JSON turns tuples into lists and integer keys into strings; this
encoding tags both so a round trip gives back exactly what went in.  Only
data is read: no pickle, no code.
"""
from __future__ import annotations

import json

_TUPLE, _INT_KEYS = "\0tuple", "\0int-keys"


def encode(value):
    """``value`` as plain JSON data, tuples and integer-keyed dicts tagged."""
    if isinstance(value, tuple):
        return {_TUPLE: [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: encode(v) for k, v in value.items()}
        if all(isinstance(k, int) and not isinstance(k, bool) for k in value):
            return {_INT_KEYS: [[k, encode(v)] for k, v in value.items()]}
        raise TypeError(f"dict keys of mixed types: {sorted(map(repr, value))[:3]}")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot encode {type(value).__name__}")


def _hook(obj: dict):
    if len(obj) == 1:
        if _TUPLE in obj:
            return tuple(obj[_TUPLE])
        if _INT_KEYS in obj:
            return {int(k): v for k, v in obj[_INT_KEYS]}
    return obj


def dumps(value) -> str:
    return json.dumps(encode(value), separators=(",", ":"), sort_keys=False, ensure_ascii=True)


def loads(text: str):
    return json.loads(text, object_hook=_hook)
