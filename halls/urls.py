from django.urls import path

from halls import views

app_name = "halls"

urlpatterns = [
    path("jsi18n/<str:language>/", views.javascript_catalogue, name="javascript-catalogue"),
    path("screens/<str:token>/", views.screen_page, name="screen"),
    path("screens/<str:token>/snapshot/", views.screen_snapshot, name="screen-snapshot"),
]
