# Build stage: compile TypeScript with the dev dependencies.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the prepare step (scripts/build-if-stale.mjs) builds a clone on npm install; here the
# sources are not copied yet, and the build runs explicitly below.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build-if-stale.mjs scripts/pglite-template.mjs ./scripts/
COPY src ./src
COPY console ./console
COPY api-reference ./api-reference
# The build migrates the embedded database's template (scripts/pglite-template.mjs). The template is
# for trying the service out and production refuses that database, so it is dropped.
COPY migrations ./migrations
RUN npm run build && rm dist/pglite-template.tar.gz dist/pglite-template.json

# Runtime stage: production dependencies and the compiled output only, on the current Node.js LTS
# (24; the project also supports 20.19+, and CI runs the tests on both), as the image's non-root user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: nothing to build here (dist/ comes from the build stage).
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
# The list of common passwords that new passwords are checked against (src/users/password-rules.ts).
COPY assets ./assets
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# npm start's command (package.json), run without npm: npm does not pass SIGTERM on, and shutdown
# must be graceful. The V8 flags are explained in docs/operations.md, "The node flags".
CMD ["node", "--max-old-space-size=512", "--max-semi-space-size=8", "--no-allocation-site-pretenuring", "dist/main.js"]
