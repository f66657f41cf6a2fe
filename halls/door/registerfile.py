"""A prohibited-access register's file, read as a stream, pure (no Django).

The shape (UTF-8 text, one record a line, fields separated by commas, no quoting; blanks around a field are
ignored; lines end in LF or CRLF)::

    REGISTER,RGIAJ,NATIONAL,42,2026-12-01
    DNI,12345678Z,ES
    NIE,X1234567L,
    PASSPORT,AB1234567,FRA
    ID_CARD,T22000129,DE
    END,4,<sha256>

- the header: ``REGISTER``, the register's code, its jurisdiction (``NATIONAL`` for a state-wide register
  such as the RGIAJ, else the code of the jurisdiction it is of: ML, AN96, ...), the version (a whole
  number that grows with every issue) and the issue date (YYYY-MM-DD);
- one line per person: the document's kind (DNI, NIE, PASSPORT, ID_CARD), its number and its issuing state
  (ISO 3166-1 alpha-2 or alpha-3; blank or ES for a DNI or NIE), as halls.door.documents reads them;
- the trailer: ``END``, how many person lines there are, and the SHA-256 (hex) of every byte of the file
  before the trailer line (the header and the person lines, with their line ends).

Nothing else: no blank line, nothing after the trailer. A register's reasons are not in the file and never
in the product. `RegisterFile(stream).documents()` yields each person's `Document` in order and, at the end,
checks the trailer; any problem raises `RegisterFileError` with the line number and what is wrong, never
the line's content (a person's number stays out of messages and logs).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import BinaryIO

from halls.door.documents import Document, Problem, read_document

HEADER = "REGISTER"
TRAILER = "END"
NATIONAL = "NATIONAL"
_CODE = re.compile(r"[A-Z0-9][A-Z0-9_\-]{0,19}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


class FileProblem(StrEnum):
    EMPTY = "empty"  # no header line at all
    BAD_HEADER = "bad_header"  # the first line is not REGISTER,code,jurisdiction,version,date
    BAD_LINE = "bad_line"  # a person's line is not kind,number,country (its document problem says why)
    BAD_DOCUMENT = "bad_document"  # a person's document is refused (see `document_problem`)
    NO_TRAILER = "no_trailer"  # the file ends before its END line: truncated
    BAD_TRAILER = "bad_trailer"  # the END line is not END,count,sha256
    COUNT_MISMATCH = "count_mismatch"  # the END line counts another number of person lines
    DIGEST_MISMATCH = "digest_mismatch"  # the lines before END are not the ones the digest was made of
    AFTER_TRAILER = "after_trailer"  # something follows the END line
    NOT_TEXT = "not_text"  # a line is not UTF-8 text


class RegisterFileError(Exception):
    """What is wrong with the file and where (1-based line number), never a line's content."""

    def __init__(self, problem: FileProblem, line: int, document_problem: Problem | None = None) -> None:
        why = f" ({document_problem.value})" if document_problem else ""
        super().__init__(f"line {line}: {problem.value}{why}")
        self.problem = problem
        self.line = line
        self.document_problem = document_problem


@dataclass(frozen=True, slots=True)
class Header:
    register: str  # the register's code, upper case
    jurisdiction: str  # NATIONAL or a jurisdiction's code
    version: int
    issued: date


@dataclass(frozen=True, slots=True)
class Trailer:
    count: int
    sha256: str


class RegisterFile:
    """Reads the header at once; `documents()` streams the rest (once) and checks the trailer at its end."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._digest = hashlib.sha256()
        first = stream.readline()
        if not first:
            raise RegisterFileError(FileProblem.EMPTY, 1)
        self._digest.update(first)
        self.header = _header(_text(first, 1))
        self.trailer: Trailer | None = None

    def documents(self) -> Iterator[Document]:
        count = 0
        number = 1
        digest = self._digest
        for raw in self._stream:
            number += 1
            line = _text(raw, number)
            fields = [field.strip() for field in line.split(",")]
            if fields[0].upper() == TRAILER:
                self.trailer = _trailer(fields, number)
                break
            digest.update(raw)
            if len(fields) != 3:
                raise RegisterFileError(FileProblem.BAD_LINE, number)
            found = read_document(fields[0], fields[1], fields[2])
            if not isinstance(found, Document):
                raise RegisterFileError(FileProblem.BAD_DOCUMENT, number, found.problem)
            count += 1
            yield found
        if self.trailer is None:
            raise RegisterFileError(FileProblem.NO_TRAILER, number + 1)
        trailer_line = number
        if self._stream.read(1):
            raise RegisterFileError(FileProblem.AFTER_TRAILER, trailer_line + 1)
        if self.trailer.count != count:
            raise RegisterFileError(FileProblem.COUNT_MISMATCH, trailer_line)
        if self.trailer.sha256 != digest.hexdigest():
            raise RegisterFileError(FileProblem.DIGEST_MISMATCH, trailer_line)

    @property
    def sha256(self) -> str:
        """The digest of the lines before the trailer (read so far; the whole once `documents()` ended)."""
        return self._digest.hexdigest()


def _text(raw: bytes, number: int) -> str:
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        raise RegisterFileError(FileProblem.NOT_TEXT, number) from None


def _header(line: str) -> Header:
    fields = [field.strip() for field in line.lstrip("\ufeff").split(",")]
    if len(fields) != 5 or fields[0].upper() != HEADER:
        raise RegisterFileError(FileProblem.BAD_HEADER, 1)
    code, jurisdiction, version, issued = fields[1].upper(), fields[2].upper(), fields[3], fields[4]
    if not _CODE.fullmatch(code) or not _CODE.fullmatch(jurisdiction) or not version.isdigit():
        raise RegisterFileError(FileProblem.BAD_HEADER, 1)
    try:
        day = date.fromisoformat(issued)
    except ValueError:
        raise RegisterFileError(FileProblem.BAD_HEADER, 1) from None
    if int(version) < 1 or len(version) > 9:
        raise RegisterFileError(FileProblem.BAD_HEADER, 1)
    return Header(code, jurisdiction, int(version), day)


def _trailer(fields: list[str], number: int) -> Trailer:
    if len(fields) != 3 or not fields[1].isdigit() or not _SHA256.fullmatch(fields[2].lower()):
        raise RegisterFileError(FileProblem.BAD_TRAILER, number)
    return Trailer(int(fields[1]), fields[2].lower())


def write_register_file(header: Header, lines: list[tuple[str, str, str]]) -> bytes:
    """A file of this shape (for tests, the demo and the benchmark): the header, the lines, the trailer."""
    body = f"{HEADER},{header.register},{header.jurisdiction},{header.version},{header.issued.isoformat()}\n"
    body += "".join(f"{kind},{number},{country}\n" for kind, number, country in lines)
    data = body.encode("utf-8")
    return data + f"{TRAILER},{len(lines)},{hashlib.sha256(data).hexdigest()}\n".encode("ascii")
