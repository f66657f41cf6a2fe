from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DemoConfig(AppConfig):
    name = "demo"
    verbose_name = _("Demo hall")

    def ready(self) -> None:
        from bingo.traditional import hooks
        from demo import autoplay

        # The self-playing rooms claim their winners after every ball the draw task draws.
        hooks.register_room_player(
            hooks.RoomPlayer(plays=autoplay.playing_room_ids, after_ball=autoplay.after_ball)
        )
