FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml setup.py README.md ./
COPY core ./core
COPY tgbot ./tgbot
COPY locales ./locales
RUN pip install . && useradd --system --no-create-home bot
USER bot
# the installed console script (python -m tgbot here would import the source copy in /app)
CMD ["cheat-bot"]
