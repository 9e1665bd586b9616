# rsbridge container image: one static binary on distroless (no shell, no libc,
# no package manager), run as the unprivileged user 65532:65532, with all its
# state on the volume /data. cmd/rsbridge/image_test.go builds the binary with
# the flags below and starts it with this file's CMD and HEALTHCHECK, so CI
# notices when the image and the program drift apart (CI has no Docker engine).
#
# Build:
#   docker build -t rsbridge .
#
# Offline demo (the default command): a built-in synthetic OAI-PMH repository,
# harvested and published by the real server, at http://localhost:8080/
#   docker run --rm -p 8080:8080 rsbridge
# Its links name http://localhost:8080; published under another name or port,
# say so (the arguments replace the whole CMD):
#   docker run --rm -p 9000:8080 rsbridge demo -listen 0.0.0.0:8080 -data /data -base-url http://myhost:9000
#
# Production, with a configuration file:
#   docker run -d --name rsbridge --restart unless-stopped -p 8080:8080 \
#     -v "$PWD/rsbridge.yaml:/etc/rsbridge/rsbridge.yaml:ro" -v rsbridge-data:/data \
#     rsbridge serve -config /etc/rsbridge/rsbridge.yaml
# where rsbridge.yaml has
#   listen: 0.0.0.0:8080               # inside the container; -p publishes it
#   data_dir: /data                    # the volume
#   base_url: https://rs.example.org   # the public URL clients use, in every <loc>
# Check it first with: docker run --rm -v ... rsbridge check-config -config /etc/rsbridge/rsbridge.yaml
#
# Quick mode, no configuration file:
#   docker run -d -p 8080:8080 -v rsbridge-data:/data rsbridge serve \
#     -oai https://repo.example.ac.jp/oai -prefix jpcoar_2.0 \
#     -listen 0.0.0.0:8080 -data /data -base-url https://rs.example.org
#
# Running it unattended:
# - Data: a new named volume starts out owned by 65532 (the image's /data is).
#   A bind mount must be writable by that user: chown 65532:65532 DIR.
#   Nothing outside /data is written, so --read-only works.
# - Stop: docker stop sends SIGTERM; rsbridge finishes running requests, stops a
#   running harvest after its last committed page, closes the store and exits 0.
#   That can take up to about 30 s: give it time (docker stop -t 60, compose
#   stop_grace_period: 60s) or Docker kills it after 10 s (nothing is lost; the
#   next start resumes the harvest at its first uncommitted page).
# - Reload: docker kill -s HUP rsbridge re-reads the log level; it never stops
#   rsbridge (in demo and quick mode there is nothing to re-read).
# - Health: HEALTHCHECK runs "rsbridge healthcheck" (the image has no curl);
#   docker ps shows (healthy) while /healthz answers 200. It probes port 8080:
#   with another listen port, override it (docker run --health-cmd is shell
#   form and there is no shell here, so set it in compose or a derived image).
# - Other commands run in the same container while it serves, e.g.
#   docker exec rsbridge rsbridge harvest -config /etc/rsbridge/rsbridge.yaml
#   (they hand the run to serve through its admin API: set admin.token_file).
# - Memory: a Go soft limit of 512 MiB unless GOMEMLIMIT is set (-e GOMEMLIMIT=1GiB);
#   store.mapped_limit bounds the mapped store files a container's limit also counts.
#
# Version: "rsbridge version" in the image says "revision unknown". Go stamps
# the VCS revision into the binary only when it builds inside a checkout, and
# .dockerignore keeps .git out of the build context (version information comes
# from debug.ReadBuildInfo, so there is no -ldflags -X to pass it in). The
# image records it as a label instead when given:
#   docker build --build-arg REVISION="$(git rev-parse HEAD)" -t rsbridge .
#   docker inspect -f '{{ index .Config.Labels "org.opencontainers.image.revision" }}' rsbridge

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static (no cgo: the final image has no libc), without file system paths or
# symbol tables.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/rsbridge ./cmd/rsbridge
# The data directory, to be owned by the runtime user in the final image:
# Docker copies it into a new named volume, owner included.
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
ARG REVISION=unknown
LABEL org.opencontainers.image.title="rsbridge" \
      org.opencontainers.image.description="OAI-PMH to ResourceSync gateway" \
      org.opencontainers.image.source="https://github.com/rsbridge/rsbridge" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /out/rsbridge /usr/local/bin/rsbridge
COPY --from=build --chown=65532:65532 /out/data /data
# Numeric, so Kubernetes' runAsNonRoot can verify it (the base image says "nonroot").
USER 65532:65532
VOLUME /data
EXPOSE 8080
STOPSIGNAL SIGTERM
# Exec form throughout: there is no /bin/sh to run a shell form.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["/usr/local/bin/rsbridge", "healthcheck", "-url", "http://127.0.0.1:8080/healthz", "-timeout", "5s"]
ENTRYPOINT ["/usr/local/bin/rsbridge"]
# 0.0.0.0: reachable through -p from outside the container.
CMD ["demo", "-listen", "0.0.0.0:8080", "-data", "/data"]
