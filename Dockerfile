# The toolschema command in a container image: built from this repository, then copied alone onto
# a distroless base (glibc and libgcc, no shell, no package manager) as a non-root user.
#
#   docker build --build-arg TOOLSCHEMA_BUILD_COMMIT=$(git rev-parse HEAD) -t toolschema:0.1.0 .
#   docker run --rm toolschema:0.1.0 lint /work/tools.json
#
# The builder runs what scripts/package.sh runs: the `packaged` profile (release, thin LTO,
# stripped). Its Debian (bookworm) matches the base's (debian12), so the binary finds the glibc it
# was linked against. scripts/test-deploy.sh checks these steps against the repository.

FROM rust:1.95-slim-bookworm AS builder
WORKDIR /src
# .dockerignore leaves .git/ out: `toolschema --version` names the commit given here.
ARG TOOLSCHEMA_BUILD_COMMIT
COPY . .
RUN cargo build --locked --profile packaged -p toolschema-cli

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=builder /src/target/packaged/toolschema /usr/local/bin/toolschema
# 65532, the base's nonroot user; Kubernetes' runAsNonRoot needs the number.
USER 65532:65532
# proxy --listen and --metrics in deploy/kubernetes/.
EXPOSE 8080 9464
ENTRYPOINT ["/usr/local/bin/toolschema"]
CMD ["--help"]
