# Geotify in a container: built with the Swift toolchain, run on a slim Debian with
# only the C libraries the binary uses (libmosquitto, libsodium, SQLite and OpenSSL,
# linked; libcurl and libmicrohttpd, opened when first used), Leaflet for the map
# page and the CA certificates for mqtts:// and https://. scripts/check-image proves
# this runtime stage without a Docker engine: it builds the binary with the same
# script, makes a root filesystem of the same base with the same packages
# (RUNTIME_PACKAGES, read from this file), runs the same set-up (docker/runtime-setup)
# and starts the bridge in it.
FROM swift:6.3-bookworm AS build
WORKDIR /src
# The build dependencies, from the one list scripts/install and CI use too.
COPY scripts/install-dependencies scripts/build-release scripts/
RUN scripts/install-dependencies build && rm -rf /var/lib/apt/lists/*
COPY Package.swift ./
COPY Sources Sources
# The test targets are declared in Package.swift, so their directories must exist.
COPY Tests Tests
RUN scripts/build-release

FROM debian:bookworm-slim
ARG RUNTIME_PACKAGES="libmosquitto1 libsodium23 libsqlite3-0 libcurl4 libssl3 libmicrohttpd12 libjs-leaflet ca-certificates"
RUN apt-get update \
    && apt-get install -y --no-install-recommends ${RUNTIME_PACKAGES} \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/.build/dist/geotify /usr/local/bin/geotify
COPY docker/geotify.json /etc/geotify/geotify.json
COPY config/fences.json /usr/share/geotify/fences.json
COPY config/fences.d /usr/share/geotify/fences.d
COPY docker/runtime-setup /usr/local/sbin/geotify-runtime-setup
RUN /usr/local/sbin/geotify-runtime-setup
# Fences and state live in one volume owned by the geotify user; an empty named volume
# is filled from the image, so it starts with the example fences and the right owner.
# docker-compose.cluster.yml mounts its shared fence directory on /var/lib/geotify-fences,
# which the image fills the same way from config/fences.d.
VOLUME ["/var/lib/geotify"]
USER geotify
# Every geotify command in the container reads these settings unless given --config.
ENV GEOTIFY_CONFIG=/etc/geotify/geotify.json
# Healthy when the broker holds the bridge's status "online" (and its statistics).
HEALTHCHECK --interval=30s --timeout=15s --start-period=20s --retries=3 \
    CMD ["geotify", "status", "--online", "--timeout", "10"]
ENTRYPOINT ["geotify"]
CMD ["run"]
