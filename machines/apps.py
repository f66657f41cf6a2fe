from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MachinesConfig(AppConfig):
    name = "machines"
    verbose_name = _("Machines")

    def ready(self) -> None:
        # A pool member "machine:<id>" must be a machine of the member's venue (jackpots.services.sources).
        from halls.cashier.models import PayableKind
        from halls.cashier.services.payables import register_payer
        from jackpots.services.sources import by_pk, register_source_resolver
        from machines.models import Machine
        from machines.services.handpay import pay_at_cashier

        machines = Machine.objects.all()
        register_source_resolver(
            "machine", by_pk(lambda pk: machines.filter(pk=pk).values_list("venue_id", flat=True).first())
        )
        # A machine's hand pay paid at the cashier takes the machine's locks first and unlocks it.
        register_payer(PayableKind.MACHINE, pay_at_cashier)
        # A machine's wide-area hit, decided at the central, is paid (or the machine unlocked) here.
        from jackpots.widearea.hooks import register_payer as register_wide_area_payer
        from machines.services.widearea import pay_claim

        register_wide_area_payer("machine", pay_claim)
        # Four eyes: a machine joins or leaves a link's pool only through an approved proposal.
        from machines.services import proposal_kinds

        proposal_kinds.register()
        # The gaming-tax returns read the machines' meters from here (halls.tax never imports machines).
        from halls.tax.hooks import register_figures
        from machines.taxfigures import SOURCE

        register_figures(SOURCE)
