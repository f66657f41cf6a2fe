from django.urls import path

from bingo.draws import views

urlpatterns = [
    path("draws/<slug:room>/<slug:game_ref>/", views.draw_page, name="draw-page"),
    path("draws/<slug:room>/<slug:game_ref>/ventas.json", views.draw_sales, name="draw-sales"),
]
