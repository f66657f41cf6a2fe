"""The demo's door (issue 27): a small prohibited-access register, loaded once through the register file
loader (halls.door.services.registers.load_register_file, audited like any load), so a newcomer can try
"refused as prohibited" at /admission/ with the listed DNI the banner prints. Every document here is made
up (valid check letters, no real person): never a real register's content."""

from __future__ import annotations

import io
from datetime import date

from demo.hall import DemoHall
from halls.door.models import Register
from halls.door.registerfile import NATIONAL, Header, write_register_file
from halls.door.services import registers

REGISTER_CODE = "RGIAJ-DEMO"
REGISTER_NAME = "RGIAJ (demo)"
# Made-up documents with valid check letters: the first is the one the banner names.
LISTED = (
    ("DNI", "12345678Z", "ES"),
    ("DNI", "87654321X", "ES"),
    ("NIE", "X1234567L", ""),
    ("PASSPORT", "P9876543", "FRA"),
    ("ID_CARD", "T22000129", "DE"),
)
# An adult who is on no register: admitted.
ADMITTED_SAMPLE = "11111111H"


def seed_door(hall: DemoHall) -> None:
    """Load the demo register's first version once, and say how to try the door."""
    if not Register.objects.filter(code=REGISTER_CODE, current_version__isnull=False).exists():
        data = write_register_file(Header(REGISTER_CODE, NATIONAL, 1, date(2026, 1, 1)), list(LISTED))
        registers.load_register_file(stream=io.BytesIO(data), actor=hall.operator, create_name=REGISTER_NAME)
    hall.notes.append(
        f"Door: /admission/ (user door). Register {REGISTER_NAME}: DNI {LISTED[0][1]} is listed (refused as "
        f"prohibited); DNI {ADMITTED_SAMPLE} with an adult's birth date is admitted."
    )
