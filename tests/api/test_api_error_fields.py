"""The API's generic input refusal (halls.api_errors, code "invalid") names each field as its reader says
it: in English by its key (as the API always has), in Spanish by the field's label translated ("Caja" for
`till`), or not at all where the field has no Spanish name: never an English key in a Spanish sentence.
The answer's `fields` keep the machine-readable keys in both languages."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework import serializers

from halls import api_errors
from halls.cashier.models import Till
from halls.models import Venue
from tests.api_support import api_client, refused

pytestmark = [pytest.mark.django_db, pytest.mark.cashier_off_shift]

SHIFTS = "/api/cashier/shifts/"


@pytest.fixture
def till(venue: Venue) -> Till:
    return Till.objects.create(venue=venue, name="Caja 1", printer="tcp://10.0.0.5:9100")


def _open(cashier: User, language: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = api_client(cashier).post(SHIFTS, body, format="json", HTTP_ACCEPT_LANGUAGE=language)
    return refused(answer, 400, "invalid")


def test_a_refusal_in_spanish_names_the_field_in_spanish(cashier: User, till: Till) -> None:
    error = _open(cashier, "es", {"float": "100.00"})
    assert error["message"] == "Caja: Este campo es requerido.", error
    assert list(error["fields"]) == ["till"]  # the machine-readable key stays
    error = _open(cashier, "es", {"till": "x", "float": "100.00"})
    assert error["message"].startswith("Caja: "), error
    assert "till" not in error["message"].lower(), error


def test_a_field_without_a_spanish_name_is_not_named_in_spanish(cashier: User, till: Till) -> None:
    error = _open(cashier, "es", {"till": till.pk})  # `float` has no Spanish label in the catalogue
    assert "float" not in error["message"].lower(), error
    assert error["message"] == "Este campo es requerido.", error
    assert list(error["fields"]) == ["float"]
    both = _open(cashier, "es", {})
    assert both["message"] == "Caja: Este campo es requerido.; Este campo es requerido.", both
    assert sorted(both["fields"]) == ["float", "till"]


def test_a_refusal_in_english_names_the_field_by_its_key(cashier: User, till: Till) -> None:
    error = _open(cashier, "en", {"float": "100.00"})
    assert error["message"] == "till: This field is required.", error
    assert list(error["fields"]) == ["till"]
    both = _open(cashier, "en", {})
    assert both["message"] == "till: This field is required.; float: This field is required.", both


def test_errors_of_no_field_are_not_prefixed_in_either_language(settings: Any) -> None:
    """DRF's `non_field_errors` is no field a person could find: its sentence alone."""

    class Pair(serializers.Serializer[Any]):
        low = serializers.IntegerField()
        high = serializers.IntegerField()

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            raise serializers.ValidationError("Low must be below high.")

    for language in ("en", "es"):
        settings.LANGUAGE_CODE = language
        pair = Pair(data={"low": 2, "high": 1})
        with pytest.raises(serializers.ValidationError) as caught:
            pair.is_valid(raise_exception=True)
        api_errors.name_fields(caught.value, pair)
        answer = api_errors.exception_handler(caught.value, {})
        assert answer is not None
        assert answer.data["error"]["message"] == "Low must be below high."
        assert list(answer.data["error"]["fields"]) == ["non_field_errors"]


def test_a_model_field_label_is_said_in_the_active_language() -> None:
    """A label from a model field's verbose name (lazy) is said in the reader's language, or not at all."""
    from django.utils import translation

    class Named(serializers.Serializer[Any]):
        till = serializers.IntegerField()
        note = serializers.CharField(label="Note nobody translated")

    named = Named(data={})
    with pytest.raises(serializers.ValidationError) as caught:
        named.is_valid(raise_exception=True)
    api_errors.name_fields(caught.value, named)
    with translation.override("es"):
        message = api_errors.exception_handler(caught.value, {}).data["error"]["message"]  # type: ignore[union-attr]
    assert message.startswith("Caja: ") and "Note" not in message and "note" not in message, message
