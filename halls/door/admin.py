"""The registers in the operator's admin: read only (they change by loading a file, `manage.py load_register`,
through halls.door.services.registers, audited). Entries are not shown: they are digests, not people."""

from __future__ import annotations

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from halls.admin import ReadOnlyAdmin
from halls.door.models import Register, RegisterVersion


@admin.register(Register)
class RegisterAdmin(ReadOnlyAdmin):
    list_display = ("code", "name", "scope", "current_version")

    @admin.display(description=_("jurisdiction"))
    def scope(self, register: Register) -> str:
        return str(register.get_jurisdiction_display()) if register.jurisdiction else str(_("national"))


@admin.register(RegisterVersion)
class RegisterVersionAdmin(ReadOnlyAdmin):
    list_display = (
        "register",
        "number",
        "issued_on",
        "entry_count",
        "loaded_at",
        "loaded_by_label",
        "superseded_at",
    )
    list_filter = ("register",)
