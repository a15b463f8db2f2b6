# The etcdperf image: one static binary (CGO_ENABLED=0) on distroless, which
# has CA certificates and a nonroot user but no shell and no package manager.
#
#   docker build -t ghcr.io/etcdperf/etcdperf:latest .
#   docker build --build-arg VERSION=v1.0.0 -t ghcr.io/etcdperf/etcdperf:v1.0.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 -t ... --push .
#
# `etcdperf k8s manifest` runs it as `etcdperf ...` (the binary is in PATH).
# The go build line below is the one e2e/docker_test.go runs.

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=devel
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -ldflags="-s -w -X github.com/etcdperf/etcdperf/internal/version.Version=$VERSION" -o /out/etcdperf ./cmd/etcdperf

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/etcdperf /usr/local/bin/etcdperf
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/etcdperf"]
