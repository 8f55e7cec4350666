FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    ANTLER_HEALTH_URL=http://127.0.0.1:8001/health
WORKDIR /app

# bubblewrap for the bwrap sandbox (bash/python). It needs user namespaces, which Docker's default
# seccomp profile refuses: run the container with `--security-opt seccomp=unconfined` (or a
# profile allowing clone/unshare of namespaces), else Antler falls back to the local provider and
# `antler check` says why (docs/agent.md, Sandbox).
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, in their own layer: a code change does not reinstall them.
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; deps = tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']; print(chr(10).join(deps))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt && rm /tmp/requirements.txt

COPY bot ./bot
COPY agent ./agent
COPY channels ./channels
COPY gateway ./gateway
COPY skills ./skills
COPY config.example.yaml extensions_config.example.json ./
RUN pip install --no-deps . && useradd --create-home --uid 10001 antler \
    && mkdir -p /data && chown antler /data && ln -s /data /app/.antler

USER antler
# Mount your config at /app/config.yaml. Relative paths in it resolve against its folder, /app:
# the bundled skills (`agent.skills.path: skills`) are /app/skills, and the default
# `storage.data_dir` (.antler) is /app/.antler, a link to the /data volume.
VOLUME ["/data"]
EXPOSE 8001
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen(os.environ['ANTLER_HEALTH_URL'], timeout=4)"
CMD ["antler", "serve", "--config", "/app/config.yaml"]
