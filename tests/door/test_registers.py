"""The prohibited-access registers (issue 27): a register's file loaded all or nothing and versioned, a
document looked up against the registers in force for a venue, no ID number kept in clear or shown."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import translation

from halls.door.documents import Document, read_document
from halls.door.models import Register, RegisterEntry, RegisterVersion
from halls.door.services import registers
from halls.errors import Conflict, DomainError, InvalidInput, NotFound, PermissionDenied
from halls.models import AuditEntry, HallCategory, Jurisdiction, Proposal, Role, Venue
from halls.services import proposals
from tests.conftest import make_user
from tests.door.register_support import dni, people, register_file, stream

pytestmark = pytest.mark.django_db


def doc(kind: str, number: str, country: str = "") -> Document:
    found = read_document(kind, number, country)
    assert isinstance(found, Document)
    return found


def venue_of(jurisdiction: str, licence: str) -> Venue:
    return Venue.objects.create(
        name=f"Bingo {licence}",
        licence_number=licence,
        jurisdiction=jurisdiction,
        hall_category=HallCategory.FIRST,
        line_percent=Decimal("10"),
        bingo_percent=Decimal("50"),
    )


def load(data: bytes, create: str | None = "RGIAJ") -> RegisterVersion:
    return registers.load_register_file(stream=stream(data), actor="test", create_name=create)


def state() -> tuple[object, ...]:
    return (
        sorted(Register.objects.values_list("code", "current_version_id")),
        sorted(RegisterVersion.objects.values_list("pk", "number", "entry_count", "sha256", "superseded_at")),
        RegisterEntry.objects.count(),
        AuditEntry.objects.count(),
    )


@contextmanager
def nothing_written() -> Iterator[None]:
    before = state()
    yield
    assert state() == before


def test_a_good_load_then_a_lookup() -> None:
    melilla = venue_of(Jurisdiction.ML, "ML-1")
    lines = people(10_000_000, 5)
    version = load(register_file(lines))
    assert (version.register.code, version.number, version.entry_count) == ("RGIAJ", 1, 5)
    assert version.register.is_national and version.register.current_version == version
    assert version.sha256 == hashlib.sha256(register_file(lines).rsplit(b"END,", 1)[0]).hexdigest()
    assert RegisterEntry.objects.count() == 5

    for kind, number, country in lines:
        found = registers.check_document(venue=melilla, document=doc(kind, number, country))
        assert found.listed and found.listed_on is not None
        assert (found.listed_on.code, found.listed_on.version) == ("RGIAJ", 1)
        assert found.listed_on.version_id == version.pk
    # The same documents however typed; the passport of another state is another document.
    assert registers.check_document(venue=melilla, document=doc("PASSPORT", "p-10000000", "FR")).listed
    assert not registers.check_document(venue=melilla, document=doc("PASSPORT", "P10000000", "BE")).listed
    clear = registers.check_document(venue=melilla, document=doc("DNI", dni(20_000_000)))
    assert not clear.listed and clear.listed_on is None
    assert [(r.code, r.version, r.readable) for r in clear.consulted] == [("RGIAJ", 1, True)]
    assert clear.unreadable == ()


def test_a_regional_register_binds_only_its_jurisdictions_venues() -> None:
    melilla, sevilla = venue_of(Jurisdiction.ML, "ML-1"), venue_of(Jurisdiction.AN10, "AN-1")
    load(register_file(people(10_000_000, 3)))
    load(register_file([("DNI", dni(30_000_000), "")], code="ML-RJ", jurisdiction="ML"), create="Melilla")
    regional = doc("DNI", dni(30_000_000))
    found = registers.check_document(venue=melilla, document=regional)
    assert found.listed_on is not None and found.listed_on.code == "ML-RJ"
    assert [r.code for r in found.consulted] == ["RGIAJ", "ML-RJ"]  # national first
    elsewhere = registers.check_document(venue=sevilla, document=regional)
    assert not elsewhere.listed and [r.code for r in elsewhere.consulted] == ["RGIAJ"]
    # Audited in the chains of the venues each register binds: the national one in both, Melilla's in one.
    loads = AuditEntry.objects.filter(action="door.register_loaded")
    assert sorted(loads.filter(data__register="RGIAJ").values_list("venue_id", flat=True)) == sorted(
        [melilla.pk, sevilla.pk]
    )
    assert list(loads.filter(data__register="ML-RJ").values_list("venue_id", flat=True)) == [melilla.pk]


def test_a_newer_version_replaces_the_older() -> None:
    melilla = venue_of(Jurisdiction.ML, "ML-1")
    first = load(register_file(people(10_000_000, 4)))
    kept, dropped, added = dni(10_000_000), dni(10_000_003), dni(40_000_000)
    second_lines = [("DNI", kept, "ES"), ("DNI", added, "")]
    second = load(register_file(second_lines, version=2, issued=date(2026, 12, 5)), create=None)
    first.refresh_from_db()
    assert first.superseded_at is not None and second.superseded_at is None
    assert Register.objects.get(code="RGIAJ").current_version == second
    assert RegisterEntry.objects.count() == 2  # the superseded version's entries are gone; its row stays
    assert RegisterEntry.objects.filter(version=first).count() == 0
    check = registers.check_document
    assert check(venue=melilla, document=doc("DNI", kept)).listed_on.version == 2  # type: ignore[union-attr]
    assert check(venue=melilla, document=doc("DNI", added)).listed
    assert not check(venue=melilla, document=doc("DNI", dropped)).listed
    entry = AuditEntry.objects.filter(action="door.register_loaded").latest("pk")
    assert entry.data == {
        "register": "RGIAJ",
        "version": 2,
        "issued_on": "2026-12-05",
        "entries": 2,
        "sha256": second.sha256,
        "replaced_version": 1,
        "players_inside_listed": 0,
    }
    # A version may skip numbers (the authority's numbering).
    assert load(register_file([], version=7, issued=date(2026, 12, 5)), create=None).entry_count == 0
    assert not check(venue=melilla, document=doc("DNI", kept)).listed


GOOD = people(10_000_000, 6)


def _replace(index: int, line: tuple[str, str, str]) -> list[tuple[str, str, str]]:
    return [line if i == index else other for i, other in enumerate(GOOD)]


def _cut(data: bytes, keep_lines: int) -> bytes:
    return b"".join(data.splitlines(keepends=True)[:keep_lines])


def _trailer(data: bytes, trailer: bytes) -> bytes:
    return data.rsplit(b"END,", 1)[0] + trailer


def _bad(index: int, line: tuple[str, str, str]) -> bytes:
    return register_file(_replace(index, line), version=2)


WHOLE = register_file(GOOD, version=2)
HEADER, BODY = WHOLE.split(b"\n", 1)
WRONG_LETTER = dni(10_000_003)[:8] + ("A" if dni(10_000_003)[8] != "A" else "B")
BAD_FILES = [
    # (the file, its refusal's code, the line it names, what the Spanish message says)
    (_bad(2, ("DNI", "10000A02X", "ES")), "bad_document", 4, "mal formado"),
    (_bad(3, ("DNI", WRONG_LETTER, "")), "bad_document", 5, "letra de control"),
    (_bad(0, ("PASSPORT", "AB123456", "QQQ")), "bad_document", 2, "ISO 3166"),
    (_bad(5, ("CARNET", "AB123456", "FR")), "bad_document", 7, "tipo de documento"),
    (HEADER + b"\nDNI,12345678Z\n" + BODY, "bad_line", 2, "tres campos"),
    (b"", "empty", 1, "vacío"),
    (b"RGIAJ,NATIONAL,2,2026-12-01\n" + BODY, "bad_header", 1, "cabecera"),
    (WHOLE.replace(b"2026-12-01", b"2026-13-01", 1), "bad_header", 1, "cabecera"),
    (_cut(WHOLE, 5), "no_trailer", 6, "truncado"),  # truncated: no END line
    (_trailer(WHOLE, b"END,5," + WHOLE.rsplit(b",", 1)[1]), "count_mismatch", 8, "truncado"),
    (_trailer(WHOLE, b"END,6," + b"0" * 64 + b"\n"), "digest_mismatch", 8, "SHA-256"),
    (_trailer(WHOLE, b"END,6\n"), "bad_trailer", 8, "END"),
    (WHOLE + b"DNI,12345678Z,ES\n", "after_trailer", 9, "END"),
    (WHOLE.replace(b"\nDNI", b"\nDNI\xff", 1), "not_text", 2, "UTF-8"),
]


@pytest.mark.parametrize(("data", "code", "line", "says"), BAD_FILES)
def test_a_bad_file_is_refused_naming_the_line_and_changes_nothing(
    data: bytes, code: str, line: int, says: str
) -> None:
    venue_of(Jurisdiction.ML, "ML-1")
    current = load(register_file(people(50_000_000, 3)))
    with nothing_written(), translation.override("es"), pytest.raises(InvalidInput) as refused:
        load(data, create=None)
    assert refused.value.code == f"register_file_{code}"
    assert refused.value.details == {"line": line}
    assert refused.value.message.startswith(f"Línea {line}: ")
    assert says in refused.value.message
    for _kind, number, _country in GOOD:
        assert number not in refused.value.message
    assert Register.objects.get(pk=current.register_id).current_version == current


def test_the_same_version_again_an_older_one_and_another_jurisdictions_are_refused() -> None:
    venue_of(Jurisdiction.ML, "ML-1")
    load(register_file(GOOD, version=3, issued=date(2026, 12, 3)))
    refusals = [
        (
            register_file(GOOD[:2], version=3, issued=date(2026, 12, 3)),
            "register_version_loaded",
            "ya está cargada",
        ),
        (
            register_file(GOOD[:2], version=2, issued=date(2026, 12, 2)),
            "register_version_older",
            "más antiguo",
        ),
        (
            register_file(GOOD[:2], version=4, issued=date(2026, 12, 2)),
            "register_version_older",
            "más antiguo",
        ),
        (
            register_file(GOOD[:2], version=4, jurisdiction="AN10"),
            "register_other_jurisdiction",
            "otra jurisdicción",
        ),
    ]
    for data, code, says in refusals:
        with nothing_written(), translation.override("es"), pytest.raises(Conflict) as refused:
            load(data, create=None)
        assert refused.value.code == code
        assert says in refused.value.message
    with nothing_written(), pytest.raises(NotFound) as unknown:
        load(register_file(GOOD, code="NOPE"), create=None)
    assert unknown.value.code == "unknown_register"
    with nothing_written(), pytest.raises(InvalidInput) as bad:
        load(register_file(GOOD, code="NEW", jurisdiction="XX"), create="New")
    assert bad.value.code == "bad_jurisdiction"
    load(register_file(GOOD[:2], version=4, issued=date(2026, 12, 3)), create=None)  # same day, newer: fine


def test_a_file_refused_at_its_last_line_writes_none_of_its_entries() -> None:
    """Entries are written as they are read: the refusal at the trailer rolls every one of them back."""
    lines = people(60_000_000, 25_000)  # more than two batches
    data = _trailer(register_file(lines), b"END,24999," + register_file(lines).rsplit(b",", 1)[1])
    with nothing_written(), pytest.raises(InvalidInput) as refused:
        load(data)
    assert refused.value.code == "register_file_count_mismatch"
    assert load(register_file(lines)).entry_count == 25_000
    assert RegisterEntry.objects.count() == 25_000


def test_no_document_number_in_the_audit_rows_or_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    melilla = venue_of(Jurisdiction.ML, "ML-1")
    lines = people(70_000_000, 5)
    with caplog.at_level(logging.DEBUG):
        load(register_file(lines))
        load(register_file(lines[:3], version=2), create=None)
        for kind, number, country in lines:
            registers.check_document(venue=melilla, document=doc(kind, number, country))
        with pytest.raises(DomainError):
            load(register_file(lines, version=2), create=None)
    assert "RGIAJ" in caplog.text  # the load was logged (register, version, counts)
    written = json.dumps(list(AuditEntry.objects.values()), default=str)
    assert "door.register_loaded" in written
    versions = json.dumps(list(RegisterVersion.objects.values()), default=str)
    for _kind, number, _country in lines:
        for where in (caplog.text, written, versions):
            assert number not in where
            assert number[:8] not in where  # not even the digits of a DNI


def test_a_version_keyed_with_another_key_is_reported_unreadable() -> None:
    melilla = venue_of(Jurisdiction.ML, "ML-1")
    lines = people(80_000_000, 3)
    load(register_file(lines))
    listed = doc("DNI", lines[0][1])
    assert registers.check_document(venue=melilla, document=listed).listed
    with override_settings(HALL_REGISTER_KEY="another-key"):
        found = registers.check_document(venue=melilla, document=listed)
        assert not found.listed
        assert [(r.code, r.readable) for r in found.unreadable] == [("RGIAJ", False)]
        load(register_file(lines, version=2), create=None)  # loaded again under the new key
        assert registers.check_document(venue=melilla, document=listed).listed


def test_a_register_never_loaded_is_unreadable() -> None:
    melilla = venue_of(Jurisdiction.ML, "ML-1")
    registers.create_register(code="ml-rj", name="Registro de Melilla", jurisdiction="ML", actor="test")
    found = registers.check_document(venue=melilla, document=doc("DNI", dni(1)))
    assert not found.listed
    assert [(r.code, r.version, r.readable) for r in found.unreadable] == [("ML-RJ", None, False)]
    with pytest.raises(Conflict):
        registers.create_register(code="ML-RJ", name="Again", jurisdiction="ML", actor="test")
    assert AuditEntry.objects.filter(action="door.register_created", venue=melilla).count() == 1


def test_the_load_register_command(tmp_path: Path) -> None:
    venue = venue_of(Jurisdiction.ML, "ML-1")
    ana, bea = make_user("ana", venue, Role.OPERATOR), make_user("bea", venue, Role.OPERATOR)
    good = tmp_path / "rgiaj-1.csv"
    good.write_bytes(register_file(people(90_000_000, 4)))
    call_command("load_register", str(good), "--create", "RGIAJ", "--by", "ana")
    assert not Register.objects.exists()  # proposed: nothing loads before a second operator approves
    proposal = Proposal.objects.get(kind="door.register_load")
    assert (proposal.params["register"], proposal.params["version"]) == ("RGIAJ", 1)
    with pytest.raises(PermissionDenied):
        proposals.approve(proposal=proposal, approver=ana, password="pw-ana")  # the proposer: refused
    done = proposals.approve(proposal=proposal, approver=bea, password="pw-bea")
    assert done.result["entries"] == 4
    assert Register.objects.get(code="RGIAJ").current_version.entry_count == 4  # type: ignore[union-attr]
    loaded = AuditEntry.objects.filter(action="door.register_loaded").latest("pk")
    assert loaded.actor_label == "bea"
    decided = AuditEntry.objects.get(action="foureyes.approved", object_id=str(proposal.pk))
    assert (decided.actor_label, decided.data["proposed_by"]) == ("bea", "ana")
    bad = tmp_path / "rgiaj-2.csv"
    bad.write_bytes(_cut(register_file(people(90_000_000, 4), version=2), 3))
    with nothing_written(), translation.override("es"), pytest.raises(CommandError, match="Línea 4"):
        call_command("load_register", str(bad), "--by", "ana")
    with pytest.raises(CommandError):
        call_command("load_register", str(tmp_path / "missing.csv"), "--by", "ana")


def test_a_register_file_changed_after_its_proposal_is_refused(tmp_path: Path) -> None:
    venue = venue_of(Jurisdiction.ML, "ML-1")
    make_user("ana", venue, Role.OPERATOR)
    bea = make_user("bea", venue, Role.OPERATOR)
    path = tmp_path / "rgiaj-1.csv"
    path.write_bytes(register_file(people(90_000_000, 4)))
    call_command("load_register", str(path), "--create", "RGIAJ", "--by", "ana")
    path.write_bytes(register_file(people(91_000_000, 5)))
    with pytest.raises(Conflict) as refused:
        proposals.approve(proposal=Proposal.objects.get(), approver=bea, password="pw-bea")
    assert refused.value.code == "register_file_changed"
    assert not Register.objects.exists()
