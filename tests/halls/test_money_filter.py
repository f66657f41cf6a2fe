"""The pages' ``|money`` filter and halls.i18n.amount: an amount in the active language, through
halls.money.for_person; on a page, figure and sign kept on one line."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.template import Context, Template
from django.utils import translation

from halls import i18n

PAGE = Template("{% load hall_money %}[{{ value|money }}][{{ value|money:'USD' }}]")


@pytest.mark.parametrize(
    ("language", "value", "shown"),
    [
        ("es", Decimal("1234.5"), "[1.234,50\u00a0€][1.234,50\u00a0USD]"),
        ("en", Decimal("1234.5"), "[€1,234.50][USD\u00a01,234.50]"),
        ("es", "60.00", "[60,00\u00a0€][60,00\u00a0USD]"),  # a read model's decimal string
        ("es", 7, "[7,00\u00a0€][7,00\u00a0USD]"),
        ("es", None, "[—][—]"),
    ],
)
def test_a_page_shows_an_amount_in_its_language(language: str, value: object, shown: str) -> None:
    with translation.override(language):
        assert PAGE.render(Context({"value": value})) == shown


def test_a_float_is_never_shown_as_money() -> None:
    with translation.override("es"), pytest.raises(TypeError, match="never a float"):
        PAGE.render(Context({"value": 1.5}))


def test_slips_and_pdfs_take_the_plain_text_in_the_active_language() -> None:
    with translation.override("es"):
        assert i18n.amount(Decimal("-3.5")) == "-3,50 €"
        assert i18n.amount(None) == "—" and i18n.amount(None, missing="") == ""
    with translation.override("en"):
        assert i18n.amount(Decimal("1234567.891")) == "€1,234,567.89"
