"""Reads back the codes of a PDF the printing module made, from the filled rectangles of its first page:
an Interleaved 2 of 5 barcode decoded from its bars and spaces, a QR code as its matrix of modules."""

from __future__ import annotations

import io
import itertools
import re
from collections import Counter

import pypdf
import qrcode
import qrcode.util

RECT = re.compile(rb"(-?[\d.]+) (-?[\d.]+) (-?[\d.]+) (-?[\d.]+) re f\*?")
ITF_DIGITS = {
    "nnwwn": "0", "wnnnw": "1", "nwnnw": "2", "wwnnn": "3", "nnwnw": "4",
    "wnwnn": "5", "nwwnn": "6", "nnnww": "7", "wnnwn": "8", "nwnwn": "9",
}  # fmt: skip

Rect = tuple[float, float, float, float]


def filled_rects(pdf: bytes) -> list[Rect]:
    content = pypdf.PdfReader(io.BytesIO(pdf)).pages[0].get_contents()
    assert content is not None
    data = content.get_data()
    return [(float(x), float(y), float(w), float(h)) for x, y, w, h in RECT.findall(data)]


def itf_value(rects: list[Rect], bar_height: float) -> str:
    """The digits of the one ITF symbol whose bars are ``bar_height`` points tall."""
    bars = sorted((x, w) for x, _, w, h in rects if abs(h - bar_height) < 0.01)
    assert len(bars) >= 7, "no ITF symbol"
    elements = []
    for (x, w), (nx, _) in itertools.pairwise(bars):
        elements += [w, nx - x - w]
    elements.append(bars[-1][1])
    narrow = min(elements)
    kinds = "".join("w" if e > 1.5 * narrow else "n" for e in elements)
    assert kinds[:4] == "nnnn" and kinds[-3:] == "wnn", f"no ITF start/stop: {kinds}"
    body = kinds[4:-3]
    assert len(body) % 10 == 0
    digits = []
    for i in range(0, len(body), 10):
        pair = body[i : i + 10]
        digits += [ITF_DIGITS[pair[0::2]], ITF_DIGITS[pair[1::2]]]
    return "".join(digits)


def qr_matrix(rects: list[Rect]) -> list[list[bool]]:
    """The QR symbol's modules, from the runs of dark modules drawn row by row."""
    module = Counter(round(h, 4) for _, _, _, h in rects).most_common(1)[0][0]
    runs = [(x, y, w) for x, y, w, h in rects if round(h, 4) == module]
    left, top = min(x for x, _, _ in runs), max(y for _, y, _ in runs)
    cells = {
        (round((top - y) / module), round((x - left) / module) + i)
        for x, y, w in runs
        for i in range(round(w / module))
    }
    size = max(max(r, c) for r, c in cells) + 1
    return [[(r, c) in cells for c in range(size)] for r in range(size)]


def qr_matrix_of(payload: str, version: int, mode: int, mask: int) -> list[list[bool]]:
    """The matrix the `qrcode` library (not reportlab's encoder) makes of ``payload``, level M."""
    code = qrcode.QRCode(
        version=version, error_correction=qrcode.ERROR_CORRECT_M, border=0, mask_pattern=mask
    )
    code.add_data(qrcode.util.QRData(payload.encode(), mode=mode))
    code.make(fit=False)
    return [[bool(cell) for cell in row] for row in code.modules]


def is_qr_of(matrix: list[list[bool]], payload: str) -> bool:
    """Whether ``matrix`` is the level-M QR code of ``payload`` in one of its single-mode encodings (the
    mask read from the matrix by trying each)."""
    version = (len(matrix) - 17) // 4
    modes = [qrcode.util.MODE_8BIT_BYTE]
    if all(ch in qrcode.util.ALPHA_NUM.decode() for ch in payload):
        modes.append(qrcode.util.MODE_ALPHA_NUM)
    if payload.isdigit():
        modes.append(qrcode.util.MODE_NUMBER)
    return any(qr_matrix_of(payload, version, mode, mask) == matrix for mode in modes for mask in range(8))


def code128_value(rects: list[Rect], bar_height: float) -> str:
    """The text of the one CODE128 symbol whose bars are ``bar_height`` points tall, its check symbol
    verified; the patterns are python-barcode's table, not reportlab's."""
    from barcode.charsets import code128

    bars = sorted((x, w) for x, _, w, h in rects if abs(h - bar_height) < 0.01)
    assert bars, "no CODE128 symbol"
    module = min(w for _, w in bars)
    bits = ""
    for (x, w), (nx, _) in itertools.pairwise(bars):
        bits += "1" * round(w / module) + "0" * round((nx - x - w) / module)
    bits += "1" * round(bars[-1][1] / module)
    assert bits.endswith(code128.STOP + "11") and len(bits) % 11 == 2, "no stop pattern"
    values = [code128.CODES.index(bits[i : i + 11]) for i in range(0, len(bits) - 13, 11)]
    start, *data, check = values
    assert start in (103, 104, 105), "no start symbol"
    assert (start + sum(i * v for i, v in enumerate(data, 1))) % 103 == check, "bad check symbol"
    subset, out = {103: "A", 104: "B", 105: "C"}[start], []
    switches = {99: "C", 100: "B", 101: "A"}
    for value in data:
        if value in switches and not (subset == "C" and value == 99):
            subset = switches[value]
        elif subset == "C":
            out.append(f"{value:02d}")
        else:  # A or B; the printable characters are the same
            out.append(chr(value + 32))
    return "".join(out)
