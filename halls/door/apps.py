from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DoorConfig(AppConfig):
    """The door (DESIGN §2: the door and the cage live in halls beside the cashier): identity documents and
    the prohibited-access registers they are checked against; later admission, players, limits and AML."""

    name = "halls.door"
    label = "door"
    verbose_name = _("Admission")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from halls.door import checks  # noqa: F401 - registers its deploy check

        # Four eyes: a register's file loads, and an override is recorded, with two people's names.
        from halls.door.services import proposal_kinds

        proposal_kinds.register()
