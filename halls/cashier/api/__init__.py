"""The cashier's REST API, one module per area (shifts, cards, tickets, payables, reports), all under
/api/cashier/ (halls.cashier.urls), with the cashier role and the JSON errors of the rest of the API."""
