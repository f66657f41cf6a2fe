from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ElectronicConfig(AppConfig):
    """Electronic and automatic bingo (DESIGN §2: they live in bingo; a sub-app keeps their rows apart)."""

    name = "bingo.electronic"
    label = "electronic"
    verbose_name = _("Electronic bingo")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from bingo.draws import rooms
        from bingo.electronic import tasks
        from bingo.electronic.services import commitments, feed, four_eyes, games

        games.register_draw_enqueuer(tasks.enqueue_draw)
        four_eyes.register()  # its changes behind four eyes (halls.foureyes)
        feed.register()  # its facts on the authority's feed (halls.feed)
        commitments.register_reveal_enqueuer(tasks.enqueue_reveal)
        rooms.register(commitments.ROOM, commitments.DrawReader())  # its public reveal page (bingo.draws)
        _register_screen()


def _register_screen() -> None:
    """The electronic room's section of the hall screens; its pools are shown there, not in the ribbon."""
    from bingo.electronic.services import screens
    from halls import hooks
    from jackpots.services.readmodels import screens as pool_screens

    pool_screens.register_own_display(screens.pools_shown_elsewhere)
    hooks.register_screen_section(
        hooks.ScreenSection(
            name="electronic",
            snapshot=screens.screen_snapshot,
            template="electronic/screen_section.html",
            script="electronic/screen.js",
        )
    )
