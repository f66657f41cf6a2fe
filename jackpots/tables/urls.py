"""Staff pages of the casino tables: the list of tables and the croupier's console of one table.

(The table-side meter page, /tables/<id>/meter/, belongs to the screens and is not defined here.)
"""

from django.urls import path

from jackpots.tables import views

app_name = "tables"

urlpatterns = [
    path("tables/", views.table_index, name="index"),
    path("tables/<int:table_id>/console/", views.console, name="console"),
]
