from django.apps import AppConfig


class HallsConfig(AppConfig):
    name = "halls"
    verbose_name = "Halls"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from halls import sqlite_triggers
        from halls.services import audit_keys  # noqa: F401 - registers its deploy check

        # The append-only triggers on SQLite (pgtrigger makes PostgreSQL's in the migrations).
        post_migrate.connect(sqlite_triggers.install, dispatch_uid="halls.sqlite_append_only")
