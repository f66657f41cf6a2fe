"""The gaming tax's rows: the rate tables (data the operator enters per jurisdiction, with their legal
reference and validity) and the returns filed (append-only, with the SHA-256 of their CSV)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from halls.fields import MoneyField
from halls.models import Jurisdiction, Venue, append_only


class Rounding(models.TextChoices):
    HALF_UP = "half_up", _("To the nearest cent (half a cent up)")
    DOWN = "down", _("Down to the cent")


class Basis(models.TextChoices):
    SALES = "sales", _("Card sales at face value")
    NET = "net", _("Bets less prizes")
    DROP = "drop", _("Table drop")
    MACHINES = "machines", _("Fixed fee per machine")


class PeriodKind(models.TextChoices):
    MONTH = "month", _("Month")
    QUARTER = "quarter", _("Quarter")


class RateTable(models.Model):
    """A jurisdiction's gaming-tax rates for the days from ``valid_from`` to ``valid_until`` (open-ended
    when blank), as its legal text (``reference``) sets them. ``lines``: one per game type, as
    halls.tax.services.rates checks them: {"game_type", "basis", "rate_percent" (a decimal string or null),
    "fee_per_machine" (a money string or null)}. Changed only through that service, and only until a return
    is filed with it (then a new table is recorded instead)."""

    jurisdiction = models.CharField(
        max_length=4, choices=Jurisdiction.choices, verbose_name=_("jurisdiction")
    )
    reference = models.CharField(max_length=240, verbose_name=_("legal reference"))
    valid_from = models.DateField(verbose_name=_("valid from"))
    valid_until = models.DateField(null=True, blank=True, verbose_name=_("valid until"))
    rounding = models.CharField(
        max_length=8, choices=Rounding.choices, default=Rounding.HALF_UP, verbose_name=_("rounding")
    )
    lines = models.JSONField(default=list, verbose_name=_("rates by game type"))
    recorded_at = models.DateTimeField(verbose_name=_("recorded at"))
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("recorded by"),
    )
    changed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("changed at"))

    class Meta:
        verbose_name = _("tax rate table")
        verbose_name_plural = _("tax rate tables")
        ordering = ["jurisdiction", "valid_from"]
        constraints = [
            models.CheckConstraint(
                condition=Q(valid_until__isnull=True) | Q(valid_until__gte=F("valid_from")),
                name="tax_rate_table_valid_range",
            ),
            models.UniqueConstraint(
                fields=["jurisdiction", "valid_from"], name="tax_rate_table_one_start_per_jurisdiction"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.jurisdiction} {self.valid_from}: {self.reference}"


class TaxReturn(models.Model):
    """A venue's return for a period, as filed: frozen (append-only), with its figures, rates, amount due,
    the CSV filed and that CSV's SHA-256."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    jurisdiction = models.CharField(
        max_length=4, choices=Jurisdiction.choices, verbose_name=_("jurisdiction")
    )
    period = models.CharField(max_length=7, verbose_name=_("period"))  # "2026-11" or "2026-Q4"
    period_kind = models.CharField(max_length=8, choices=PeriodKind.choices, verbose_name=_("period kind"))
    first_day = models.DateField(verbose_name=_("first day"))
    last_day = models.DateField(verbose_name=_("last day"))
    rate_table = models.ForeignKey(
        RateTable, on_delete=models.PROTECT, related_name="returns", verbose_name=_("rate table")
    )
    rate_reference = models.CharField(max_length=240, verbose_name=_("legal reference"))
    rounding = models.CharField(max_length=8, choices=Rounding.choices, verbose_name=_("rounding"))
    lines = models.JSONField(verbose_name=_("lines"))  # halls.tax.compute.line_row per line, by COLUMNS
    total_due = MoneyField(max_digits=14, decimal_places=2, verbose_name=_("amount due"))
    csv = models.TextField(verbose_name=_("CSV filed"))
    digest = models.CharField(max_length=64, verbose_name=_("SHA-256 of the CSV"))
    filed_at = models.DateTimeField(verbose_name=_("filed at"))
    filed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("filed by"),
    )
    filed_by_label = models.CharField(max_length=150, verbose_name=_("filed by (label)"))

    class Meta:
        verbose_name = _("tax return")
        verbose_name_plural = _("tax returns")
        ordering = ["venue", "-first_day"]
        constraints = [
            models.UniqueConstraint(fields=["venue", "period"], name="tax_return_once_per_period"),
            models.CheckConstraint(condition=Q(last_day__gte=F("first_day")), name="tax_return_days"),
        ]
        triggers = [append_only()]

    def __str__(self) -> str:
        return f"{self.venue_id} {self.period}"
