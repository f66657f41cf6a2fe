from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CashierConfig(AppConfig):
    """The hall's cashier (DESIGN §2: halls keeps the cashier and the money ledger)."""

    name = "halls.cashier"
    label = "cashier"
    verbose_name = _("Cashier")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from halls import hooks
        from halls.cashier.services import ledger_seals

        # Every venue's ledger checked against the entries that sealed it in the venue's audit chain.
        hooks.register_chain(ledger_seals.chain_heads, ledger_seals.verify_chains)
