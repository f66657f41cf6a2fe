from django.apps import AppConfig


class HallsConfig(AppConfig):
    name = "halls"
    verbose_name = "Halls"
