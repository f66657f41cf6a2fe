"""The API's JSON parser: DRF's, refusing bodies nested deeper than settings.HALL_JSON_MAX_DEPTH with 400.

Nothing the API takes is nested more than a few levels; a body nested a thousand deep once reached the
serializers and crashed them (a 500 to an anonymous caller). The size limit is Django's
DATA_UPLOAD_MAX_MEMORY_SIZE (413, halls.api_errors).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def depth(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        level += 1
        deepest = max(deepest, level)
        stack.extend((child, level) for child in children)
    return deepest


def check_depth(value: Any) -> Any:
    limit = settings.HALL_JSON_MAX_DEPTH
    if depth(value) > limit:
        raise ParseError(
            _("The JSON body is nested deeper than %(limit)d levels.") % {"limit": limit}, code="too_deep"
        )
    return value


class BoundedJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(_("The JSON body is nested too deeply."), code="too_deep") from None
        return check_depth(data)


def loads(raw: bytes | str) -> Any:
    """json.loads with the same depth limit, for doors that read the body themselves."""
    try:
        data = json.loads(raw)
    except RecursionError:
        raise ParseError(_("The JSON body is nested too deeply."), code="too_deep") from None
    return check_depth(data)
