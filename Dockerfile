# syntax=docker/dockerfile:1
# One image for every app of the platform; the container's command chooses the app (docs/deploy.md):
#   node dist/apps/ingress/src/main.js            node dist/apps/task-service/src/main.js
#   node dist/apps/relay/src/main.js              node dist/apps/push-dispatcher/src/main.js
#   node dist/apps/admin-api/src/main.js          node dist/apps/task-service/src/cli.js migrate
#   node dist/apps/agents/src/main.js echo        (an example agent worker)
# Without a command it runs everything in one process, as `npm start` does.
ARG NODE_IMAGE=node:20.19-bookworm-slim

# Production dependencies only. Install scripts are skipped: the native parts the apps load come as
# prebuilt optional packages.
FROM ${NODE_IMAGE} AS runtime-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# The TypeScript build (`npm run build`: tsc, then tsc-alias for the @lib/* paths).
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY apps apps
COPY libs libs
COPY scripts scripts
RUN npm run build

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
# package.json and migrations/ mark the root the migration runner looks for.
COPY package.json ./
COPY migrations migrations
COPY --from=runtime-deps /app/node_modules node_modules
COPY --from=build /src/dist dist
# The image's `node` user; the pods run as 1000:1000 with a read-only root file system.
USER 1000:1000
EXPOSE 8080 50051 50052 50053 8070 9464
CMD ["node", "dist/apps/standalone/src/main.js"]
