# Multi-stage build: the official Swift image builds, a slim Debian image runs. The last stage,
# the default target, is the operators' image (docker-compose.yml); `dev` adds PostgreSQL's server
# binaries for `onboard serve --dev` with its embedded cluster (compose.dev.yml).
# Base images are pinned to exact versions (scripts/check-docker reproduces the build stage with
# the host's toolchain and says when its Swift differs from this one); bump them deliberately.
FROM swift:6.3.1-bookworm AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libpq-dev libssl-dev zlib1g-dev libcrypt-dev libcurl4-openssl-dev pkg-config make \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
# `make release`: one binary with the Swift runtime linked in (no Swift libraries in the image).
RUN make release \
 && install -D .build/release/onboard /out/bin/onboard
COPY migrations /out/migrations

FROM debian:bookworm-20261005-slim AS runtime
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libpq5 libssl3 libcrypt1 libcurl4 ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /app onboard
COPY --from=build /out /app
WORKDIR /app
USER onboard
ENV ONBOARD_HOST=0.0.0.0 ONBOARD_PORT=54321 ONBOARD_MIGRATIONS_DIR=/app/migrations
EXPOSE 54321
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD curl -fsS "http://127.0.0.1:${ONBOARD_PORT}/health" || exit 1
ENTRYPOINT ["/app/bin/onboard"]
CMD ["serve"]

# Development (compose.dev.yml, no .env): the runtime image with PostgreSQL's server binaries, so
# that `serve --dev` runs its private cluster. Debian's package would create and start a `main`
# cluster of its own; createcluster.conf turns that off before the server package is installed.
# The cluster, the development keys (keys.env) and Storage's files live in /data, a volume owned by
# the onboard user (initdb refuses to run as root).
FROM runtime AS dev
USER root
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-common \
 && sed -ri 's/^#?(create_main_cluster) .*$/\1 = false/' /etc/postgresql-common/createcluster.conf \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o onboard -m 0700 /data
USER onboard
ENV ONBOARD_DATA_DIR=/data/postgres
VOLUME /data
CMD ["serve", "--dev"]

# The operators' image, the default target (docker-compose.yml builds it).
FROM runtime
