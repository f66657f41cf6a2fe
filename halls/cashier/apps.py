from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CashierConfig(AppConfig):
    """The hall's cashier (DESIGN §2: halls keeps the cashier and the money ledger)."""

    name = "halls.cashier"
    label = "cashier"
    verbose_name = _("Cashier")
    default_auto_field = "django.db.models.BigAutoField"
