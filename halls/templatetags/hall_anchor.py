"""``{% anchor_key_card %}``: the installation's public anchor key, printed where the inspector reads (with
where it is published and how to verify the anchors with it)."""

from __future__ import annotations

from typing import Any

from django import template

from halls.services import anchor_key

register = template.Library()


@register.inclusion_tag("halls/_anchor_key.html")
def anchor_key_card() -> dict[str, Any]:
    return {"key": anchor_key.document()}
