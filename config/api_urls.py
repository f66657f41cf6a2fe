"""The REST API's routes (under /api/): halls' doors (token, venues, sessions; regions, agreements,
networks; four-eyes proposals; the door's admissions, players and alerts; the cage's identifications and
AML lists; the gaming tax's rate tables and returns; the lab clock, outside production only), bingo's, the
tables', the pools', the prize programs', the machines', the cashier's (/api/cashier/), electronic bingo's
(/api/electronic/)."""

from django.urls import URLPattern, URLResolver, include, path

from bingo.network.interconnected import api as network_api
from bingo.network.simultaneous import api as simultaneous_api
from bingo.traditional import api as bingo_api
from bingo.traditional import paper_api, program_api, setup_api
from halls import api as halls_api
from halls import labclock_api, proposals_api, regions_api
from halls.cage import api as cage_api
from halls.door import api as door_api
from halls.door import players_api as door_players_api
from halls.door import receipts_api as door_receipts_api
from halls.link import api as link_api
from halls.regulator import api as regulator_api
from halls.tax import api as tax_api
from jackpots import api as jackpots_api
from jackpots.tables import api as tables_api
from jackpots.widearea import api as widearea_api
from machines import api as machines_api

urlpatterns: list[URLPattern | URLResolver] = [
    *halls_api.urlpatterns,
    *regions_api.urlpatterns,
    *proposals_api.urlpatterns,
    *door_api.urlpatterns,
    *door_players_api.urlpatterns,
    *door_receipts_api.urlpatterns,
    *cage_api.urlpatterns,
    *tax_api.urlpatterns,
    *labclock_api.urlpatterns,  # none in production
    *bingo_api.urlpatterns,
    *setup_api.urlpatterns,
    *program_api.urlpatterns,
    *paper_api.urlpatterns,
    *network_api.urlpatterns,
    *tables_api.urlpatterns,
    *widearea_api.urlpatterns,
    *jackpots_api.urlpatterns,
    *machines_api.urlpatterns,
    *link_api.urlpatterns,
    *regulator_api.urlpatterns,  # the regulator's node only (404 elsewhere)
    *simultaneous_api.urlpatterns,
    path("cashier/", include("halls.cashier.urls")),
    path("electronic/", include("bingo.electronic.urls")),
]
