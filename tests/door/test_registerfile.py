"""A register file's shape, read as a stream (halls.door.registerfile, pure): what the loader relies on."""

from __future__ import annotations

import hashlib
import io
from datetime import date

import pytest

from halls.door.documents import Document, Kind, Problem
from halls.door.registerfile import FileProblem, Header, RegisterFile, RegisterFileError, write_register_file
from tests.door.register_support import dni


def test_a_file_reads_its_header_and_documents_and_checks_its_trailer() -> None:
    data = write_register_file(
        Header("RGIAJ", "NATIONAL", 12, date(2026, 12, 1)),
        [("DNI", dni(1), "ES"), ("PASSPORT", "ab123456", "prt")],
    )
    reader = RegisterFile(io.BytesIO(data))
    assert reader.header == Header("RGIAJ", "NATIONAL", 12, date(2026, 12, 1))
    assert list(reader.documents()) == [
        Document(Kind.DNI, dni(1), "ES"),
        Document(Kind.PASSPORT, "AB123456", "PT"),
    ]
    assert reader.sha256 == hashlib.sha256(data.rsplit(b"END,", 1)[0]).hexdigest()


def test_crlf_line_ends_and_a_byte_order_mark_are_read() -> None:
    body = f"\ufeffREGISTER,ml-rj,ml,3,2026-12-01\r\nDNI , {dni(2)} ,\r\n".encode()
    data = body + f"END,1,{hashlib.sha256(body).hexdigest().upper()}\r\n".encode()
    reader = RegisterFile(io.BytesIO(data))
    assert (reader.header.register, reader.header.jurisdiction) == ("ML-RJ", "ML")
    assert list(reader.documents()) == [Document(Kind.DNI, dni(2), "ES")]


def test_a_refusal_names_the_line_and_the_problem_never_the_number() -> None:
    data = write_register_file(
        Header("RGIAJ", "NATIONAL", 1, date(2026, 12, 1)), [("DNI", dni(3)[:8] + "Q", "")]
    )
    reader = RegisterFile(io.BytesIO(data))
    with pytest.raises(RegisterFileError) as refused:
        list(reader.documents())
    error = refused.value
    assert (error.problem, error.line, error.document_problem) == (
        FileProblem.BAD_DOCUMENT,
        2,
        Problem.BAD_CHECK_LETTER,
    )
    assert dni(3)[:8] not in str(error)


@pytest.mark.parametrize(
    "header",
    [
        b"REGISTER,RGIAJ,NATIONAL,0,2026-12-01\n",  # versions start at 1
        b"REGISTER,RGIAJ,NATIONAL,v2,2026-12-01\n",
        b"REGISTER,RGIAJ,NATIONAL,2,01/12/2026\n",
        b"REGISTER,,NATIONAL,2,2026-12-01\n",
        b"REGISTER,RGIAJ,NATIONAL,2\n",
        b"HEADER,RGIAJ,NATIONAL,2,2026-12-01\n",
    ],
)
def test_a_bad_header_is_refused_at_line_one(header: bytes) -> None:
    with pytest.raises(RegisterFileError) as refused:
        RegisterFile(io.BytesIO(header + b"END,0," + hashlib.sha256(header).hexdigest().encode() + b"\n"))
    assert (refused.value.problem, refused.value.line) == (FileProblem.BAD_HEADER, 1)
