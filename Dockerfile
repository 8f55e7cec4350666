FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY bot ./bot
COPY agent ./agent
COPY channels ./channels
COPY skills ./skills
COPY config.example.yaml ./
RUN pip install . && useradd --create-home --uid 10001 antler && mkdir -p /data \
    && chown antler /data

USER antler
# Mount your config at /app/config.yaml. The working directory is the /data volume, so the default
# storage.data_dir (.antler) lands on it.
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8001
CMD ["antler", "serve", "--config", "/app/config.yaml"]
