from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SimultaneousConfig(AppConfig):
    """Simultaneous bingo (SB-01, OP-19): one network game, one central draw, every member hall."""

    name = "bingo.network.simultaneous"
    label = "bingo_simultaneous"
    verbose_name = _("Simultaneous bingo")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from bingo.draws import rooms
        from bingo.network.simultaneous import link_handlers, tasks
        from bingo.network.simultaneous.services import central, commitments, decisions, feed, pages, venue
        from bingo.traditional import hooks

        hooks.register_game_guard(venue.guard)
        hooks.register_console_links(pages.console_links)
        hooks.register_decided_prizes(decisions.decided_prizes)
        central.register_step_enqueuer(tasks.enqueue_network_ball, tasks.enqueue_decision)
        venue.register_apply_enqueuer(tasks.enqueue_apply)
        commitments.register_reveal_enqueuer(tasks.enqueue_reveal)
        rooms.register(commitments.ROOM, commitments.DrawReader())  # its public reveal page (bingo.draws)
        link_handlers.register()
        feed.register()  # its facts on the authority's feed (halls.feed)
