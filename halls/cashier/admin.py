"""The cashier in the operator's admin: tills and cash devices are edited here, through their services
(audited); the ledger, shifts, player cards, tickets and payables are read-only (only services write them)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from halls.admin import ReadOnlyAdmin
from halls.cashier.models import (
    Account,
    CashDevice,
    CashierSettings,
    LedgerTransaction,
    Leg,
    Payable,
    PlayerCard,
    PlayerLimit,
    PlaySession,
    RealityCheck,
    Shift,
    Ticket,
    Till,
)
from halls.cashier.services import cashier_settings, tills
from halls.errors import DomainError


def _refused(modeladmin: admin.ModelAdmin[Any], request: HttpRequest, exc: DomainError) -> None:
    modeladmin.message_user(request, exc.message, level=messages.ERROR)


class TillForm(forms.ModelForm[Till]):
    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        try:
            data["name"], data["printer"] = tills.checked(data.get("name", ""), data.get("printer", ""))
        except DomainError as exc:
            raise forms.ValidationError(exc.message, code=exc.code) from exc
        return data


@admin.register(Till)
class TillAdmin(admin.ModelAdmin[Any]):
    """Tills are made and changed through halls.cashier.services.tills (audited); retired, not deleted."""

    form = TillForm
    list_display = ("name", "venue", "printer", "active")
    list_filter = ("venue", "active")
    actions = ["retire"]

    def get_fields(self, request: HttpRequest, obj: Till | None = None) -> tuple[str, ...]:
        return ("name", "printer") if obj is not None else ("venue", "name", "printer")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Till, form: Any, change: bool) -> None:
        actor = request.user
        assert isinstance(actor, User)
        try:
            if change:
                current = Till.objects.get(pk=obj.pk)
                tills.update_till(till=current, name=obj.name, printer=obj.printer, actor=actor)
            else:
                made = tills.create_till(
                    venue_id=obj.venue_id, name=obj.name, printer=obj.printer, actor=actor
                )
                obj.pk = made.pk
        except DomainError as exc:
            _refused(self, request, exc)

    @admin.action(description=_("Retire the selected tills"))
    def retire(self, request: HttpRequest, queryset: QuerySet[Till]) -> None:
        actor = request.user
        assert isinstance(actor, User)
        for till in queryset:
            try:
                tills.retire_till(till=till, actor=actor)
            except DomainError as exc:
                _refused(self, request, exc)


@admin.register(CashDevice)
class CashDeviceAdmin(admin.ModelAdmin[Any]):
    """A device's name and service state; it is registered (with its token) by its own service."""

    list_display = ("name", "venue", "kind", "active")
    list_filter = ("venue", "kind", "active")
    fields = ("venue", "kind", "name", "active")
    readonly_fields = ("venue", "kind")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: CashDevice, form: Any, change: bool) -> None:
        actor = request.user
        assert isinstance(actor, User)
        try:
            current = CashDevice.objects.get(pk=obj.pk)
            tills.update_device(device=current, name=obj.name, active=obj.active, actor=actor)
        except DomainError as exc:
            _refused(self, request, exc)


class CashierSettingsForm(forms.ModelForm[CashierSettings]):
    """The figures checked by the service (the pair against each other, the defaults filling a blank)."""

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        try:
            if "ticket_valid_days" in data:
                data["ticket_valid_days"] = cashier_settings.checked_days(data["ticket_valid_days"])
            for field in ("ticket_max_amount", "ticket_cage_above"):
                data[field] = cashier_settings.checked_figure(data.get(field), field)
            venue = data.get("venue") or getattr(self.instance, "venue", None)
            if venue is not None:
                cashier_settings.checked_limits(
                    jurisdiction=venue.jurisdiction,
                    maximum=data["ticket_max_amount"],
                    cage_above=data["ticket_cage_above"],
                )
        except DomainError as exc:
            raise forms.ValidationError(exc.message, code=exc.code) from exc
        return data


@admin.register(CashierSettings)
class CashierSettingsAdmin(admin.ModelAdmin[Any]):
    """A venue's ticket validity and ticket limits, changed through
    halls.cashier.services.cashier_settings (audited); a blank figure follows the jurisdiction's default."""

    form = CashierSettingsForm
    list_display = ("venue", "ticket_valid_days", "ticket_max_amount", "ticket_cage_above")

    def get_fields(self, request: HttpRequest, obj: CashierSettings | None = None) -> tuple[str, ...]:
        figures = ("ticket_valid_days", "ticket_max_amount", "ticket_cage_above")
        return figures if obj is not None else ("venue", *figures)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: CashierSettings, form: Any, change: bool) -> None:
        actor = request.user
        assert isinstance(actor, User)
        try:
            saved = cashier_settings.change_cashier_settings(
                venue_id=obj.venue_id,
                actor=actor,
                ticket_valid_days=obj.ticket_valid_days,
                ticket_max_amount=obj.ticket_max_amount,
                ticket_cage_above=obj.ticket_cage_above,
            )
            obj.pk = saved.pk
        except DomainError as exc:
            _refused(self, request, exc)


@admin.register(Shift)
class ShiftAdmin(ReadOnlyAdmin):
    list_display = (
        "pk",
        "venue",
        "till",
        "cashier",
        "state",
        "opened_at",
        "closed_at",
        "difference",
        "witness",
    )
    list_filter = ("venue", "state", "till")
    date_hierarchy = "opened_at"


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = ("code", "venue", "kind", "means", "balance", "guarded")
    list_filter = ("venue", "kind")
    search_fields = ("code",)


class LegInline(admin.TabularInline[Any, Any]):
    model = Leg
    extra = 0
    can_delete = False
    readonly_fields = ("account", "amount")
    fields = readonly_fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(LedgerTransaction)
class LedgerTransactionAdmin(ReadOnlyAdmin):
    list_display = ("pk", "venue", "kind", "created_at", "actor_label", "device", "shift", "key")
    list_filter = ("venue", "kind")
    search_fields = ("key", "memo")
    date_hierarchy = "created_at"
    inlines = [LegInline]


@admin.register(PlayerCard)
class PlayerCardAdmin(ReadOnlyAdmin):
    list_display = ("number", "venue", "state", "player", "created_at")
    list_filter = ("venue", "state")
    search_fields = ("number",)


@admin.register(Ticket)
class TicketAdmin(ReadOnlyAdmin):
    list_display = ("number", "venue", "amount", "state", "issued_at", "expires_at", "issued_by")
    list_filter = ("venue", "state")
    search_fields = ("number",)


@admin.register(Payable)
class PayableAdmin(ReadOnlyAdmin):
    list_display = (
        "pk",
        "venue",
        "kind",
        "description",
        "amount",
        "state",
        "awarded_at",
        "paid_at",
        "method",
    )
    list_filter = ("venue", "kind", "state")
    search_fields = ("source", "description", "receipt")


@admin.register(PlayerLimit)
class PlayerLimitAdmin(ReadOnlyAdmin):
    """A player's (or an anonymous card's) limits: set at the cashier or the terminal (services.limits)."""

    list_display = ("pk", "venue", "player", "card", "kind", "period", "amount", "pending", "pending_amount")
    list_filter = ("venue", "kind", "period", "pending")


@admin.register(PlaySession)
class PlaySessionAdmin(ReadOnlyAdmin):
    list_display = ("pk", "venue", "device", "card", "started_at", "ended_at", "acknowledged")
    list_filter = ("venue",)
    date_hierarchy = "started_at"


@admin.register(RealityCheck)
class RealityCheckAdmin(ReadOnlyAdmin):
    list_display = ("pk", "session", "number", "acknowledged_at", "played_seconds", "staked", "won")
    date_hierarchy = "acknowledged_at"
