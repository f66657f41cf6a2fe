from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TaxConfig(AppConfig):
    """Gaming-tax returns (issue 29): per venue and period, the taxable bases by game type as the
    jurisdiction's rate table defines them, the amount due, the return as PDF and CSV, filed append-only and
    sent on the feed. The figures come from the apps above through halls.tax.hooks."""

    name = "halls.tax"
    label = "tax"
    verbose_name = _("Gaming tax")
    default_auto_field = "django.db.models.BigAutoField"
