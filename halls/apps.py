from django.apps import AppConfig


class HallsConfig(AppConfig):
    name = "halls"
    verbose_name = "Halls"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from halls import fanout
        from halls.models import Screen

        # A screen deactivated, deleted or moved: its open sockets close at once (halls.fanout).
        post_save.connect(fanout.screen_changed, sender=Screen, dispatch_uid="halls.screen_changed")
        post_delete.connect(fanout.screen_changed, sender=Screen, dispatch_uid="halls.screen_deleted")
