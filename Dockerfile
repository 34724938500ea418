# llmgw image: one image for `serve` (API, the default) and `worker`; docker-compose.yml runs both.
# The app runs its TypeScript sources through tsx, which is a production dependency, so the image
# carries src/ plus production node_modules and no build step.

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci applies the patches of dependencies (postinstall: patch-package), so they must be there first.
COPY patches ./patches
# Production dependencies only (tsx is one). The Temporal core bridge ships its native library for
# linux (glibc) inside the npm package, hence a Debian (not Alpine) base.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:20-bookworm-slim
# llmgw binds to 127.0.0.1 by default; in a container it must listen on all interfaces.
ENV NODE_ENV=production \
    LLMGW_HOST=0.0.0.0 \
    PORT=8080 \
    LLMGW_HOME=/var/lib/llmgw
WORKDIR /app
# Code stays owned by root (read-only for the app); only LLMGW_HOME is writable by the app user.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY src ./src
RUN mkdir -p "$LLMGW_HOME" && chown node:node "$LLMGW_HOME"
# The node image's unprivileged user (uid 1000).
USER node
EXPOSE 8080 9464
ENTRYPOINT ["node", "--import", "tsx", "src/cli/main.ts"]
CMD ["serve"]
