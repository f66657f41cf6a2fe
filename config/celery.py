"""The Celery app. Draw tasks go to their own `draws` queue (DESIGN §5)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("hall")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
