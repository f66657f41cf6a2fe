"""Settings for the hall system: one module, driven by the environment.

With no DATABASE_URL / REDIS_URL the hall runs embedded (SQLite, in-memory channel layer, Celery on the
in-memory broker inside the server process). With both set it runs on PostgreSQL and Redis.
"""

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import django_stubs_ext
import environ
from django.core.exceptions import ImproperlyConfigured

from config.redis_sentinel import sentinel_config
from config.test_workers import split_for_worker

django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"
# A pytest-xdist worker (the parallel test run): its own Redis database and files, before anything is read.
split_for_worker(VAR_DIR)

env = environ.Env()

DEBUG = env.bool("DEBUG", default=False)
# HALL_ENV=production (set by every unit and service in deploy/) refuses to start without its own
# SECRET_KEY, ALLOWED_HOSTS, HALL_AUDIT_KEY (the audit chain's HMAC key), HALL_CARD_SECRET (it signs the
# paper cards' security codes: a placeholder would let anyone forge a card) and HALL_REGISTER_KEY (it keys
# the prohibited registers' entries: with a known key their digests give the ID numbers back), and turns on
# TLS-only cookies, HSTS and the proxy's scheme header. Anything else (development, the demo, the tests, the
# benchmarks) runs with the demo defaults, and the demo says so.
HALL_ENV = env.str("HALL_ENV", default="development")
HALL_PRODUCTION = HALL_ENV == "production"
SILENCED_SYSTEM_CHECKS: list[str] = []
if HALL_PRODUCTION:
    required_keys = ("SECRET_KEY", "ALLOWED_HOSTS", "HALL_AUDIT_KEY", "HALL_CARD_SECRET", "HALL_REGISTER_KEY")
    for required in required_keys:
        value = env.str(required, default="").strip()
        if not value or value == "CHANGE-ME" or value.startswith("insecure-"):
            raise ImproperlyConfigured(
                f"HALL_ENV=production needs its own {required} in the environment (see deploy/env.example)."
            )
# The demo default is printed as insecure; production must set SECRET_KEY (above).
SECRET_KEY = env.str("SECRET_KEY", default="insecure-demo-key-set-SECRET_KEY-in-production")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[] if HALL_PRODUCTION else ["*"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
if HALL_PRODUCTION:
    # TLS ends at nginx (deploy/nginx/hall.conf), which sets X-Forwarded-Proto; the app listens on loopback.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    # The health probe and the metrics scrape ask the app on loopback in plain HTTP (config.healthprobe).
    SECURE_REDIRECT_EXEMPT = [r"^health/", r"^metrics$"]
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
    if not SECURE_HSTS_PRELOAD:
        # Preloading is the domain owner's decision, for every host of the domain: not a default here.
        SILENCED_SYSTEM_CHECKS.append("security.W021")

# Redis behind Sentinel (config.redis_sentinel; deploy/README.md, "Several hosts"): the Sentinels and the
# master's name; REDIS_URL then gives only the database number and password. Unset: REDIS_URL's server.
_sentinels = env.str("REDIS_SENTINELS", default="")
REDIS_SENTINEL_MASTER: str = env.str("REDIS_SENTINEL_MASTER", default="")
REDIS_URL: str | None = env.str("REDIS_URL", default=None)
if _sentinels.strip() and not REDIS_URL:
    REDIS_URL = "redis://sentinel/0"
try:
    REDIS_SENTINEL = sentinel_config(_sentinels, REDIS_SENTINEL_MASTER, REDIS_URL)
except ValueError as exc:
    raise ImproperlyConfigured(str(exc)) from exc
DATABASE_URL: str | None = env.str("DATABASE_URL", default=None)
# Embedded: everything inside one process, for a first look or a laptop demo.
HALL_EMBEDDED = REDIS_URL is None

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from here: /api/docs/ works offline
    "health_check",  # /health/ (config.health)
    "django_prometheus",  # /metrics (halls.metrics)
    "channels",
    # Append-only money and audit rows: UPDATE/DELETE refused by PostgreSQL triggers (no-op on SQLite).
    "pgtrigger",
    "axes",
    "halls",
    "halls.cashier",
    "halls.link",
    "halls.regulator",
    "halls.door",
    "halls.cage",
    "halls.tax",
    "jackpots",
    "jackpots.tables",
    "jackpots.widearea",
    "bingo.draws",
    "bingo.traditional",
    "bingo.electronic",
    "bingo.network.interconnected",
    "bingo.network.simultaneous",
    "bingo.venuewide",
    "machines",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language: the django_language cookie (set_language), then Accept-Language, then Spanish.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Reads run with the inspector's read rights; an inspector's writes are refused here (403).
    "halls.readonly.readonly_middleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
    # /api/: Django-level errors (404, 413, 400, 500, ids out of range) as the JSON error envelope.
    "halls.api_errors.api_error_middleware",
    # Login pages: a per-address rate before any password is hashed (halls.throttling).
    "halls.throttling.login_rate_middleware",
    # Last, as django-axes asks: locks a username at an address out after repeated failures.
    "axes.middleware.AxesMiddleware",
]

# django-axes first: a locked-out login is refused before the password hasher runs.
AUTHENTICATION_BACKENDS = [
    "halls.throttling.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

if DATABASE_URL:
    DATABASES = {"default": env.db_url_config(DATABASE_URL)}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["ENGINE"] = "halls.postgresql"  # Django's, knowing the money column (see there)
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0)
    # A kept connection is checked (SELECT 1) before its first use in each request or task.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASES["default"]["TEST"] = {"NAME": env.str("TEST_DATABASE_NAME", default=None)}
    # HALL_DB_POOL=<n>: the process takes its connections from a psycopg pool of at most n (Django 5.2's
    # "pool" option) instead of opening one per request (~5 ms of its CPU and the server's each time). Set
    # by the web processes' unit (deploy/systemd/hall-web.service); Django refuses a pool with a
    # CONN_MAX_AGE, and Celery workers keep their own connection (config.celery drops the pool there).
    if pool_size := env.int("HALL_DB_POOL", default=0):
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 2,
            "max_size": pool_size,
            "timeout": env.float("HALL_DB_POOL_TIMEOUT", default=10.0),
        }
else:
    VAR_DIR.mkdir(exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env.str("SQLITE_PATH", default=str(VAR_DIR / "hall.sqlite3")),
            # The web server and the embedded worker share the file: WAL lets readers and one writer
            # proceed together, IMMEDIATE takes the write lock at BEGIN so no transaction deadlocks.
            "OPTIONS": {
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
            },
            # The test run on SQLite (HALL_TEST_DB=sqlite) uses a file, so the embedded worker's and the
            # server's threads share it as they share the demo's.
            "TEST": {"NAME": env.str("SQLITE_TEST_PATH", default=str(VAR_DIR / "test_hall.sqlite3"))},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

# Spanish halls: Spanish unless a person asks for English; a public screen speaks its venue's language.
LANGUAGE_CODE = "es"
LANGUAGES = [("es", "Español"), ("en", "English")]
# One date format per language (config/formats/<language>/formats.py), the JavaScript's too (halls/format.js).
FORMAT_MODULE_PATH = ["config.formats"]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "Europe/Madrid"
USE_I18N = True
# Numbers on server-rendered pages follow the locale (12,50 in Spanish, 12.50 in English); amounts are grouped
# where shown (floatformat:"2g"), not everywhere: ids in URLs and data attributes must stay plain digits.
USE_THOUSAND_SEPARATOR = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(VAR_DIR / "static")))
# WhiteNoise indexes STATIC_ROOT at start-up; an empty one (no collectstatic yet) is fine with the finders.
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Static files are served from the app folders directly: no collectstatic step for a first run.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

# --- Abuse limits ---------------------------------------------------------------------------------------
# Counters of the throttles and of django-axes: Redis when the hall runs on it (shared by every process),
# this process's memory when embedded.
CACHES: dict[str, Any]


def _default_channel_prefix(redis_url: str | None) -> str:
    """Redis pub/sub ignores database numbers: two halls (or two test runs) on one Redis server, each on its
    own database, would hear each other's groups (a screen of room 1 got another run's room 1 events, saw a
    gap and reloaded). The default prefix names the database: "hall" on database 0, "hall.db6" on 6."""
    database = urlsplit(redis_url).path.strip("/") if redis_url else ""
    return "hall" if database in ("", "0") else f"hall.db{database}"


_channel_prefix = env.str("CHANNEL_PREFIX", default=_default_channel_prefix(REDIS_URL))
if REDIS_URL:
    CACHES = {
        "default": {
            # Django's RedisCache with one connection pool per process, not one per request (halls.cache).
            "BACKEND": "halls.cache.SharedRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env.str("HALL_CACHE_PREFIX", default=_channel_prefix + ".cache"),
        }
    }
    if REDIS_SENTINEL:
        # Django's RedisCache knows no Sentinel: the same cache on a pool that asks the Sentinels for the
        # master (redis-py's SentinelConnectionPool; halls.cache.SentinelRedisCache).
        CACHES["default"]["BACKEND"] = "halls.cache.SentinelRedisCache"
        CACHES["default"]["OPTIONS"] = {"sentinel": REDIS_SENTINEL}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # django-axes warns that a process's memory is not shared: embedded, there is only the one process.
    SILENCED_SYSTEM_CHECKS.append("axes.W001")
# Requests per client address (REMOTE_ADDR: behind the proxy uvicorn sets it from X-Forwarded-For, trusted
# only from --forwarded-allow-ips). auth: API token exchanges; login: login page posts; device_failures /
# screen_failures: wrong device tokens and unknown screen tokens (good ones are never counted).
HALL_THROTTLE_RATES = {
    "auth": env.str("HALL_THROTTLE_AUTH", default="10/min"),
    "login": env.str("HALL_THROTTLE_LOGIN", default="10/min"),
    "device_failures": env.str("HALL_THROTTLE_DEVICE_FAILURES", default="30/min"),
    "screen_failures": env.str("HALL_THROTTLE_SCREEN_FAILURES", default="30/min"),
}
# Paths whose POST is a login form (the admin's and the staff pages').
HALL_LOGIN_PATHS = ["/accounts/login/", "/admin/login/"]
# django-axes: 5 wrong passwords for one username from one address lock that pair out for 15 minutes
# (a 429), before any further password is checked; a good login clears the count.
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_HOURS", default=0.25)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_HANDLER = "axes.handlers.cache.AxesCacheHandler"
AXES_ENABLE_ADMIN = False  # its admin pages list database records, and the counts live in the cache
AXES_CLIENT_IP_CALLABLE = "halls.throttling.client_ip"
AXES_LOCKOUT_CALLABLE = "halls.throttling.axes_lockout"
# Request bodies above this (Django's 2.5 MB) are refused, with 413 and the JSON envelope under /api/
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=2_621_440)
# JSON bodies nested deeper than this are refused with 400 (halls.parsers).
HALL_JSON_MAX_DEPTH = env.int("HALL_JSON_MAX_DEPTH", default=32)

# --- REST API -------------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "halls.api_errors.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "halls.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_THROTTLE_RATES": HALL_THROTTLE_RATES,
    # The client address is REMOTE_ADDR: a client's own X-Forwarded-For header is never believed.
    "NUM_PROXIES": 0,
    "COERCE_DECIMAL_TO_STRING": True,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Bingo hall API",
    "DESCRIPTION": "Sessions, games, card sales, draws, claims and recall for Spanish bingo halls.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and Redoc from drf-spectacular-sidecar's static files, not a CDN: a hall may be offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The cashier's choice sets share field names ("kind", "state"): each named after its model's choices.
    "ENUM_NAME_OVERRIDES": {
        "PayableKindEnum": "halls.cashier.models.PayableKind",
        "PayableStateEnum": "halls.cashier.models.PayableState",
        "TicketStateEnum": "halls.cashier.models.TicketState",
        "PlayerCardStateEnum": "halls.cashier.models.PlayerCardState",
        "ShiftStateEnum": "halls.cashier.models.ShiftState",
        "CashDeviceKindEnum": "halls.cashier.models.DeviceKind",
        "LedgerKindEnum": "halls.cashier.models.TxKind",
        # The names bingo's had before the cashier's came, kept for the API's clients.
        "KindEnum": "bingo.traditional.models.ClaimKind",
        "StateEnum": "bingo.traditional.models.GameState",
        "DrawDeviceKindEnum": "bingo.traditional.models.DrawDeviceKind",
        "BallSetEventKindEnum": "bingo.traditional.models.BallSetEventKind",
        "PaperStockStateEnum": "bingo.traditional.models.StockState",
    },
}

# --- Channels -------------------------------------------------------------------------------------------
CHANNEL_LAYERS: dict[str, Any]
if REDIS_URL:
    # The pub/sub layer has no group expiry, so an always-on screen never silently stops receiving
    # (DESIGN §7); max_connections avoids redis-py 8's MaxConnectionsError under many clients.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {
                "hosts": [
                    REDIS_SENTINEL.channel_layer_host(max_connections=env.int("REDIS_MAX_CONNECTIONS", 1000))
                    if REDIS_SENTINEL
                    else {"address": REDIS_URL, "max_connections": env.int("REDIS_MAX_CONNECTIONS", 1000)}
                ],
                "prefix": _channel_prefix,
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "halls.channel_layer.ThreadSafeInMemoryChannelLayer"}}

# --- Celery ---------------------------------------------------------------------------------------------
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"  # a host name keeps kombu from warning it lacks one
if REDIS_SENTINEL:
    CELERY_BROKER_URL = REDIS_SENTINEL.broker_url()
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
# A killed worker must not lose a draw step (DESIGN §4): ack after the work, requeue on worker loss.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ROUTES = {
    "bingo.traditional.tasks.draw_next_ball": {"queue": "draws"},
    "bingo.traditional.tasks.reveal_draw": {"queue": "draws"},
    "bingo.electronic.tasks.draw_ball": {"queue": "draws"},
    "bingo.electronic.tasks.reveal_draw": {"queue": "draws"},  # the drawing workers hold the seeds' key
    "bingo.network.simultaneous.tasks.draw_network_ball": {"queue": "draws"},
    "bingo.network.simultaneous.tasks.decide_network_claims": {"queue": "draws"},
    "bingo.network.simultaneous.tasks.reveal_network_draw": {"queue": "draws"},  # the seeds' key is there
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Through a Redis outage of any length the worker keeps trying to reconnect (the default gives up after 100
# tries and exits), on kombu's Redis transport with the fix of config.broker (without it the worker died
# in most outages).
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
if REDIS_URL:
    CELERY_BROKER_TRANSPORT = (
        "config.broker:SentinelTransport" if REDIS_SENTINEL else "config.broker:Transport"
    )
# The worker's consumer tries to reconnect every 1-2 s (Celery's backs off to 30 s): config.worker.
CELERY_WORKER_CONSUMER = "config.worker:Consumer"
# A command to a Redis that stopped answering (paused, a dead host, a half-open socket) fails after
# HALL_REDIS_SOCKET_TIMEOUT s instead of hanging; the worker's BRPOP connection is dropped and re-made
# after brpop_timeout (1 s) + health_check_interval of silence.
HALL_REDIS_SOCKET_TIMEOUT = env.float("HALL_REDIS_SOCKET_TIMEOUT", default=5.0)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 3600,
    "socket_timeout": env.float("HALL_REDIS_SOCKET_TIMEOUT", default=5.0),
    "socket_connect_timeout": env.float("HALL_REDIS_SOCKET_TIMEOUT", default=5.0),
    "socket_keepalive": True,
    "retry_on_timeout": True,
    "health_check_interval": env.int("HALL_REDIS_HEALTH_CHECK_SECONDS", default=5),
}
# Installations sharing one Redis (a central and its venues on one machine: the network's end-to-end tests,
# a demo) keep their task queues apart under a key prefix each (kombu's global_keyprefix); unset, the keys
# are kombu's own (a production installation has its Redis).
if REDIS_SENTINEL:
    CELERY_BROKER_TRANSPORT_OPTIONS.update(REDIS_SENTINEL.broker_transport_options())
if _broker_prefix := env.str("HALL_BROKER_PREFIX", default=""):
    CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = _broker_prefix
# On a lost broker connection the running tasks finish (a draw step commits its ball; the reaper enqueues
# the next one if that publish failed): cancelling them would only roll back work that is done.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_TIMEZONE = TIME_ZONE
# Beat (issue 30): on Redis, celery-redbeat: every beat host runs one, one leader holds the lock (renewed
# every tick, at least every HALL_BEAT_MAX_INTERVAL_SECONDS) and sends; the others wait for it and take over
# within HALL_BEAT_LOCK_SECONDS of its death. Each entry's last run is in Redis, so the new leader sends what
# came due meanwhile (once). HALL_BEAT_SCHEDULER=file: Celery's file scheduler (exactly one beat then).
# Embedded (no Redis) the server's in-process beat keeps its schedule in memory (demo.embedded).
HALL_BEAT_SCHEDULER = env.str("HALL_BEAT_SCHEDULER", default="redbeat" if REDIS_URL else "file")
if HALL_BEAT_SCHEDULER == "redbeat" and REDIS_URL:
    CELERY_BEAT_SCHEDULER = "config.beat:Scheduler"
    CELERY_REDBEAT_REDIS_URL = env.str("HALL_REDBEAT_REDIS_URL", default="") or REDIS_URL
    CELERY_REDBEAT_REDIS_OPTIONS: dict[str, Any] = {
        "socket_timeout": HALL_REDIS_SOCKET_TIMEOUT,
        "socket_connect_timeout": HALL_REDIS_SOCKET_TIMEOUT,
    }
    if REDIS_SENTINEL and not env.str("HALL_REDBEAT_REDIS_URL", default=""):
        # Behind Sentinel the beats' lock and schedule are on the master the Sentinels name, as the broker's
        # queues are (REDIS_URL's host, "sentinel", is no server: the beats waited for it forever).
        CELERY_REDBEAT_REDIS_URL = REDIS_SENTINEL.redbeat_url()
        CELERY_REDBEAT_REDIS_OPTIONS = REDIS_SENTINEL.redbeat_options(HALL_REDIS_SOCKET_TIMEOUT)
    CELERY_REDBEAT_KEY_PREFIX = env.str("HALL_REDBEAT_PREFIX", default=f"{_broker_prefix}redbeat:")
    CELERY_REDBEAT_LOCK_TIMEOUT = env.int("HALL_BEAT_LOCK_SECONDS", default=5)
    CELERY_BEAT_MAX_LOOP_INTERVAL = env.float("HALL_BEAT_MAX_INTERVAL_SECONDS", default=1.0)
# Workers keep their database connection across tasks (config.celery): a new one cost ~15 ms per draw step.
# Seconds a worker's connection lives (the web processes keep CONN_MAX_AGE); the fixup still recycles it
# every CELERY_DB_REUSE_MAX tasks.
HALL_WORKER_CONN_MAX_AGE = env.int("HALL_WORKER_CONN_MAX_AGE", default=600)
# HTTP requests one web process serves at once (config.http_limit): each is a thread and a database
# connection; the rest wait in the event loop. 0: no bound.
HALL_WEB_MAX_REQUESTS = env.int("HALL_WEB_MAX_REQUESTS", default=24)
# The cyclic collector's thresholds in a web process (gc.set_threshold, set by config.asgi): "young,
# middle, old". Python's 700,10,10 ran a full collection every few seconds in a process holding a thousand
# terminal sockets during a sales window, each a pause of ~100 ms for every socket of the process (the
# sales bench's p99). Fewer young collections promote fewer objects still in use (a request in flight),
# and a full one waits for a thousand middle ones: none in a sales window, the young pauses under 15 ms.
HALL_WEB_GC_THRESHOLDS = tuple(
    int(n) for n in env.list("HALL_WEB_GC_THRESHOLDS", default=["2000", "10", "1000"])
)
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)
# The feed's pool tick (seconds): how often the beat looks for venues whose pool interval has ended.
HALL_FEED_POOL_TICK_SECONDS = env.float("HALL_FEED_POOL_TICK_SECONDS", default=10.0)
CELERY_BEAT_SCHEDULE = {
    # Simultaneous bingo: close the sales of network games whose deadline has come, resume lost draw steps
    # and decisions (the central), apply the central's entries a hall still holds (a venue).
    "tick-network-games": {
        "task": "bingo.network.simultaneous.tasks.tick_network_games",
        "schedule": env.float("HALL_SIMULTANEOUS_CLOSE_SECONDS", default=2.0),
        "options": {"expires": 2.0},
    },
    "reap-stalled-draws": {
        "task": "bingo.traditional.tasks.reap_stalled_draws",
        # Every second: a draw whose worker died goes on within HALL_DRAW_LEASE_SECONDS + this (issue 30).
        "schedule": env.float("HALL_REAPER_SECONDS", default=1.0),
        "options": {"expires": 2.0},
    },
    # Pools: fold contributions into the meters (and detect must-hit-by hits), seal the ledger.
    "fold-pools": {
        "task": "jackpots.tasks.fold_pools",
        "schedule": env.float("HALL_POOL_FOLD_SECONDS", default=1.0),
        "options": {"expires": 2.0},
    },
    "seal-pools": {
        "task": "jackpots.tasks.seal_pools",
        "schedule": env.float("HALL_POOL_SEAL_SECONDS", default=60.0),
    },
    # Pool meters on the screens: at most 4 a second per pool, only when changed (jackpots.tasks).
    # A tick not started within a second is dropped: the next one publishes the same meters.
    "publish-pool-meters": {
        "task": "jackpots.screens.publish_pool_meters",
        "schedule": env.float("HALL_METER_SECONDS", default=0.25),
        "options": {"expires": 1.0},
    },
    # Bingo prize programs: announce the scheduled prizes (BA-4 … BA-13) due in each room's next game.
    "announce-scheduled-programs": {
        "task": "bingo.traditional.tasks.announce_scheduled_programs",
        "schedule": env.float("HALL_PROGRAM_SCHEDULE_SECONDS", default=30.0),
        "options": {"expires": 30.0},
    },
    # Interconnected bingo (the central): rounds past their bounded wait decided by the written rule, and
    # the prizes' meters that the throttle held back sent to the halls (bingo.network.interconnected).
    "interconnected-rounds": {
        "task": "bingo.network.interconnected.tasks.decide_overdue_rounds",
        "schedule": env.float("HALL_NETWORK_TICK_SECONDS", default=10.0),
        "options": {"expires": 10.0},
    },
    # Machines: silent machines are marked offline with an alert. (Their progressive broadcast is not a beat
    # task: machines.broadcaster runs it in a loop of its own, see HALL_MACHINE_BROADCAST_SECONDS below.)
    # Tamper evidence: the head of every audit chain and pool seal chain, signed, to files outside the
    # database (halls.services.anchors); a tail cut or a wiped chain then no longer verifies.
    "anchor-audit-heads": {
        "task": "halls.tasks.anchor_audit_heads",
        "schedule": env.float("HALL_AUDIT_ANCHOR_SECONDS", default=60.0),
        "options": {"expires": 60.0},
    },
    # Four eyes: proposals nobody decided within HALL_FOUR_EYES_EXPIRY_MINUTES are marked expired.
    "expire-proposals": {
        "task": "halls.tasks.expire_proposals",
        "schedule": env.float("HALL_FOUR_EYES_SWEEP_SECONDS", default=60.0),
        "options": {"expires": 60.0},
    },
    # The cashier: tickets not redeemed within the venue's validity go to the house (halls.cashier.tasks).
    "expire-tickets": {
        "task": "halls.cashier.tasks.expire_tickets",
        "schedule": env.float("HALL_TICKET_EXPIRY_SECONDS", default=300.0),
        "options": {"expires": 300.0},
    },
    # Electronic bingo: close due sales, begin waiting draws, open next games, re-enqueue stalled draws.
    "electronic-tick": {
        "task": "bingo.electronic.tasks.tick",
        "schedule": env.float("HALL_ELECTRONIC_TICK_SECONDS", default=1.0),
        "options": {"expires": 1.0},
    },
    # The door: the visits' document digests past the retention (HALL_DOOR_VISIT_RETENTION_DAYS) cleared.
    "purge-door-visits": {
        "task": "halls.door.tasks.purge_visits",
        "schedule": env.float("HALL_DOOR_PURGE_SECONDS", default=3600.0),
        "options": {"expires": 3600.0},
    },
    # The cage: identifications (and the payouts' and flags' digests) past HALL_AML_RETENTION_YEARS purged.
    "purge-cage-identifications": {
        "task": "halls.cage.tasks.purge_identifications",
        "schedule": env.float("HALL_AML_PURGE_SECONDS", default=86400.0),
        "options": {"expires": 3600.0},
    },
    # The regulator's node: installations silent past their window raise an alarm, cleared when heard
    # again (halls.regulator.services.silence; a no-op in the other roles).
    "watch-feed-silence": {
        "task": "halls.regulator.tasks.watch_silence",
        "schedule": env.float("HALL_REGULATOR_SWEEP_SECONDS", default=10.0),
        "options": {"expires": 10.0},
    },
    # The feed to the gaming authority: the pools' amounts at each jurisdiction's interval (a tick finds the
    # venues whose interval ended since the last), and each ended day's reports (jackpots, machines, cashier,
    # door tasks: once per venue and day).
    "feed-pool-amounts": {
        "task": "jackpots.tasks.feed_pool_amounts",
        "schedule": HALL_FEED_POOL_TICK_SECONDS,
        "options": {"expires": HALL_FEED_POOL_TICK_SECONDS},
    },
    "feed-machine-meters": {
        "task": "machines.tasks.feed_machine_meters",
        "schedule": env.float("HALL_FEED_DAILY_SECONDS", default=900.0),
        "options": {"expires": 900.0},
    },
    "feed-cashier-days": {
        "task": "halls.cashier.tasks.feed_cashier_days",
        "schedule": env.float("HALL_FEED_DAILY_SECONDS", default=900.0),
        "options": {"expires": 900.0},
    },
    "feed-admissions": {
        "task": "halls.door.tasks.feed_admissions",
        "schedule": env.float("HALL_FEED_DAILY_SECONDS", default=900.0),
        "options": {"expires": 900.0},
    },
    "watch-machine-links": {
        "task": "machines.tasks.watch_machine_links",
        "schedule": env.float("HALL_MACHINE_WATCH_SECONDS", default=1.0),
        "options": {"expires": 1.0},
    },
}

# --- The demo -------------------------------------------------------------------------------------------
# The demo app (demo/: its seed, its self-playing rooms, tables and machines, `manage.py demo`) and its beat
# entries, everywhere but production: a production hall loads no demo code.
if not HALL_PRODUCTION:
    from demo import conf as demo_conf

    INSTALLED_APPS.append("demo")
    CELERY_BEAT_SCHEDULE.update(demo_conf.BEAT_SCHEDULE)
    HALL_DEMO_TABLE_AUTOPLAY = demo_conf.TABLE_AUTOPLAY

# --- The hall -------------------------------------------------------------------------------------------
# Interconnected bingo: at most one meter entry per prize this often on "network.<code>" (one is always sent
# after a round opens or is decided).
HALL_NETWORK_METER_SECONDS = env.float("HALL_NETWORK_METER_SECONDS", default=5.0)
# Gran Línea / Gran Bingo at a venue: an electronic game joins only a round whose wait outlasts it by this
# much (its contribution and result must reach the central in time); a round closer to its end is skipped.
HALL_GRAN_JOIN_MARGIN_SECONDS = env.float("HALL_GRAN_JOIN_MARGIN_SECONDS", default=30.0)
# Simultaneous bingo at the central: after a hall's valid claim, how long claims bound to the same ball from
# every other hall are awaited before the prize is decided (no ball is drawn meanwhile), at most: the window
# closes earlier once every hall with cards in play answered "no more" (bingo.network.simultaneous, step 7).
HALL_SIMULTANEOUS_CLAIM_SECONDS = env.float("HALL_SIMULTANEOUS_CLAIM_SECONDS", default=8.0)
# A draw with no ball for this long past its pace is re-enqueued by the reaper (worker killed, message lost).
HALL_DRAW_STALL_GRACE_SECONDS = env.float("HALL_DRAW_STALL_GRACE_SECONDS", default=10.0)
# Draw leases (halls.leases, config.leases; issue 30): a worker holding a draw step renews its lease every
# quarter of HALL_DRAW_LEASE_SECONDS; a step due HALL_DRAW_LEASE_GRACE_SECONDS ago whose lease nobody holds
# (its worker died) is re-enqueued by the reaper (every HALL_REAPER_SECONDS) on a worker that lives. Off
# embedded (one process: nobody to take over); HALL_DRAW_LEASES=0 leaves only the stall grace above.
HALL_DRAW_LEASES = env.bool("HALL_DRAW_LEASES", default=True)
HALL_DRAW_LEASE_SECONDS = env.float("HALL_DRAW_LEASE_SECONDS", default=2.0)
HALL_DRAW_LEASE_GRACE_SECONDS = env.float("HALL_DRAW_LEASE_GRACE_SECONDS", default=0.5)
# Each game's winner index, written at the close of sales and memory-mapped by every process of the host
# (bingo.traditional.services.detection); empty: none, each process rebuilds it from the database.
HALL_DETECTOR_DIR = env.str("HALL_DETECTOR_DIR", default=str(VAR_DIR / "detector"))

# The caller's voice (bingo.traditional.voice): clips generated offline by `manage.py build_voice` (`make
# voice`) with
# espeak-ng, served read-only from here to the room's audio screen; never synthesised at request time.
HALL_VOICE_DIR = Path(env.str("HALL_VOICE_DIR", default=str(VAR_DIR / "voice")))
HALL_VOICE_ENGINE = env.str("HALL_VOICE_ENGINE", default="espeak-ng")
HALL_VOICE_NAME = env.str("HALL_VOICE_NAME", default="es")
# Machines: every linked machine hears its levels this often (machines.broadcaster; they lock after 5 s
# of silence and must hear at least 2 a second: 4 a second rides out a half-second hiccup of a busy host).
# The broadcaster goes on with the last levels it read while reads fail, for at most MAX_STALE seconds.
HALL_MACHINE_BROADCAST_SECONDS = env.float("HALL_MACHINE_BROADCAST_SECONDS", default=0.25)
HALL_MACHINE_BROADCAST_MAX_STALE_SECONDS = env.float("HALL_MACHINE_BROADCAST_MAX_STALE_SECONDS", default=10.0)
# An operator's lock may find a game in progress: the machine ends it after the lock reached it. The first
# play the gateway hears after the lock, within this many seconds of it, is taken as that game's (recorded and
# contributed); any other play of the locked machine is refused `machine_locked`. 0: none is taken.
MACHINE_LOCK_GRACE_SECONDS = env.float("MACHINE_LOCK_GRACE_SECONDS", default=30.0)
# Machine gateway: database threads per web process serving the machines' sockets (machines.consumers).
MACHINE_GATEWAY_DB_THREADS = env.int("MACHINE_GATEWAY_DB_THREADS", default=8)
# Its group commit (machines.consumers): frames per batch, how long a batch waits for more after its first,
# batches in the database at once.
MACHINE_GATEWAY_BATCH_FRAMES = env.int("MACHINE_GATEWAY_BATCH_FRAMES", default=100)
MACHINE_GATEWAY_BATCH_WAIT_MS = env.float("MACHINE_GATEWAY_BATCH_WAIT_MS", default=5.0)
MACHINE_GATEWAY_BATCH_RUNNERS = env.int("MACHINE_GATEWAY_BATCH_RUNNERS", default=2)
# Every this many seconds each web process re-checks its screens (deactivated ones are closed) and
# sends each one its stream's head, so a screen that lost the last event reloads its snapshot.
HALL_SCREEN_SWEEP_SECONDS = env.float("HALL_SCREEN_SWEEP_SECONDS", default=10.0)
# A socket's connect (screens, terminals; issue 30): what a token was found to follow is kept by the web
# process this many seconds (forgotten at once on a re-check of that token: a device's token rotated, a
# screen changed), so a reconnect storm reads the database once per token, not once per socket.
HALL_SOCKET_ADMIT_CACHE_SECONDS = env.float("HALL_SOCKET_ADMIT_CACHE_SECONDS", default=60.0)
# At most this many sockets being admitted at once per web process; past it a connect waits its turn (a
# reconnect storm is admitted at the pace the process serves it)...
HALL_SOCKET_ADMIT_CONCURRENCY = env.int("HALL_SOCKET_ADMIT_CONCURRENCY", default=200)
# ...unless this many wait already: then it is refused at once, before any work (close 1013 with the reason
# "retry-after=S", S below: the page comes back at a random moment within S seconds, without doubling its
# back-off; while the process drains, S is the drain's spread).
HALL_SOCKET_ADMIT_QUEUE = env.int("HALL_SOCKET_ADMIT_QUEUE", default=4000)
HALL_SOCKET_RETRY_SECONDS = env.float("HALL_SOCKET_RETRY_SECONDS", default=2.0)
# A screen's (and a terminal's) snapshot: the part every screen of a room shows alike is built once per change
# of the room's stream and kept by the web process (halls.snapshot_cache), at most this many seconds (a
# change whose event was lost, or that has none, is seen within it, as the sweep's heads show it).
HALL_SNAPSHOT_CACHE_SECONDS = env.float("HALL_SNAPSHOT_CACHE_SECONDS", default=10.0)
# A web process that stops gracefully tells its screens and terminals to reconnect (close 1012, with a
# "stream.restart" frame) at a random moment within this many seconds, while its siblings take them.
HALL_SOCKET_DRAIN_SPREAD_SECONDS = env.float("HALL_SOCKET_DRAIN_SPREAD_SECONDS", default=3.0)
# Display acknowledgements (issue 28): the caller's console flags a screen that has not shown the current
# ball this many seconds after it was drawn.
HALL_ACK_LATE_SECONDS = env.float("HALL_ACK_LATE_SECONDS", default=2.0)
# A web process writes its screens' acks in batches of at most this many (halls.ack_batcher)...
HALL_ACK_BATCH = env.int("HALL_ACK_BATCH", default=500)
# ...and at most this many milliseconds after the first of a batch arrived.
HALL_ACK_FLUSH_MS = env.int("HALL_ACK_FLUSH_MS", default=250)
# /health/ (config.health): the stalled-draw reaper's heartbeat older than this is unhealthy (beat or the
# workers stopped); a draw this long past its pace plus HALL_DRAW_STALL_GRACE_SECONDS is unhealthy.
HALL_HEALTH_BEAT_STALE_SECONDS = env.float("HALL_HEALTH_BEAT_STALE_SECONDS", default=30.0)
HALL_HEALTH_DRAW_STALL_SECONDS = env.float("HALL_HEALTH_DRAW_STALL_SECONDS", default=30.0)
# The Celery worker serves its metrics (halls.metrics) on this address and port for Prometheus; 0: not.
HALL_WORKER_METRICS_PORT = env.int("HALL_WORKER_METRICS_PORT", default=0)
HALL_WORKER_METRICS_ADDRESS = env.str("HALL_WORKER_METRICS_ADDRESS", default="127.0.0.1")
# Pool contributions run as server-side prepared statements; turn off behind a transaction-mode pooler
# without protocol-level prepared statements (PgBouncer < 1.21 or max_prepared_statements = 0).
HALL_POOL_PREPARED_STATEMENTS = env.bool("HALL_POOL_PREPARED_STATEMENTS", default=True)
# The per-process group commits (halls.group_commit), each user with its own settings: on or off, at most
# SIZE items per group, gathered for at most WAIT_MS, RUNNERS groups writing at once.
# Independent pool contributions (jackpots.services.contributions).
HALL_POOL_GROUP_COMMIT = env.bool("HALL_POOL_GROUP_COMMIT", default=True)
HALL_POOL_GROUP_SIZE = env.int("HALL_POOL_GROUP_SIZE", default=64)
HALL_POOL_GROUP_WAIT_MS = env.float("HALL_POOL_GROUP_WAIT_MS", default=2.0)
HALL_POOL_GROUP_RUNNERS = env.int("HALL_POOL_GROUP_RUNNERS", default=2)
# Whole register_bets calls of concurrent casino tables (jackpots.tables.services.bets).
HALL_TABLE_GROUP_COMMIT = env.bool("HALL_TABLE_GROUP_COMMIT", default=True)
HALL_TABLE_GROUP_SIZE = env.int("HALL_TABLE_GROUP_SIZE", default=64)
HALL_TABLE_GROUP_WAIT_MS = env.float("HALL_TABLE_GROUP_WAIT_MS", default=2.0)
HALL_TABLE_GROUP_RUNNERS = env.int("HALL_TABLE_GROUP_RUNNERS", default=2)
# Electronic bingo's card purchases (bingo.electronic.services.sales).
HALL_SALES_GROUP_COMMIT = env.bool("HALL_SALES_GROUP_COMMIT", default=True)
HALL_SALES_GROUP_SIZE = env.int("HALL_SALES_GROUP_SIZE", default=64)
HALL_SALES_GROUP_WAIT_MS = env.float("HALL_SALES_GROUP_WAIT_MS", default=2.0)
HALL_SALES_GROUP_RUNNERS = env.int("HALL_SALES_GROUP_RUNNERS", default=2)
# Player cards' spends (halls.cashier.services.player_cards.spend: a terminal's purchase, a table's buy-in).
# One group written at a time, as the cash-ins below: a venue's groups meet at its audit head and sales
# account anyway, and two runners halved the groups (32 threads: groups of 29, 730-850 spends/s with one
# runner, against groups of 15, 460-592/s with two; bench/cashier_ledger.py, issue 30). Since a group's
# statements were cut (locks and moves in one statement, keys looked up once): 1,021-1,438 spends/s.
HALL_SPEND_GROUP_COMMIT = env.bool("HALL_SPEND_GROUP_COMMIT", default=True)
HALL_SPEND_GROUP_SIZE = env.int("HALL_SPEND_GROUP_SIZE", default=64)
HALL_SPEND_GROUP_WAIT_MS = env.float("HALL_SPEND_GROUP_WAIT_MS", default=2.0)
HALL_SPEND_GROUP_RUNNERS = env.int("HALL_SPEND_GROUP_RUNNERS", default=1)
# Player cards' cash-ins at the tills (player_cards.cash_in): one transaction, one audit append a group. One
# group written at a time: a group locks its cashiers' shifts first, so a second one only waited for the
# first's shift lock, and took half the callers (32 threads at one till: groups of 28 and 291-349 cash-ins/s
# with one runner, against groups of 14 and 208 with two; bench/cashier_ledger.py, issue 30). Since a
# group's statements were cut: 756-1,087 cash-ins/s at one till, about 0.13x the machine's plain inserts.
HALL_CASH_IN_GROUP_COMMIT = env.bool("HALL_CASH_IN_GROUP_COMMIT", default=True)
HALL_CASH_IN_GROUP_SIZE = env.int("HALL_CASH_IN_GROUP_SIZE", default=64)
HALL_CASH_IN_GROUP_WAIT_MS = env.float("HALL_CASH_IN_GROUP_WAIT_MS", default=2.0)
HALL_CASH_IN_GROUP_RUNNERS = env.int("HALL_CASH_IN_GROUP_RUNNERS", default=1)
# A service transaction that PostgreSQL broke off (a deadlock, a serialization failure) is run again this
# many times at most (halls.db_retry), after a jittered pause starting at BACKOFF_MS and doubling.
HALL_DB_RETRIES = env.int("HALL_DB_RETRIES", default=5)
HALL_DB_RETRY_BACKOFF_MS = env.float("HALL_DB_RETRY_BACKOFF_MS", default=5.0)
# Electronic bingo's verification system (bingo.electronic.services.verification, sessions): a session opens
# only on a passed verification at most this many hours old; a terminal is alive if heard from (its `hello`)
# within ALIVE seconds and its clock within the tolerance; the server's clock within its tolerance of the
# database's; the channel layer's round trip within its timeout.
HALL_VERIFICATION_MAX_AGE_HOURS = env.float("HALL_VERIFICATION_MAX_AGE_HOURS", default=12.0)
HALL_TERMINAL_ALIVE_SECONDS = env.float("HALL_TERMINAL_ALIVE_SECONDS", default=120.0)
HALL_TERMINAL_CLOCK_TOLERANCE_MS = env.int("HALL_TERMINAL_CLOCK_TOLERANCE_MS", default=2000)
HALL_SERVER_CLOCK_TOLERANCE_SECONDS = env.float("HALL_SERVER_CLOCK_TOLERANCE_SECONDS", default=2.0)
HALL_VERIFICATION_LAYER_TIMEOUT_SECONDS = env.float("HALL_VERIFICATION_LAYER_TIMEOUT_SECONDS", default=3.0)
# Secret that signs card security codes; production must set its own (refused above when missing or a
# placeholder). An installation that ran without it signed its cards with SECRET_KEY: set it to that value.
HALL_CARD_SECRET = env.str("HALL_CARD_SECRET", default=SECRET_KEY)
# Keys the prohibited-access registers' entries (halls.door: HMAC-SHA256 of each person's document, never
# the number in clear); production must set its own (refused above). Changing it leaves every loaded
# version unreadable (the door's lookup says so) until the registers' files are loaded again.
HALL_REGISTER_KEY = env.str("HALL_REGISTER_KEY", default=SECRET_KEY)
# The door's admission (halls.door.services.admission). There is no per-jurisdiction settings place in the
# hall yet, so these are settings: the default for every jurisdiction, and HALL_DOOR_BY_JURISDICTION's
# overrides per jurisdiction code (e.g. {"CT": {"adult_age": 18, "visit_retention_days": 30}}). Both
# defaults are only defaults: the operator checks them against the law in force in each region.
HALL_DOOR_ADULT_AGE = env.int("HALL_DOOR_ADULT_AGE", default=18)
# How long a visit keeps the person's document digest; then the purge clears it and the counts stay.
HALL_DOOR_VISIT_RETENTION_DAYS = env.int("HALL_DOOR_VISIT_RETENTION_DAYS", default=30)
# How long a player (halls.cashier.models.Player) keeps their document's digest after their last admission;
# then the purge clears it (the record, its cards and ledger stay; a person coming back is a new player).
# "player_retention_days" per jurisdiction. A default for the operator to check against the law.
HALL_DOOR_PLAYER_RETENTION_DAYS = env.int("HALL_DOOR_PLAYER_RETENTION_DAYS", default=365)
# The hour (venue's local time) at which the door's day begins: the live count of who is inside counts the
# admitted visits from then (a hall open past midnight keeps its evening's people), "day_start_hour" per
# jurisdiction.
HALL_DOOR_DAY_START_HOUR = env.int("HALL_DOOR_DAY_START_HOUR", default=6)
# Four eyes (halls.foureyes): a money-deciding change proposed and not approved within this many minutes
# expires (its approval is refused; a new proposal is needed).
HALL_FOUR_EYES_EXPIRY_MINUTES = env.int("HALL_FOUR_EYES_EXPIRY_MINUTES", default=30)
# A player card is issued, loaded and used at a terminal only for a player admitted at the door today (the
# venue's door day, HALL_DOOR_DAY_START_HOUR) who has not left and whose admission stands
# (halls.cashier.services.admitted); per jurisdiction under the key "cards_need_admission" of
# HALL_DOOR_BY_JURISDICTION. The test run turns it off in-process (tests/conftest.py).
HALL_DOOR_CARDS_NEED_ADMISSION = env.bool("HALL_DOOR_CARDS_NEED_ADMISSION", default=True)
HALL_DOOR_BY_JURISDICTION: dict[str, dict[str, int]] = {}
# Registers consulted online at their authority's service (halls.door.online), by register code, as JSON:
# {"RGIAJ": {"url": "https://authority.example/rgiaj/query", "timeout": 0.5, "token": "..."}} (timeout and
# token optional). The authority's answer decides; while its service is down, slow or answering garbage,
# the register's last loaded file decides and the visit records it (Visit.consultation). Every online
# query of one admission shares the budget, so the decision stays under a second.
HALL_DOOR_ONLINE_REGISTERS: dict[str, dict[str, object]] = env.json("HALL_DOOR_ONLINE_REGISTERS", default={})
HALL_DOOR_ONLINE_TIMEOUT_SECONDS = env.float("HALL_DOOR_ONLINE_TIMEOUT_SECONDS", default=0.5)
HALL_DOOR_ONLINE_BUDGET_SECONDS = env.float("HALL_DOOR_ONLINE_BUDGET_SECONDS", default=0.8)
# Tickets (TITO, halls.cashier.ticketrules): the most one ticket may hold (none issued above it), and the
# amount above which a ticket is redeemed only at the cage, never at a terminal or kiosk. Decimal strings in
# euros; each venue may set its own on its cashier settings (the admin), else its jurisdiction's figure from
# HALL_TICKET_BY_JURISDICTION (e.g. {"ML": {"max_amount": "2000.00", "cage_above": "500.00"}}), else these.
# The regulations at hand (Melilla's, seeds 000 art. 151.2.f) only say tickets are "canjeables en caja":
# both figures are the house's defaults, for the operator to check against the law in force.
HALL_TICKET_MAX_AMOUNT = env.str("HALL_TICKET_MAX_AMOUNT", default="3000.00")
HALL_TICKET_CAGE_ABOVE = env.str("HALL_TICKET_CAGE_ABOVE", default="1000.00")
HALL_TICKET_BY_JURISDICTION: dict[str, dict[str, str]] = {}
# A player's limits and the terminals' reality checks (halls.cashier.services.limits): how long a raised or
# removed limit waits before it applies (72 h: the longest cooling-off of the Spanish texts read; lowering is
# at once), and every how many minutes a terminal session shows its reality check (a float: a lab or a test
# may ask for seconds). HALL_LIMITS_BY_JURISDICTION overrides them per jurisdiction code
# ({"CT": {"cooling_off_hours": 24, "reality_check_minutes": 30}}). Defaults only: checked against the law.
HALL_LIMITS_COOLING_OFF_HOURS = env.float("HALL_LIMITS_COOLING_OFF_HOURS", default=72.0)
HALL_LIMITS_REALITY_CHECK_MINUTES = env.float("HALL_LIMITS_REALITY_CHECK_MINUTES", default=60.0)
HALL_LIMITS_BY_JURISDICTION: dict[str, dict[str, float]] = {}
# The cage's anti-money-laundering rules (halls.cage; Ley 10/2010): defaults for every jurisdiction, and
# HALL_AML_BY_JURISDICTION's overrides per jurisdiction code (e.g. {"CT": {"threshold": "2000.00"}}); the
# operator checks each against the law in force. A payout at or above the threshold waits for the winner's
# identification; one person's payouts within the window are added up (a split under the threshold is
# flagged as structuring).
HALL_AML_THRESHOLD = env.str("HALL_AML_THRESHOLD", default="2500.00")
HALL_AML_WINDOW_HOURS = env.int("HALL_AML_WINDOW_HOURS", default=24)
# Little play: money cashed in and out of a card or a ticket with less than this percent of it played in
# between. 10 % by default: a player who came to play spends far more than a tenth of what they load (a
# bingo card or a terminal's game takes it in minutes), while token play to disguise a cash-in/cash-out
# stays under it; below the minimum cash-in nothing is flagged (pocket money is not laundering, and the
# officer's list stays readable).
HALL_AML_LITTLE_PLAY_PERCENT = env.str("HALL_AML_LITTLE_PLAY_PERCENT", default="10")
HALL_AML_LITTLE_PLAY_MINIMUM = env.str("HALL_AML_LITTLE_PLAY_MINIMUM", default="1000.00")
# How long an identification (the winner's document, name, birth date) is kept: ten years (art. 25).
HALL_AML_RETENTION_YEARS = env.int("HALL_AML_RETENTION_YEARS", default=10)
HALL_AML_BY_JURISDICTION: dict[str, dict[str, str | int]] = {}
# Gaming-tax returns (halls.tax): the period a venue files for, "month" or "quarter", overridden per
# jurisdiction code by HALL_TAX_BY_JURISDICTION (JSON, e.g. {"CT": {"period": "quarter"}}). The rates are
# never settings: they are the rate tables the operator enters, with their legal reference.
HALL_TAX_PERIOD = env.str("HALL_TAX_PERIOD", default="month")
if HALL_TAX_PERIOD not in ("month", "quarter"):
    raise ImproperlyConfigured(f"HALL_TAX_PERIOD must be 'month' or 'quarter', not {HALL_TAX_PERIOD!r}.")
HALL_TAX_BY_JURISDICTION: dict[str, dict[str, str]] = env.json("HALL_TAX_BY_JURISDICTION", default={})

# --- The network of venues (halls.link) -----------------------------------------------------------------
# The same codebase runs a venue installation (the default) or the central. A venue sends its outbox to the
# central and follows the central's streams with `manage.py run_link` (deploy/systemd/hall-link.service);
# the central serves /api/link/ and /ws/link/ to its venues' credentials (`manage.py link_credential`).
HALL_ROLE = env.str("HALL_ROLE", default="venue")
if HALL_ROLE not in ("venue", "central", "regulator"):
    raise ImproperlyConfigured(f"HALL_ROLE must be 'venue', 'central' or 'regulator', not {HALL_ROLE!r}.")
# Venue: the central's base URL (https://central.example.net), this venue's licence_number, its credential.
HALL_CENTRAL_URL = env.str("HALL_CENTRAL_URL", default="").rstrip("/")
HALL_LINK_VENUE = env.str("HALL_LINK_VENUE", default="")
HALL_LINK_KEY = env.str("HALL_LINK_KEY", default="")
HALL_LINK_SECRET = env.str("HALL_LINK_SECRET", default="")
# Venue: seconds to connect and to wait for an answer; messages per POST; how often the outbox is read
# when idle; a POST with nothing to send at least this often (the central's "last seen"); the cap of the
# backoff between retries while the central is down; a catch-up of every stream at least this often.
HALL_LINK_CONNECT_TIMEOUT = env.float("HALL_LINK_CONNECT_TIMEOUT", default=5.0)
HALL_LINK_TIMEOUT = env.float("HALL_LINK_TIMEOUT", default=15.0)
HALL_LINK_BATCH = env.int("HALL_LINK_BATCH", default=200)
HALL_LINK_POLL_SECONDS = env.float("HALL_LINK_POLL_SECONDS", default=0.2)
HALL_LINK_HEARTBEAT_SECONDS = env.float("HALL_LINK_HEARTBEAT_SECONDS", default=10.0)
HALL_LINK_BACKOFF_MAX_SECONDS = env.float("HALL_LINK_BACKOFF_MAX_SECONDS", default=30.0)
HALL_LINK_CATCHUP_SECONDS = env.float("HALL_LINK_CATCHUP_SECONDS", default=30.0)
# Central: seconds a web process keeps a venue credential it verified before reading it again (0: every
# request reads it). A rotation or revocation is seen by every process within half a second through the
# shared cache; this bounds it only when the shared cache could not be told (halls.link.services.credentials).
# At 10 s a re-read was due every 10 s for each venue, and waited for a pooled connection (p99 3 s at 300).
HALL_LINK_CREDENTIAL_CACHE_SECONDS = env.float("HALL_LINK_CREDENTIAL_CACHE_SECONDS", default=60.0)
# Venue: the gaming authority's service, where the outbox's notices to it go (a person's self-exclusion,
# POSTed to <url>/notices by `manage.py run_link`, halls.link.transport.AuthoritySender), and its token
# (sent as a Bearer token when set). Blank: the notices wait in the outbox until it is set.
HALL_AUTHORITY_URL = env.str("HALL_AUTHORITY_URL", default="").rstrip("/")
HALL_AUTHORITY_TOKEN = env.str("HALL_AUTHORITY_TOKEN", default="")
# --- The feed to the gaming authority (issue 29: halls.feed, halls.regulator) ------------------------------
# An installation (a venue, or a network's central) tells its region's regulator node what happens, in
# real time, through its outbox (halls.feed.services.emit; `manage.py run_link` sends it). Switched on per
# jurisdiction: HALL_FEED_ENABLED is every jurisdiction's default (and a central's own switch),
# HALL_FEED_BY_JURISDICTION overrides it per jurisdiction code, as JSON
# ({"CT": {"enabled": true, "pool_interval_seconds": 60}}); off by default, as no region asks for it
# until its authority says so.
HALL_FEED_ENABLED = env.bool("HALL_FEED_ENABLED", default=False)
HALL_FEED_BY_JURISDICTION: dict[str, dict[str, object]] = env.json("HALL_FEED_BY_JURISDICTION", default={})
# The pools' amounts go on the feed at least this often (and at every award), per jurisdiction under
# "pool_interval_seconds".
HALL_FEED_POOL_INTERVAL_SECONDS = env.float("HALL_FEED_POOL_INTERVAL_SECONDS", default=60.0)
# The regulator node's base URL (https://feed.authority.example): the feed is POSTed to
# <url>/api/regulator/feed/. Blank: the messages wait in the outbox until it is set.
HALL_REGULATOR_URL = env.str("HALL_REGULATOR_URL", default="").rstrip("/")
# Nothing to send for this long: a heartbeat message (the node's silence window counts it).
HALL_FEED_HEARTBEAT_SECONDS = env.float("HALL_FEED_HEARTBEAT_SECONDS", default=30.0)
# Messages per POST to the node.
HALL_FEED_BATCH = env.int("HALL_FEED_BATCH", default=200)
# The node (HALL_ROLE=regulator): an installation not heard from (a heartbeat counts) for this long raises
# a "silent" alarm, unless its registration sets a window of its own (the beat entry "watch-feed-silence"
# sweeps every HALL_REGULATOR_SWEEP_SECONDS, 10 by default).
HALL_REGULATOR_SILENCE_SECONDS = env.int("HALL_REGULATOR_SILENCE_SECONDS", default=120)
# The node: the most messages one POST may carry (a larger batch is refused, nothing of it applied).
HALL_REGULATOR_MAX_BATCH = env.int("HALL_REGULATOR_MAX_BATCH", default=500)
# The daily reports (machine meters, cashier totals, admission counts) go once the venue's day has ended,
# at most HALL_FEED_DAYS_BACK days back (the first days after the feed is switched on).
HALL_FEED_DAYS_BACK = env.int("HALL_FEED_DAYS_BACK", default=7)
# Central: a venue not heard from (no socket open, no request) for this long is shown offline; a rotated
# credential keeps working this long after its successor is issued.
HALL_LINK_OFFLINE_SECONDS = env.float("HALL_LINK_OFFLINE_SECONDS", default=30.0)
# Wide-area pools (jackpots.widearea): a venue forwards its members' contributions to the central in one
# outbox message per pool at most every FORWARD seconds; the central publishes a pool's levels on the
# network's stream when they changed, at most every LEVELS seconds, and at least every HEARTBEAT seconds
# (a venue that hears none for the pool's window withdraws the level).
HALL_WIDE_AREA_FORWARD_SECONDS = env.float("HALL_WIDE_AREA_FORWARD_SECONDS", default=0.5)
HALL_WIDE_AREA_LEVELS_SECONDS = env.float("HALL_WIDE_AREA_LEVELS_SECONDS", default=0.25)
HALL_WIDE_AREA_HEARTBEAT_SECONDS = env.float("HALL_WIDE_AREA_HEARTBEAT_SECONDS", default=5.0)
# Their beat entries (jackpots.widearea.tasks), each only in the role that does it: a venue's batches to the
# central and its withdrawn levels recorded; the central's levels to the venues (four times a second: not
# dispatched at all in a venue, where it would do nothing).
if HALL_ROLE == "central":
    CELERY_BEAT_SCHEDULE["publish-wide-area-levels"] = {
        "task": "jackpots.widearea.tasks.publish_wide_area_levels",
        "schedule": HALL_WIDE_AREA_LEVELS_SECONDS,
        "options": {"expires": 1.0},
    }
elif HALL_ROLE == "venue":
    CELERY_BEAT_SCHEDULE["forward-wide-area"] = {
        "task": "jackpots.widearea.tasks.forward_wide_area",
        "schedule": HALL_WIDE_AREA_FORWARD_SECONDS,
        "options": {"expires": 1.0},
    }
    CELERY_BEAT_SCHEDULE["watch-wide-area"] = {
        "task": "jackpots.widearea.tasks.watch_wide_area",
        "schedule": 1.0,
        "options": {"expires": 2.0},
    }
HALL_LINK_ROTATION_GRACE_SECONDS = env.float("HALL_LINK_ROTATION_GRACE_SECONDS", default=3600.0)

# --- The gaming authority's node (HALL_ROLE=regulator: halls.regulator) ----------------------------------
# An installation not heard from (no message, not even a heartbeat) for this long is silent (an
# installation's own window, Installation.silence_seconds, wins when set): the portal's map shows it so.
HALL_REGULATOR_SILENCE_SECONDS = env.int("HALL_REGULATOR_SILENCE_SECONDS", default=120)
# The portal's live page shows the games and sessions with a message in this many minutes.
HALL_REGULATOR_LIVE_MINUTES = env.int("HALL_REGULATOR_LIVE_MINUTES", default=180)
# The draw rooms whose every game must be committed (game.committed) before its sales or balls reach the
# node: the node raises an alarm otherwise (bingo.draws' rooms: "electronic" holds automatic bingo too).
# Traditional bingo is not among them by default: a hall's blower or ball reader draws without a seed (only
# its RNG games commit).
HALL_REGULATOR_COMMITTED_ROOMS = env.list(
    "HALL_REGULATOR_COMMITTED_ROOMS", default=["electronic", "simultaneous"]
)

# --- Tamper evidence (halls.services.audit_keys, anchors, verify) -------------------------------------
# The audit chain is an HMAC-SHA256 chain under this key, which must NOT live in the database: anyone who
# can edit the database can then not recompute the chain. Production sets it (`manage.py check --deploy`
# says so when it is missing); without it a per-install random key is made once in HALL_AUDIT_KEY_FILE
# (the embedded demo's var/audit.key), which keeps the key out of the database but on the same host.
HALL_AUDIT_KEY = env.str("HALL_AUDIT_KEY", default="")
HALL_AUDIT_KEY_FILE = env.str("HALL_AUDIT_KEY_FILE", default=str(VAR_DIR / "audit.key"))
# Verifiable draws (bingo.draws): every RNG game's balls follow from a seed committed before its sales and
# revealed after it. Off, RNG games draw with `secrets` and commit nothing (the draw-step bench compares).
HALL_VERIFIABLE_DRAWS = env.bool("HALL_VERIFIABLE_DRAWS", default=True)
# The drawing workers' X25519 key (a file outside the database): it opens the sealed seeds. Only the workers
# get it; web processes get the public key (64 hex digits) and seal to it. Without either (the embedded hall,
# development, tests) the key file is made on first use.
HALL_DRAW_SEED_KEY_FILE = env.str("HALL_DRAW_SEED_KEY_FILE", default=str(VAR_DIR / "draw-seed.key"))
HALL_DRAW_SEED_PUBLIC_KEY = env.str("HALL_DRAW_SEED_PUBLIC_KEY", default="")
# Keys used before a rotation, so entries they signed still verify (comma-separated).
HALL_AUDIT_OLD_KEYS = env.list("HALL_AUDIT_OLD_KEYS", default=[])
# Signed, dated anchors of every chain head: one JSON line per change, one file per chain, in a folder per
# installation (its id: halls.services.installation) under this directory (keep it on another disk or host,
# or ship it), and each batch POSTed here when set.
HALL_AUDIT_ANCHOR_DIR = env.str("HALL_AUDIT_ANCHOR_DIR", default=str(VAR_DIR / "anchors"))
HALL_AUDIT_ANCHOR_URL = env.str("HALL_AUDIT_ANCHOR_URL", default="")
# The installation's Ed25519 key that signs the anchors (a PEM file outside the database, made on first use;
# production: a disk of its own, backed up). Its public half is at /.well-known/hall-anchor-key.
HALL_ANCHOR_SIGNING_KEY_FILE = env.str(
    "HALL_ANCHOR_SIGNING_KEY_FILE", default=str(VAR_DIR / "anchor-signing.pem")
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
    "loggers": {"hall": {"level": env.str("HALL_LOG_LEVEL", default="INFO")}},
}
