from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HallsConfig(AppConfig):
    name = "halls"
    verbose_name = _("Halls")

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_migrate, post_save, pre_migrate

        from halls import fanout, sqlite_triggers
        from halls.models import Screen
        from halls.services import audit_keys  # noqa: F401 - registers its deploy check

        # The append-only triggers on SQLite (pgtrigger makes PostgreSQL's in the migrations).
        # Off while migrations run (they may rewrite protected rows), on again after.
        pre_migrate.connect(sqlite_triggers.drop, dispatch_uid="halls.sqlite_append_only_off")
        post_migrate.connect(sqlite_triggers.install, dispatch_uid="halls.sqlite_append_only")
        # A screen deactivated, deleted or moved: its open sockets close at once (halls.fanout).
        post_save.connect(fanout.screen_changed, sender=Screen, dispatch_uid="halls.screen_changed")
        post_delete.connect(fanout.screen_changed, sender=Screen, dispatch_uid="halls.screen_deleted")
