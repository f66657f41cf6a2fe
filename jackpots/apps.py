from django.apps import AppConfig


class JackpotsConfig(AppConfig):
    name = "jackpots"
    verbose_name = "Jackpots"
