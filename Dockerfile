# streamsub image: a static binary on a slim Debian base, run as non-root.
# Stages: build (Go toolchain), streamsub (runtime), wrk (load generator for
# the compose `load` profile).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/streamsub ./cmd/streamsub

FROM debian:bookworm-slim AS streamsub
RUN useradd --system --uid 10001 --no-create-home streamsub
COPY --from=build /out/streamsub /usr/local/bin/streamsub
COPY examples/streamsub.yaml /etc/streamsub/streamsub.yaml
USER 10001:10001
EXPOSE 50051 9090
ENTRYPOINT ["/usr/local/bin/streamsub"]
CMD ["serve", "-config", "/etc/streamsub/streamsub.yaml", "-listen", "0.0.0.0:50051", "-admin", "0.0.0.0:9090"]

FROM debian:bookworm-slim AS wrk
RUN apt-get update && apt-get install -y --no-install-recommends wrk && rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --no-create-home wrk
USER 10001:10001
ENTRYPOINT ["wrk"]
