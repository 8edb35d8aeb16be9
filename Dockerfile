# flussonic-exporter: docker build -t flussonic-exporter .
# docker run -p 9228:9228 -v ./config.yaml:/etc/flussonic-exporter/config.yaml:ro flussonic-exporter
# The image leaves out the simulator (an optional dependency): --demo and simulate say so and exit 1.
# With it, as deploy/docker-compose.yml builds it:
# docker build --build-arg SIMULATOR=included -t flussonic-exporter:demo .
# docker run -p 9228:9228 flussonic-exporter:demo --demo --web.listen-address :9228   (the demo alone listens on 127.0.0.1)
ARG SIMULATOR=omitted

# Production dependencies only, without install scripts and without the simulator.
FROM node:22-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts && npm cache clean --force

# Build with the dev dependencies (`npm run build`: TypeScript, then each entry bundled with the
# packages it loads); nothing of this stage but dist/ (and, for the demo image, the simulator
# package) is kept. The exporter compiles against the simulator's declarations.
FROM node:22-bookworm-slim AS build
WORKDIR /app
# Optional dependencies included: the bundler's native binding is one (the simulator is linked
# from packages/simulator, whose package.json is all npm needs here).
COPY package.json package-lock.json ./
COPY packages/simulator/package.json ./packages/simulator/
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/bundle.mjs scripts/write-build-info.mjs ./scripts/
COPY packages/simulator ./packages/simulator
COPY src ./src
RUN npm run build

# The simulator as installed under node_modules, or nothing: chosen by --build-arg SIMULATOR.
FROM node:22-bookworm-slim AS simulator-omitted
RUN mkdir /simulator
FROM build AS simulator-included
RUN mkdir -p /simulator/node_modules/@flussonic-exporter/simulator \
  && cp -r packages/simulator/package.json packages/simulator/dist /simulator/node_modules/@flussonic-exporter/simulator/
FROM simulator-${SIMULATOR} AS simulator

FROM node:22-bookworm-slim
# glibc's malloc: two arenas at most, and every block of 128 KiB or more from mmap, given back to the
# system when freed (a fixed threshold also stops glibc raising it after each large free): 5-10 MB
# less RSS for a 10,000-stream server, about 16 MB less for 40 servers, at the same total CPU
# (docs/operating.md, "Sizing the exporter"). The systemd unit sets the same.
ENV NODE_ENV=production \
    FLUSSONIC_EXPORTER_CONFIG=/etc/flussonic-exporter/config.yaml \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=simulator /simulator/ ./
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config.example.yaml /etc/flussonic-exporter/config.example.yaml
# state_file of catena entries goes here (mount a volume to keep it across containers).
RUN mkdir -p /var/lib/flussonic-exporter && chown node:node /var/lib/flussonic-exporter
# The node image's unprivileged user (uid 1000).
USER node
EXPOSE 9228
# Node's own fetch: no curl in the image. Set HEALTHCHECK_URL when listen_address is not :9228
# (https://localhost:9228/-/healthy with TLS, and NODE_EXTRA_CA_CERTS for a private CA). A 401
# (basic auth in --web.config.file) still means the process serves.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL || 'http://127.0.0.1:9228/-/healthy', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok || r.status === 401 ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/main.js"]
# The config comes from FLUSSONIC_EXPORTER_CONFIG (/etc/flussonic-exporter/config.yaml).
CMD []
