from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from config.health import HallHealthView
from halls import metrics

urlpatterns = [
    path("admin/", admin.site.urls),
    # set_language: the staff pages' language switch (a cookie).
    path("i18n/", include("django.conf.urls.i18n")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/", include("config.api_urls")),
    path("health/", HallHealthView.as_view(), name="health"),
    # /metrics: internal only (deploy/nginx): django-prometheus' and the hall's own (halls.metrics.page).
    path("metrics", metrics.page, name="prometheus-django-metrics"),
    path("", include("halls.urls")),
    path("", include("halls.link.urls")),
    path("", include("halls.regulator.urls")),  # the authority's portal (HALL_ROLE=regulator)
    path("", include("bingo.venuewide.urls")),
    path("", include("bingo.draws.urls")),  # the public pages of verifiable draws (no login)
    path("", include("bingo.network.simultaneous.pages")),
    path("", include("bingo.venuewide.inspector.urls")),
    path("", include("bingo.network.interconnected.urls_central")),
    path("", include("jackpots.urls")),
    path("", include("jackpots.tables.urls")),
    path("", include("jackpots.widearea.pages")),
    path("", include("machines.urls")),
    path("", include("halls.cashier.pages")),
    path("", include("halls.door.pages")),
    path("", include("halls.cage.pages")),
    path("", include("halls.tax.pages")),
    path("", include("bingo.electronic.pages")),
]
