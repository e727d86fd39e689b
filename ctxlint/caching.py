"""Caches keyed by object identity, for values computed once per shared message object."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

DEFAULT_LIMIT = 16_000  # entries; each pins its object, so this bounds memory too


class IdentityCache:
    """A bounded cache keyed by object identity; each entry pins its object, so an id is
    never mistaken for a later object's."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self._entries: OrderedDict[tuple, tuple[Any, Any]] = OrderedDict()
        self._limit = limit

    def get(self, obj: Any, *scope: Any) -> Any:
        entry = self._entries.get((id(obj), *scope))
        return entry[1] if entry is not None and entry[0] is obj else None

    def put(self, obj: Any, value: Any, *scope: Any) -> Any:
        self._entries[(id(obj), *scope)] = (obj, value)
        if len(self._entries) > self._limit:
            self._entries.popitem(last=False)
        return value
