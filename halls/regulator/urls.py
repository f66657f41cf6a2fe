"""The authority's portal (HALL_ROLE=regulator): its pages under /authority/."""

from django.urls import URLPattern, URLResolver, path

from halls.regulator import views

app_name = "regulator"

urlpatterns: list[URLPattern | URLResolver] = [
    path("authority/", views.map_page, name="map"),
    path("authority/live/", views.live_page, name="live"),
    path("authority/pools/", views.pools_page, name="pools"),
    path("authority/pools/<str:uid>/<str:pool>/", views.pool_page, name="pool"),
    path("authority/anchors/", views.anchors_page, name="anchors"),
    path("authority/alarms/", views.alarms_page, name="alarms"),
    path("authority/alarms/<int:alarm_id>/clear/", views.clear_alarm, name="clear-alarm"),
    path("authority/refused/", views.refusals_page, name="refusals"),
    path("authority/taxes/", views.taxes_page, name="taxes"),
    path("authority/reconciliations/", views.reconciliations_page, name="reconciliations"),
]
