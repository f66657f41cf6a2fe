"""Print a document at a till: on its ESC/POS printer when it has one ("tcp://host:9100"), else as a PDF
for the browser to show and print. Every print is audited (``cashier.printed``): a ticket printed twice
is two entries.

Call it after the operation that made the document has committed: the network write may take up to
`escpos.TIMEOUT_SECONDS`, and no lock should wait on a printer. A printer that does not answer raises
`Unavailable` (code ``printer_unreachable``) and writes nothing (no audit entry: nothing was printed).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

from django.db import transaction
from django.utils.translation import gettext as _

from halls.actors import Actor
from halls.cashier.models import Till
from halls.cashier.printing.document import Document
from halls.errors import Conflict, Unavailable
from halls.services import audit


@dataclass(frozen=True)
class PrintResult:
    """``medium`` "printer": sent to ``printer``; "pdf": ``pdf`` holds the file (application/pdf)."""

    medium: Literal["printer", "pdf"]
    size: int
    sha256: str
    printer: str = ""
    pdf: bytes | None = None


def print_document(*, till: Till, document: Document, actor: Actor, subject: Any = None) -> PrintResult:
    """Print ``document`` at ``till``; ``subject`` (the ticket, the payable, the shift...) is what the audit
    entry names, the till when None."""
    # Imported here: python-escpos reads its printer database and reportlab loads its fonts on import
    # (about a second), which no process that never prints should pay at start.
    from halls.cashier.printing import escpos, pdf

    if till.printer.strip():
        try:
            address = escpos.parse_address(till.printer)
        except ValueError as exc:
            raise Conflict(
                _("Till %(till)s has a printer address that is not tcp://host:port: %(address)s.")
                % {"till": till.name, "address": till.printer},
                code="printer_address_invalid",
            ) from exc
        data = escpos.render(document)
        try:
            escpos.send(address, data)
        except escpos.PrinterUnreachable as exc:
            raise Unavailable(
                _("The printer of till %(till)s (%(address)s) did not answer: %(reason)s.")
                % {"till": till.name, "address": str(address), "reason": str(exc)},
                code="printer_unreachable",
            ) from exc
        result = PrintResult("printer", len(data), hashlib.sha256(data).hexdigest(), printer=str(address))
    else:
        data = pdf.render(document)
        result = PrintResult("pdf", len(data), hashlib.sha256(data).hexdigest(), pdf=data)
    with transaction.atomic():
        audit.record(
            venue_id=till.venue_id,
            actor=actor,
            action="cashier.printed",
            obj=subject if subject is not None else till,
            data={
                "till": till.name,
                "medium": result.medium,
                "printer": result.printer,
                "kind": document.kind,
                "title": document.title,
                "barcode": document.barcode.value if document.barcode else "",
                "size": result.size,
                "sha256": result.sha256,
            },
        )
    return result
