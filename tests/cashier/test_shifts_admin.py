"""The cashier in the admin: tills made and changed through their service (audited), the ledger's rows
read-only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from halls.cashier.models import CashDevice, DeviceKind, Till
from halls.models import AuditEntry, Venue


@pytest.fixture
def admin_client(venue: Venue) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="pw-root"))
    return client


@pytest.mark.django_db
def test_a_till_made_and_changed_in_the_admin_is_audited(venue: Venue, admin_client: Client) -> None:
    made = admin_client.post(
        "/admin/cashier/till/add/", {"venue": venue.pk, "name": "Caja 9", "printer": ""}, follow=True
    )
    assert made.status_code == 200
    till = Till.objects.get(name="Caja 9")
    admin_client.post(
        f"/admin/cashier/till/{till.pk}/change/", {"name": "Caja 9", "printer": "lpt"}, follow=True
    )
    till.refresh_from_db()
    assert till.printer == ""  # refused by the service: not tcp://host:port
    admin_client.post(
        f"/admin/cashier/till/{till.pk}/change/",
        {"name": "Caja 9", "printer": "tcp://10.1.1.1:9100"},
        follow=True,
    )
    till.refresh_from_db()
    assert till.printer == "tcp://10.1.1.1:9100"
    admin_client.post(
        "/admin/cashier/till/", {"action": "retire", "_selected_action": [till.pk]}, follow=True
    )
    till.refresh_from_db()
    assert not till.active
    actions = list(AuditEntry.objects.order_by("pk").values_list("action", flat=True))
    assert actions == ["cashier.till_created", "cashier.till_changed", "cashier.till_retired"]
    device = CashDevice.objects.create(venue=venue, name="T1", kind=DeviceKind.TERMINAL, token_hash="x")
    admin_client.post(
        f"/admin/cashier/cashdevice/{device.pk}/change/", {"name": "T1", "active": ""}, follow=True
    )
    device.refresh_from_db()
    assert not device.active
    assert AuditEntry.objects.filter(action="cashier.device_changed").count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "model", ["shift", "account", "ledgertransaction", "playercard", "ticket", "payable"]
)
def test_the_ledgers_rows_are_listed_read_only(admin_client: Client, model: str) -> None:
    assert admin_client.get(f"/admin/cashier/{model}/").status_code == 200
    assert admin_client.get(f"/admin/cashier/{model}/add/").status_code == 403
