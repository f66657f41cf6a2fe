"""The central's network pages (bingo.network.interconnected.views_central)."""

from django.urls import URLPattern, URLResolver, path

from bingo.network.interconnected import views_central

app_name = "central"

urlpatterns: list[URLPattern | URLResolver] = [
    path("central/pools/", views_central.pools, name="pools"),
    path("central/pools/meters/", views_central.pool_meters, name="pool-meters"),
    path("central/games/", views_central.games, name="games"),
    path("central/reports/", views_central.report, name="report"),
    path("central/reports.csv", views_central.report_csv, name="report-csv"),
]
