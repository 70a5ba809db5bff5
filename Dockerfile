# FaithBench Calibration: one image for the web processes and the task worker (compose.yaml runs both).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings.prod

WORKDIR /app
COPY requirements.lock pyproject.toml ./
RUN pip install --no-cache-dir -r requirements.lock

COPY . .
# Static files are collected into the image and served by WhiteNoise (compressed, content-hashed names).
# collectstatic imports the settings, which insist on a real key and host list: placeholders only here.
RUN DJANGO_SECRET_KEY=collectstatic-only-placeholder-key-not-used-at-run-time-0123456789 \
    DJANGO_ALLOWED_HOSTS=localhost python manage.py collectstatic --noinput

# /app/downloads: the stored report files nginx sends (compose.yaml mounts a volume there; it takes this owner).
RUN mkdir -p /app/downloads && useradd --create-home --uid 10001 faithbench && chown -R faithbench /app
USER faithbench

EXPOSE 8000
ENV HOST=0.0.0.0 PORT=8000
CMD ["gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi"]
