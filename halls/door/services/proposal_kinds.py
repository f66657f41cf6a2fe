"""The door's changes behind four eyes (halls.foureyes): loading a prohibited-access register's file, and
the admission override.

- ``door.register_load`` (target ``register:<code>``; params: path, sha256, register, version, and
  create_name): proposed by an operator (``manage.py load_register``), approved by another operator of the
  venue. The whole file is checked when proposed (a bad one is refused at once, naming the line); the
  applier reads it again and loads it only if its SHA-256 is still the proposed one.
- ``door.override`` (target ``visit:<id>``): never proposed alone; the door records it already decided
  (halls.services.proposals.record_decided) when a second person confirmed an override with their own
  password at the door. Its params are the visit's id and door, never the document.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from halls.door.registerfile import RegisterFile, RegisterFileError
from halls.door.services import registers
from halls.door.texts import file_problem
from halls.errors import Conflict, InvalidInput
from halls.foureyes import Kind, register_kind
from halls.models import Proposal, Role, Venue

REGISTER_LOAD = "door.register_load"
OVERRIDE = "door.override"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unreadable(path: Path, exc: OSError) -> InvalidInput:
    return InvalidInput(
        _("Cannot read %(file)s: %(why)s") % {"file": path, "why": exc.strerror},
        code="register_file_unreadable",
    )


def _validate_load(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    path = Path(str(params.get("path", ""))).resolve()
    try:
        with path.open("rb") as stream:
            reader = RegisterFile(stream)
            header = reader.header
            for _document in reader.documents():  # every line and the trailer checked now, nothing kept
                pass
        sha256 = file_sha256(path)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    except RegisterFileError as exc:
        raise InvalidInput(
            file_problem(exc), code=f"register_file_{exc.problem.value}", line=exc.line
        ) from None
    create_name = str(params.get("create_name") or "").strip()
    return {
        "path": str(path),
        "sha256": sha256,
        "register": header.register,
        "version": header.version,
        "create_name": create_name,
    }


def _apply_load(proposal: Proposal, approver: User) -> dict[str, Any]:
    params = proposal.params
    path = Path(params["path"])
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with stream:
        if file_sha256(path) != params["sha256"]:
            raise Conflict(
                _("The register file changed since it was proposed: propose the new file."),
                code="register_file_changed",
            )
        version = registers.load_register_file(
            stream=stream, actor=approver, create_name=params["create_name"] or None
        )
    return {"register": version.register.code, "version": version.number, "entries": version.entry_count}


def _validate_override(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    raise InvalidInput(
        _("An admission override is decided at the door, with the second person there."), code="door_only"
    )


def _apply_override(proposal: Proposal, approver: User) -> dict[str, Any]:
    raise InvalidInput(
        _("An admission override is decided at the door, with the second person there."), code="door_only"
    )


def register() -> None:
    register_kind(
        Kind(
            REGISTER_LOAD,
            gettext_lazy("Load a prohibited-access register"),
            (Role.OPERATOR,),
            _validate_load,
            _apply_load,
            api=False,  # a file on the server: proposed by `manage.py load_register` only
        )
    )
    register_kind(
        Kind(
            OVERRIDE,
            gettext_lazy("Admission override at the door"),
            (Role.OPERATOR, Role.DOOR),
            _validate_override,
            _apply_override,
            api=False,
        )
    )
