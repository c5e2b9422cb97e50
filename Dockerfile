# syntax=docker/dockerfile:1
# The base: the official Node image by default. The test suite builds with a stand-in made from the same
# parts (a Debian bookworm root filesystem and Node's official linux-x64 binary), see dev/image/.
ARG NODE_IMAGE=node:20-bookworm-slim

# Build: compile the TypeScript with the full (dev) dependency set.
FROM ${NODE_IMAGE} AS build
# A CA bundle for a TLS-inspecting proxy between the build and the npm registry: mount it and pass its
# path (`--build-arg NODE_EXTRA_CA_CERTS=...`); an ARG is seen by RUN but never kept in the image.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are copied; the build runs below.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Source maps and the incremental build's state are never read at run time (no --enable-source-maps), as below.
# The product only (tsconfig.build.json: src/); the development tree (dev/) never enters the image.
RUN npm run build:product \
 && find dist -name '*.map' -delete \
 && rm -f dist/.tsbuildinfo

# Production dependencies. --ignore-scripts skips every install script; argon2 is then compiled
# from source against this very base image: its prebuilt linux-x64 binary is not loadable
# everywhere (it segfaults on load on some hosts, see test/integration/deploy/production-install.test.ts),
# and the build tools stay out of the runtime image.
FROM ${NODE_IMAGE} AS deps
ARG NODE_EXTRA_CA_CERTS
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# nodedir: the image's own headers, so node-gyp downloads nothing. --omit=optional: @kubernetes/client-node
# serves only kubeconfig auth-provider users, which a pod never has (it is imported on demand).
# Type declarations and source maps are never read at run time (no --enable-source-maps): about 20 MB of the
# dependencies, most of it OpenTelemetry's (its semantic conventions alone ship 10 MB of them).
RUN npm ci --omit=dev --omit=optional --ignore-scripts \
 && npm_config_build_from_source=true npm_config_nodedir=/usr/local npm rebuild argon2 \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' \) -delete \
 && node -e "import('argon2').then((a) => a.hash('probe')).then(() => console.log('argon2 loads'))"

# Runtime: no compiler, no npm cache, non-root, nothing written to the root filesystem.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOME=/tmp
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY bin/endpoint-operator.js ./bin/
# The distroless "nonroot" uid, numeric so that the kubelet can check runAsNonRoot.
USER 65532:65532
EXPOSE 9443 8080 8081 8443
ENTRYPOINT ["node", "bin/endpoint-operator.js"]
CMD ["run"]
