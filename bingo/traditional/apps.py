from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BingoConfig(AppConfig):
    """Traditional bingo. Its label stays "bingo": the tables, migrations and permissions of every existing
    installation keep their names (bingo_game, bingo.0001_initial, bingo.add_game)."""

    name = "bingo.traditional"
    label = "bingo"
    verbose_name = _("Bingo")

    def ready(self) -> None:
        from bingo.draws import rooms as draw_rooms
        from bingo.traditional import tasks
        from bingo.traditional.services import commitments, draw, feed, four_eyes
        from bingo.traditional.services.games import between_games_guard, session_close_guard
        from bingo.traditional.services.programs import play as programs
        from bingo.traditional.services.programs.readmodels import program_pool_ids
        from bingo.traditional.services.readmodels import screen_snapshot
        from halls import hooks
        from jackpots.services import guards
        from jackpots.services.readmodels import screens as pool_screens

        draw.register_step_enqueuer(tasks.enqueue_draw_step)
        commitments.register_reveal_enqueuer(tasks.enqueue_reveal)
        draw_rooms.register(commitments.ROOM, commitments.Reader())
        four_eyes.register()  # its changes behind four eyes (halls.foureyes)
        hooks.register_session_close_guard(session_close_guard)
        hooks.register_between_games_guard(between_games_guard)
        hooks.register_session_closed(programs.session_closed)
        feed.register()  # its facts on the authority's feed (halls.feed): after the programs' listener
        guards.register_open_play_guard(programs.open_play_guard)
        # Programs are announced with the game and paid with the Bingo: not in the pools ribbon too.
        pool_screens.register_own_display(program_pool_ids)
        hooks.register_screen_section(
            hooks.ScreenSection(
                name="bingo",
                snapshot=screen_snapshot,
                template="bingo/screen_section.html",
                script="bingo/screen.js",
            )
        )
