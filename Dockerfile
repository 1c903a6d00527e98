# The bot's image: `docker compose build` (docker-compose.yml), or `docker build -t cheat-bot .`
# The base image is pinned by tag; the dependencies by constraints.txt (the versions the tests run on).
FROM python:3.11.13-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml setup.py README.md LICENSE constraints.txt ./
COPY core ./core
COPY tgbot ./tgbot
COPY locales ./locales
# the playground (cheat-playground: the bot against the Bot API emulator, no Telegram needed)
COPY playground ./playground
RUN pip install -c constraints.txt . && useradd --system --no-create-home bot
USER bot
# The internal listener (/healthz, /metrics) on every interface of the container: the healthcheck
# and Prometheus reach it; publish it on no public address (docs/OPERATING.md).
ENV HTTP_LISTEN=0.0.0.0:8080
# 8080: HTTP_LISTEN; 8443: WEBHOOK_LISTEN's default (webhook mode only)
EXPOSE 8080 8443
# the installed console script (python -m tgbot here would import the source copy in /app)
CMD ["cheat-bot"]
