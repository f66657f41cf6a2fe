"""A self-exclusion's receipt and its notice to the gaming authority (issue 27).

The receipt (PDF at the door, or printed at a till) shows the venue, the day recorded, the term, the
reference and the document's last three characters only. The notice goes into the outbox the network link
uses (its authority destination) in the self-exclusion's own transaction, and the link's authority sender
delivers it to the authority (a fake authority, a real process), retrying while it refuses; once
acknowledged, the document is erased from the outbox. Never a number in the audit or the logs."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.utils import formats, translation
from pypdf import PdfReader

from halls.cashier.models import Till
from halls.door.documents import masked
from halls.door.models import SelfExclusion
from halls.door.services import admission, receipts
from halls.errors import Conflict
from halls.link.kinds import LinkKind
from halls.link.models import Destination, OutboxMessage
from halls.link.services import outbox
from halls.link.transport import AuthorityConfig, AuthoritySender
from halls.models import AuditEntry, Role, Venue
from halls.services import venueclock
from tests.api_support import api_client
from tests.conftest import make_user
from tests.door.authority_support import FakeAuthority
from tests.door.register_support import dni

pytestmark = pytest.mark.django_db

NUMBER = dni(22_000_178)  # ends "178" + its letter: the receipt shows the last three characters


def exclude(venue: Venue, number: str = NUMBER, days: int = 180) -> SelfExclusion:
    return admission.self_exclude(
        venue=venue,
        document=admission.document_from("DNI", number),
        until=venueclock.today(venue) + timedelta(days=days),
        actor="test",
    )


def pdf_text(data: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


def authority_messages(venue: Venue) -> list[OutboxMessage]:
    return list(
        OutboxMessage.objects.filter(venue=venue, destination=Destination.AUTHORITY).order_by("sequence")
    )


# --- the outbox -------------------------------------------------------------------------------------------


def test_a_self_exclusion_is_queued_for_the_authority_in_its_transaction(venue: Venue) -> None:
    found = exclude(venue)
    assert (found.document_kind, found.document_tail) == ("DNI", NUMBER[-3:])
    [message] = authority_messages(venue)
    assert (message.kind, message.sequence, message.acked_at) == (LinkKind.SELF_EXCLUSION, 1, None)
    assert message.payload["self_exclusion"] == found.pk
    assert message.payload["until"] == found.until.isoformat()
    assert message.payload["venue"] == {"licence": venue.licence_number, "name": venue.name}
    assert message.payload["personal"] == {"document": {"kind": "DNI", "number": NUMBER, "country": "ES"}}
    # The central's outbox is untouched: its own numbering, nothing owed to it.
    assert outbox.backlog(venue_id=venue.pk) == 0 and outbox.last_sequence(venue_id=venue.pk) == 0
    audited = AuditEntry.objects.get(action="door.self_excluded")
    assert audited.data["queued_for_authority"] is True

    # The same term again (a retried request) changes nothing and sends nothing again.
    audits = AuditEntry.objects.count()
    assert exclude(venue).pk == found.pk and AuditEntry.objects.count() == audits
    # An extension is notified too; a refused shortening writes nothing, in the outbox neither.
    exclude(venue, days=365)
    with pytest.raises(Conflict):
        exclude(venue, days=10)
    assert [m.sequence for m in authority_messages(venue)] == [1, 2]


@pytest.mark.django_db(transaction=True)
def test_the_link_delivers_the_notice_to_the_authority_and_forgets_the_number(
    venue: Venue, authority: FakeAuthority, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    found = exclude(venue)
    authority.control(refuse_notices=2)  # busy twice: the link retries

    async def scenario() -> tuple[int, int]:
        config = AuthorityConfig(url=authority.url, backoff_max_seconds=0.3)
        first = AuthoritySender(config)
        second = AuthoritySender(config)
        try:
            sent = await first.drain()
            await sync_to_async(exclude)(venue, days=400)  # an extension: a second notice
            return sent, await second.drain()
        finally:
            await first.client.aclose()
            await second.client.aclose()

    assert asyncio.run(scenario()) == (1, 1)
    first_notice, second_notice = authority.notices()
    assert first_notice["venue"] == venue.licence_number and first_notice["sequence"] == 1
    assert first_notice["kind"] == "door.self_exclusion"
    assert first_notice["payload"]["personal"]["document"] == {
        "kind": "DNI",
        "number": NUMBER,
        "country": "ES",
    }
    assert (first_notice["payload"]["since"], first_notice["payload"]["until"]) == (
        found.since.isoformat(),
        found.until.isoformat(),
    )
    assert second_notice["sequence"] == 2 and second_notice["payload"]["until"] > found.until.isoformat()
    messages = authority_messages(venue)
    assert all(m.acked_at is not None and "personal" not in m.payload for m in messages)
    assert [m.payload["self_exclusion"] for m in messages] == [found.pk, found.pk]
    assert "try 2 again" in caplog.text  # retried with the link's backoff
    notified = AuditEntry.objects.filter(action="link.authority_acknowledged").order_by("pk")
    assert [(e.data["up_to"], e.data["kind"]) for e in notified] == [
        (1, "door.self_exclusion"),
        (2, "door.self_exclusion"),
    ]
    assert NUMBER not in caplog.text and NUMBER[:-1] not in caplog.text


# --- the receipt ------------------------------------------------------------------------------------------


def receipt_url(venue: Venue, found: SelfExclusion) -> str:
    return f"/api/venues/{venue.pk}/self-exclusions/{found.pk}/receipt/"


def test_the_receipt_shows_the_term_and_a_masked_document(venue: Venue, operator: User) -> None:
    api = api_client(operator)
    until = venueclock.today(venue) + timedelta(days=180)
    answer = api.post(
        f"/api/venues/{venue.pk}/self-exclusions/",
        {"kind": "DNI", "number": NUMBER, "until": until.isoformat()},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    found = SelfExclusion.objects.get(pk=answer.json()["self_exclusion"])
    assert answer.json()["receipt"] == receipt_url(venue, found)

    pdf = api.get(answer.json()["receipt"], HTTP_ACCEPT_LANGUAGE="es")
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    text = pdf_text(pdf.content)
    with translation.override("es"):
        assert formats.date_format(until, "SHORT_DATE_FORMAT") in text
        assert formats.date_format(found.since, "SHORT_DATE_FORMAT") in text
    assert "Autoexclusión" in text or "autoexclusión" in text
    assert venue.name in text and receipts.reference(found) in text
    assert masked("DNI", NUMBER[-3:]) in text and NUMBER not in text and NUMBER[:-3] not in text
    audited = AuditEntry.objects.get(action="door.self_exclusion_receipt")
    assert audited.object_id == str(found.pk) and audited.data["medium"] == "pdf"


def test_the_receipt_prints_at_a_till(venue: Venue, operator: User, till: Till) -> None:
    found = exclude(venue)
    answer = api_client(operator).post(receipt_url(venue, found), {"till": till.pk}, format="json")
    assert answer.status_code == 200 and answer["Content-Type"] == "application/pdf"  # no printer: a PDF
    assert found.until.strftime("%d/%m/%Y") in pdf_text(answer.content) or str(found.until.year) in pdf_text(
        answer.content
    )
    printed = AuditEntry.objects.get(action="cashier.printed")
    assert printed.data["kind"] == "self_exclusion" and printed.object_id == str(found.pk)


def test_who_may_see_a_receipt(venue: Venue) -> None:
    found = exclude(venue)
    door = make_user("receipt-door", venue, Role.DOOR)
    inspector = make_user("receipt-inspector", venue, Role.INSPECTOR)
    assert api_client(door).get(receipt_url(venue, found)).status_code == 200
    assert api_client(inspector).get(receipt_url(venue, found)).status_code == 403
    other = Venue.objects.create(name="Otro", licence_number="ML-X")
    stranger = make_user("receipt-stranger", other, Role.OPERATOR)
    assert api_client(stranger).get(receipt_url(venue, found)).status_code == 404
    missing = api_client(door).get(f"/api/venues/{venue.pk}/self-exclusions/999999/receipt/")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_self_exclusion"


def test_no_number_in_audit_or_logs(venue: Venue, operator: User, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    before = AuditEntry.objects.count()
    found = exclude(venue)
    api_client(operator).get(receipt_url(venue, found))
    entries = list(AuditEntry.objects.order_by("pk")[before:])
    assert {e.action for e in entries} >= {"door.self_excluded", "door.self_exclusion_receipt"}
    text = json.dumps([[e.data, e.object_id, e.actor_label] for e in entries], default=str) + caplog.text
    assert NUMBER not in text and NUMBER[:-1] not in text and NUMBER[:-3] not in text
