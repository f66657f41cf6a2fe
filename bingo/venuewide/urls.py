"""The staff pages' URL map: the home page and the till (venuewide), the caller console, the paper pages
and the caller's voice clips (traditional bingo), the setup page (venuewide)."""

from django.urls import path

from bingo.traditional import paper_views, signage_views, views
from bingo.venuewide import setup_views
from bingo.venuewide import views as venue_views

app_name = "bingo"

urlpatterns = [
    path("", venue_views.home, name="home"),
    path("console/", views.console_index, name="console"),
    path("console/rooms/<int:room_id>/", views.console_room, name="console-room"),
    path("cashier/", venue_views.cashier, name="cashier"),
    path("voice/<str:key>.wav", views.voice_clip, name="voice-clip"),
    path("setup/", setup_views.setup_page, name="setup"),
    path("paper/", paper_views.paper_page, name="paper"),
    path("paper/games/<int:game_id>/", paper_views.register_page, name="paper-register"),
    # What a paper card's QR code opens (public; short, so the code stays small).
    path("c/<int:series_id>/<int:serial>/<str:code>/", paper_views.card_check, name="card-check"),
    # What a posted prize table's QR code opens (public): the program terms with that digest.
    path("t/<str:digest>/", signage_views.program_terms_page, name="program-terms"),
]
