# syntax=docker/dockerfile:1
# The service as `npm start` runs it (dist/ built by scripts/build.mjs), on Node 20, as a non-root user.
# Build: docker build -t support-chatbot .   Run with PostgreSQL, Redis and a worker: compose.yaml.

# --- production dependencies only (no TypeScript, vitest, browsers) ---------------------------------------
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-fund --no-audit

# --- build: src/ to plain JavaScript in dist/src, the widget bundles in dist/widget -------------------------
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-fund --no-audit
COPY . .
RUN npm run build

# --- runtime ------------------------------------------------------------------------------------------------
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# DATA_DIR holds the embedded database and the mail outbox when no PostgreSQL / SMTP is configured.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# On PostgreSQL the server runs WEB_CONCURRENCY HTTP processes (default: the cores Node sees, which may be the
# host's rather than the container's CPU limit: set it, as compose.yaml does); on the embedded database always one.
# Exec form, node as PID 1's direct child of nothing: SIGTERM reaches the server, which shuts down gracefully.
CMD ["node", "--max-old-space-size=320", "dist/src/server.js"]
