from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CageConfig(AppConfig):
    """The cage (DESIGN §2: the door and the cage live in halls beside the cashier): anti-money-laundering
    at the payout. The winner of a payout at or above the threshold identified, every payout tied to a
    person recorded, structuring and little play flagged for the venue's AML officer."""

    name = "halls.cage"
    label = "cage"
    verbose_name = _("Cage (anti-money-laundering)")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The cashier asks the cage before a payout and tells it after (halls.cashier.hooks): the cashier
        # never imports the cage.
        from halls.cage.services.gate import GATE
        from halls.cashier.hooks import register_payout_guard

        register_payout_guard(GATE)
