# syntax=docker/dockerfile:1
# One image for scale mode, two roles: the control plane (default command) and the redirector
# (`bun run redirector/main.ts`). See docker-compose.yml.

# Base images are pinned to exact versions: a rebuild gets the same runtime until someone changes them here.
# Dependencies come from package-lock.json, the lockfile this project keeps, so npm installs them.
# --omit=optional drops the npm copy of the Bun binary (the runtime stage has Bun); no package needs install scripts.
FROM node:20.20.2-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

# The Bun package-lock.json pins (node_modules/bun), so the image runs what `npm start` and the tests run;
# test/e2e/ops-config.test.ts fails when the two differ.
FROM oven/bun:1.4.5 AS runtime
WORKDIR /app
# MIMALLOC_PURGE_DELAY=-1: Bun's allocator keeps freed pages instead of returning them to the OS every 100 ms
# (the same default as package.json's start scripts; see the README's Configuration).
ENV PORT=3000 DATA_DIR=/app/data MIMALLOC_PURGE_DELAY=-1
COPY --from=deps /app/node_modules ./node_modules
COPY package.json bunfig.toml tsconfig.json ./
COPY shared ./shared
COPY control ./control
COPY redirector ./redirector
RUN mkdir -p /app/data && chown bun:bun /app/data
USER bun
EXPOSE 3000
# Bun itself probes /healthz: the image has no curl or wget.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["bun", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: bun is PID 1 and gets SIGTERM directly, so it flushes queued clicks before exiting.
CMD ["bun", "run", "control/main.ts", "--control"]
