# syntax=docker/dockerfile:1

# Build: all dependencies, TypeScript compiled into dist/ (with the SQL migrations copied beside it).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm install, not npm ci: the lock file lacks the optional @swc/core packages of other
# platforms (our registry does not serve them), which npm ci treats as out of sync.
RUN npm install --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN npm run build

# Runtime: production dependencies and dist/ only.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force
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
