# Build: docker build -t rsbridge .
# Run:   docker run -p 8080:8080 -v $PWD/rsbridge.yaml:/etc/rsbridge.yaml -v rsbridge-data:/data \
#          rsbridge serve -config /etc/rsbridge.yaml
# with listen: 0.0.0.0:8080, data_dir: /data and base_url: the public URL in rsbridge.yaml.
# Offline try-out: docker run -p 8080:8080 rsbridge demo -listen 0.0.0.0:8080 -data /data
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/rsbridge ./cmd/rsbridge

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/rsbridge /usr/local/bin/rsbridge
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/rsbridge"]
CMD ["version"]
