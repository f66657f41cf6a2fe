"""Reads the ESC/POS bytes the printing module writes, command by command, as a printer would: text rows
(decoded in the selected code page), barcodes (GS k), QR codes (GS ( k), cuts. An unknown command fails
the read, so nothing reaches the printer that the tests have not looked at."""

from __future__ import annotations

from dataclasses import dataclass, field

ESC, GS, LF, NUL = 0x1B, 0x1D, 0x0A, 0x00
CODE_PAGES = {0: "cp437", 2: "cp850", 16: "cp1252", 19: "cp858"}
BARCODE_B = {65: "UPC-A", 66: "UPC-E", 67: "EAN13", 68: "EAN8", 69: "CODE39", 70: "ITF", 73: "CODE128"}


@dataclass
class Slip:
    rows: list[str] = field(default_factory=list)
    barcodes: list[tuple[str, bytes]] = field(default_factory=list)  # (symbology, data)
    qr: list[str] = field(default_factory=list)
    big_rows: list[str] = field(default_factory=list)
    cuts: int = 0
    code_page: str = ""

    @property
    def text(self) -> str:
        return "\n".join(self.rows)


def code128_value(data: bytes) -> str:
    """The characters a GS k CODE128 data stream encodes: "{B" ASCII, "{C" digit pairs as byte values."""
    out, subset, i = [], "", 0
    while i < len(data):
        if data[i] == ord("{") and i + 1 < len(data):
            mark = chr(data[i + 1])
            if mark in "ABC":
                subset, i = mark, i + 2
                continue
            if mark == "{":
                out.append("{")
                i += 2
                continue
        out.append(f"{data[i]:02d}" if subset == "C" else chr(data[i]))
        i += 1
    return "".join(out)


def read(data: bytes) -> Slip:
    slip = Slip()
    codec, row, big, i = "cp437", bytearray(), False, 0

    def end_row() -> None:
        nonlocal row
        text = row.decode(codec)
        slip.rows.append(text)
        if big:
            slip.big_rows.append(text)
        row = bytearray()

    while i < len(data):
        byte = data[i]
        if byte == LF:
            end_row()
            i += 1
        elif byte == ESC:
            cmd, arg = chr(data[i + 1]), data[i + 2] if i + 2 < len(data) else None
            if cmd == "@":
                i += 2
            elif cmd == "t":
                assert arg in CODE_PAGES, f"code page {arg}"
                codec = slip.code_page = CODE_PAGES[arg]
                i += 3
            elif cmd == "!":
                assert arg is not None
                big = bool(arg & 0x30)
                i += 3
            elif cmd in "Ead":
                i += 3
            else:
                raise AssertionError(f"unknown ESC {cmd!r} at {i}")
        elif byte == GS:
            cmd = chr(data[i + 1])
            if cmd in "hwfH":
                i += 3
            elif cmd == "V":
                slip.cuts += 1
                i += 4 if data[i + 2] in (65, 66) else 3
            elif cmd == "k":
                m = data[i + 2]
                if m >= 65:
                    n = data[i + 3]
                    slip.barcodes.append((BARCODE_B[m], bytes(data[i + 4 : i + 4 + n])))
                    i += 4 + n
                else:
                    end = data.index(NUL, i + 3)
                    slip.barcodes.append((f"A{m}", bytes(data[i + 3 : end])))
                    i = end + 1
            elif cmd == "(" and chr(data[i + 2]) == "k":
                size = data[i + 3] + 256 * data[i + 4]
                body = data[i + 5 : i + 5 + size]
                if body[:3] == b"1P0":  # store the QR symbol's data
                    slip.qr.append(bytes(body[3:]).decode("utf-8"))
                i += 5 + size
            else:
                raise AssertionError(f"unknown GS {cmd!r} at {i}")
        else:
            assert byte >= 0x20, f"control byte {byte:#x} at {i}"
            row.append(byte)
            i += 1
    assert not row, f"text left without a line feed: {bytes(row)!r}"
    return slip
