from django.apps import AppConfig


class HallsConfig(AppConfig):
    name = "halls"
    verbose_name = "Halls"

    def ready(self) -> None:
        from halls.services import audit_keys  # noqa: F401 - registers its deploy check
