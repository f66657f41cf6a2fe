from django.urls import path

from halls import proposals_page, regions_page, views

app_name = "halls"

urlpatterns = [
    path("regions/", regions_page.regions_page, name="regions"),
    path("proposals/", proposals_page.proposals_page, name="proposals"),
    path("jsi18n/<str:language>/", views.javascript_catalogue, name="javascript-catalogue"),
    path("screens/<str:token>/", views.screen_page, name="screen"),
    path("screens/<str:token>/snapshot/", views.screen_snapshot, name="screen-snapshot"),
]
