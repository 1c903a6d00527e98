FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY core ./core
COPY tgbot ./tgbot
COPY locales ./locales
RUN pip install . && useradd --system --no-create-home bot
USER bot
# The package reads its catalogs from locales/ beside it.
ENV CHEAT_LOCALES=/app/locales
CMD ["python", "-m", "tgbot"]
