# syntax=docker/dockerfile:1
# Build stage: compile TypeScript with the dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
# `npm install` is the fallback when a registry mirror lacks another platform's optional packages.
RUN npm ci --no-audit --no-fund || npm install --no-audit --no-fund
COPY src ./src
COPY scripts/copy-lua.mjs ./scripts/
RUN npm run build

# Runtime stage: production dependencies and the compiled code only, as the unprivileged `node` user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
RUN (npm ci --omit=dev --no-audit --no-fund || npm install --omit=dev --no-audit --no-fund) && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM reaches node directly (exec form), which drains in-flight deliveries before it exits.
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["serve"]
