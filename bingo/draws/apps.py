from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DrawsConfig(AppConfig):
    """The draws' commitments, sealed seeds and reveals (shared by every bingo wing)."""

    name = "bingo.draws"
    label = "bingo_draws"
    verbose_name = _("Verifiable draws")

    def ready(self) -> None:
        from bingo.draws import checks  # noqa: F401 (registers the deploy check)
