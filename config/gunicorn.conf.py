"""gunicorn settings for FaithBench Calibration: `gunicorn -c config/gunicorn.conf.py config.wsgi`.

Every value can be overridden from the environment (names below). Defaults were measured on the 2-core
machine of benchmarks/load.py (docs/deployment.md): requests spend much of their time waiting for
PostgreSQL, so a few processes with a few threads each keep the cores busy without the memory of many
processes. Each thread holds its own persistent database connection (CONN_MAX_AGE), so one web node opens
up to workers × threads connections: keep the total over all nodes (plus the task workers) under
PostgreSQL's max_connections.
"""
import multiprocessing
import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


cores = multiprocessing.cpu_count()

bind = os.environ.get("GUNICORN_BIND", f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}")
# WEB_CONCURRENCY is the name Heroku-style platforms set; gunicorn reads it itself too.
workers = _int("WEB_CONCURRENCY", _int("GUNICORN_WORKERS", cores + 1))
threads = _int("GUNICORN_THREADS", 4)
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread" if threads > 1 else "sync")

# A request that takes longer than this is killed and its worker restarted (the slowest pages, report
# downloads, take well under a second; report computation runs in the task worker, not here).
timeout = _int("GUNICORN_TIMEOUT", 30)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
keepalive = _int("GUNICORN_KEEPALIVE", 5)  # behind a load balancer, keep this above its idle timeout
# Recycle workers now and then (jittered, so they do not all restart at once) to bound slow leaks.
max_requests = _int("GUNICORN_MAX_REQUESTS", 5000)
max_requests_jitter = _int("GUNICORN_MAX_REQUESTS_JITTER", 500)

# Load the application (settings, every app, the URLconf: see config/wsgi.py) once in the master before
# forking: workers start warm and share that memory. GUNICORN_PRELOAD=0 loads it in each worker instead
# (needed for `kill -HUP` code reloads).
preload_app = os.environ.get("GUNICORN_PRELOAD", "1").lower() not in {"0", "false", "no", "off"}

# Access log on stdout as JSON lines, with the request id that RequestLogMiddleware echoes;
# GUNICORN_ACCESS_LOG="" turns it off (the application's own request log has the same fields plus the user).
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-") or None
access_log_format = (
    '{"time": "%(t)s", "logger": "gunicorn.access", "request_id": "%({x-request-id}o)s", "remote": "%(h)s", '
    '"method": "%(m)s", "path": "%(U)s", "status": %(s)s, "bytes": "%(B)s", "duration_ms": %(M)s}'
)
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
# Behind a proxy: trust its X-Forwarded-* from these addresses (comma-separated; "*" inside a private network).
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
# gunicorn's control socket (for `gunicornc`) defaults to one path per user, which two servers on one host
# would share; nothing here uses it. GUNICORN_CONTROL_SOCKET=1 turns it back on.
control_socket_disable = os.environ.get("GUNICORN_CONTROL_SOCKET", "0").lower() in {"0", "false", "no", "off"}
