# Geotify in a container: built with the Swift toolchain, run on a slim Debian with
# only the C libraries it links (libmosquitto, libsodium, SQLite, libcurl, OpenSSL).
FROM swift:6.3-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmosquitto-dev libsodium-dev libsqlite3-dev libcurl4-openssl-dev libssl-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources Sources
COPY Tests Tests
RUN swift build -c release --product geotify --static-swift-stdlib

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmosquitto1 libsodium23 libsqlite3-0 libcurl4 libssl3 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home-dir /var/lib/geotify --create-home geotify
COPY --from=build /src/.build/release/geotify /usr/local/bin/geotify
COPY config /etc/geotify
RUN chown -R geotify /etc/geotify
USER geotify
VOLUME ["/var/lib/geotify"]
ENTRYPOINT ["geotify"]
CMD ["run", "--config", "/etc/geotify/geotify.json", "--state-dir", "/var/lib/geotify"]
