"""A `Document` as ESC/POS bytes (python-escpos' `Dummy` printer records them) and their delivery to a
network printer ("tcp://host:9100", python-escpos' `Network`).

Only `escpos.printer.Dummy` and `Network` are used: they need neither libusb nor CUPS (python-escpos
imports those lazily, for its USB and CUPS printers). Barcodes and QR codes use the printer's own
commands (GS k, GS ( k), so no image is rendered here. Text goes out in code page CP858 (Latin-1 letters
and the euro sign, on every Epson-compatible printer); a character it lacks prints as "?".
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from urllib.parse import urlsplit

from halls.cashier.printing.document import (
    RECEIPT_COLUMNS,
    Align,
    Barcode,
    BarcodeRow,
    Document,
    QrRow,
    Row,
    Symbology,
    layout,
)


def _import_escpos() -> None:
    """Import python-escpos with its printer database cached in a folder of this import's own, removed
    after: by default it leaves a new temporary folder per process, and a shared folder would let one
    process read the pickle another is still writing (or one another user planted)."""
    key = "ESCPOS_CAPABILITIES_PICKLE_DIR"
    previous = os.environ.get(key)
    with tempfile.TemporaryDirectory(prefix="escpos-") as cache:
        os.environ[key] = cache
        try:
            import escpos.capabilities  # noqa: F401 - reads the database, once per process
        finally:
            if previous is None:
                del os.environ[key]
            else:
                os.environ[key] = previous


_import_escpos()

from escpos.constants import QR_ECLEVEL_M  # noqa: E402
from escpos.exceptions import DeviceNotFoundError  # noqa: E402
from escpos.printer import Dummy, Network  # noqa: E402

CODE_PAGE = "CP858"
TIMEOUT_SECONDS = 5.0
BARCODE_HEIGHT_DOTS = 80
BARCODE_MODULE_DOTS = 2  # 18 digits of ITF or CODE128 set C at 2 dots a module fit a 512-dot head
QR_MODULE_DOTS = 6


class PrinterUnreachable(Exception):
    """The printer did not take the bytes: refused, timed out, unknown host, connection lost."""


@dataclass(frozen=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        return f"tcp://{self.host}:{self.port}"


def parse_address(text: str) -> Address:
    """ "tcp://host:port" (port 9100 when left out); ValueError otherwise."""
    parts = urlsplit(text.strip())
    if parts.scheme != "tcp" or not parts.hostname or parts.path not in ("", "/"):
        raise ValueError(f"not a printer address tcp://host:port: {text!r}")
    try:
        port = parts.port or 9100
    except ValueError as exc:
        raise ValueError(f"bad port in printer address {text!r}") from exc
    return Address(parts.hostname, port)


def render(document: Document, *, columns: int = RECEIPT_COLUMNS, cut: bool = True) -> bytes:
    """The ESC/POS bytes of ``document``: initialise, code page, rows, codes, feed and cut."""
    printer = Dummy()
    printer.hw("INIT")
    printer.charcode(CODE_PAGE)
    for item in layout(document, columns):
        if isinstance(item, Row):
            _row(printer, item)
        elif isinstance(item, BarcodeRow):
            _barcode(printer, item.barcode)
        elif isinstance(item, QrRow):
            _qr(printer, item.payload)
    if cut:
        printer.cut()  # feeds past the cutter first
    return bytes(printer.output)


def _row(printer: Dummy, row: Row) -> None:
    printer.set(
        align=row.align.value,
        bold=row.bold,
        double_width=row.big,
        double_height=row.big,
        normal_textsize=not row.big,
    )
    printer.textln(row.text)


def barcode_data(barcode: Barcode) -> str:
    """The data of the GS k command: ITF digits as they are; CODE128 in set C (digit pairs as byte values,
    half as wide) for an even count of digits, set B (ASCII) otherwise."""
    if barcode.symbology is Symbology.ITF:
        return barcode.value
    if barcode.value.isdigit() and len(barcode.value) % 2 == 0:
        pairs = [int(barcode.value[i : i + 2]) for i in range(0, len(barcode.value), 2)]
        return "{C" + "".join(chr(pair) for pair in pairs)
    return "{B" + barcode.value.replace("{", "{{")


def _barcode(printer: Dummy, barcode: Barcode) -> None:
    printer.set(align=Align.CENTER.value, normal_textsize=True)
    # The hardware renderer directly (function type B, length-prefixed): `barcode()` would choose it too
    # but prints its choice to stdout.
    printer._hw_barcode(
        barcode_data(barcode),
        barcode.symbology.value,
        height=BARCODE_HEIGHT_DOTS,
        width=BARCODE_MODULE_DOTS,
        pos="OFF" if barcode.symbology is Symbology.CODE128 else "BELOW",
        function_type="B",
    )
    if barcode.symbology is Symbology.CODE128:  # set C's digits would not print legibly under the bars
        printer.textln(barcode.value)
    printer.ln()


def _qr(printer: Dummy, payload: str) -> None:
    printer.set(align=Align.CENTER.value, normal_textsize=True)
    printer.qr(payload, ec=QR_ECLEVEL_M, size=QR_MODULE_DOTS, native=True)  # M: as the PDF's
    printer.ln()


def send(address: Address, data: bytes, *, timeout: float = TIMEOUT_SECONDS) -> None:
    """Write ``data`` to the printer at ``address`` and close; PrinterUnreachable when it cannot."""
    printer = Network(address.host, address.port, timeout=timeout)
    try:
        printer.open()
        printer._raw(data)
    except (DeviceNotFoundError, OSError) as exc:
        raise PrinterUnreachable(_reason(exc)) from exc
    finally:
        printer.close()


def _reason(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__ or exc
    if isinstance(exc, DeviceNotFoundError) and cause is exc:
        return str(exc).splitlines()[-1]
    if isinstance(cause, TimeoutError):
        return "timed out"
    return str(cause) or type(cause).__name__
