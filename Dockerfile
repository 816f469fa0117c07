# syntax=docker/dockerfile:1
# One image for every app; the compose service's `command` picks which one runs.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Dependencies first, in their own layer: a code change then reuses the installed node_modules.
COPY package.json package-lock.json ./
# npm ci first; the lock file lacks other platforms' optional binaries (it was made against a
# mirror without them), which npm ci reports as out of sync: npm install then installs the same
# locked versions.
RUN npm ci --no-audit --no-fund || npm install --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    DATA_DIR=/data
WORKDIR /app
# The code stays root-owned and so read-only to the app user; only DATA_DIR is writable. A named
# volume mounted on /data starts with this ownership.
RUN mkdir -p /data && chown node:node /data
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
CMD ["node", "dist/apps/api/src/main.js"]
