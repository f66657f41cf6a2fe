"""Staff pages of bingo: the caller console and the cashier page."""

app_name = "bingo"

urlpatterns: list = []
