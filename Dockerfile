# The image `plimsoll k8s` renders by default: plimsoll on its PATH, nothing else.
#
#   docker build -t plimsoll:0.1.0 .          # from the repository's root
#   docker tag plimsoll:0.1.0 REGISTRY/plimsoll:0.1.0 && docker push REGISTRY/plimsoll:0.1.0
#   plimsoll k8s --image REGISTRY/plimsoll:0.1.0 ...
#
# Stage 1 builds exactly what `cargo build --release --locked -p plimsoll` builds on a
# workstation (the same lockfile, the same profile); stage 2 is Debian slim with the
# binary, its CA certificates and a user of its own. The binary links only glibc, libm
# and libgcc_s, which the slim image has.

FROM rust:1.95-slim-bookworm AS build
# cmake and a C compiler: libopus (the WebRTC caller's Opus, bundled, linked statically by
# .cargo/config.toml) and aws-lc (str0m's DTLS and SRTP) are built from source.
RUN apt-get update \
 && apt-get install -y --no-install-recommends cmake build-essential \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p plimsoll \
 && install -D -m 0755 target/release/plimsoll /out/plimsoll \
 && strip /out/plimsoll

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 10001 --create-home --shell /usr/sbin/nologin plimsoll
COPY --from=build /out/plimsoll /usr/local/bin/plimsoll
USER 10001:10001
WORKDIR /home/plimsoll
ENTRYPOINT ["plimsoll"]
CMD ["--help"]
