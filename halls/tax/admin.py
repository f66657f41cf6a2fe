"""The gaming tax in the operator's admin: rate tables are recorded and corrected here, through
halls.tax.services.rates (checked, audited; a table a return was filed with stays as it is); the returns are
read-only (only the filing service writes them)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.http import HttpRequest

from halls.admin import ReadOnlyAdmin
from halls.errors import DomainError
from halls.tax.models import RateTable, TaxReturn
from halls.tax.services import rates


class RateTableForm(forms.ModelForm[RateTable]):
    """The lines checked as the service checks them (game types, bases, rates, fees), made canonical."""

    class Meta:
        model = RateTable
        fields = ("jurisdiction", "reference", "valid_from", "valid_until", "rounding", "lines")

    def clean_lines(self) -> list[dict[str, Any]]:
        try:
            return rates.checked_lines(self.cleaned_data.get("lines"))
        except DomainError as exc:
            raise forms.ValidationError(exc.message, code=exc.code) from exc


@admin.register(RateTable)
class RateTableAdmin(admin.ModelAdmin[Any]):
    form = RateTableForm
    list_display = ("jurisdiction", "valid_from", "valid_until", "reference", "rounding")
    list_filter = ("jurisdiction",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("jurisdiction",) if obj is not None else ()

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: RateTable, form: Any, change: bool) -> None:
        actor = request.user
        assert isinstance(actor, User)
        try:
            if change:
                rates.change_rate_table(
                    table=RateTable.objects.get(pk=obj.pk),
                    reference=obj.reference,
                    valid_from=obj.valid_from,
                    valid_until=obj.valid_until,
                    rounding=obj.rounding,
                    lines=obj.lines,
                    actor=actor,
                )
            else:
                made = rates.record_rate_table(
                    jurisdiction=obj.jurisdiction,
                    reference=obj.reference,
                    valid_from=obj.valid_from,
                    valid_until=obj.valid_until,
                    rounding=obj.rounding,
                    lines=obj.lines,
                    actor=actor,
                )
                obj.pk = made.pk
        except DomainError as exc:
            self.message_user(request, exc.message, level=messages.ERROR)


@admin.register(TaxReturn)
class TaxReturnAdmin(ReadOnlyAdmin):
    list_display = ("venue", "period", "total_due", "rate_reference", "filed_at", "filed_by_label", "digest")
    list_filter = ("venue", "jurisdiction")
