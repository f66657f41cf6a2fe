from django.apps import AppConfig


class JackpotsConfig(AppConfig):
    name = "jackpots"
    verbose_name = "Jackpots"

    def ready(self) -> None:
        # Importing the module also registers its Celery task (publish_pool_meters) with the worker.
        from halls import hooks
        from jackpots import screens
        from jackpots.services import notify

        notify.register_pool_event_listener(screens.on_pool_event)
        hooks.register_screen_section(
            hooks.ScreenSection(
                name="jackpots",
                snapshot=screens.screen_snapshot,
                template="jackpots/screen_section.html",
                script="jackpots/screen.js",
            )
        )
