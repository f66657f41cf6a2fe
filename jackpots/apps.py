from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class JackpotsConfig(AppConfig):
    name = "jackpots"
    verbose_name = _("Jackpots")

    def ready(self) -> None:
        from halls import hooks
        from jackpots.services import notify, screen_events
        from jackpots.services.readmodels import screens

        notify.register_pool_event_listener(screen_events.on_pool_event)
        # Four eyes: a pool's parameters and its members change only through an approved proposal.
        from jackpots.services import proposal_kinds

        proposal_kinds.register()
        # Every pool's chain of ledger seals: anchored outside the database and verified with the venues'.
        from jackpots.services import seals

        hooks.register_chain(seals.chain_heads, seals.verify_chains)
        hooks.register_screen_section(
            hooks.ScreenSection(
                name="jackpots",
                snapshot=screens.screen_snapshot,
                template="jackpots/screen_section.html",
                script="jackpots/screen.js",
            )
        )
