#!/usr/bin/env bash
# Build every image the compose stack needs with Podman, from Debian packages and PyPI only (no
# container registry): see --help.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE_IMAGE=${BASE_IMAGE:-localhost/zocrates-base:bookworm}
SUITE=${DEBIAN_SUITE:-bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CA_BUNDLE=${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}
ZOCRATES_TAG=${ZOCRATES_IMAGE:-localhost/zocrates:0.1.0}
ALL=(base zocrates redis postgres phoenix)

usage() {
    cat <<EOF
Usage: scripts/podman_images.sh [--print-env] [IMAGE...]

Builds, with Podman and without any container registry, the images deploy/compose.yaml runs:

  base      $BASE_IMAGE: Debian $SUITE minbase by debootstrap from $MIRROR,
            imported with 'podman import' (skipped when the image exists; needs root)
  zocrates  $ZOCRATES_TAG from deploy/Dockerfile (BASE_IMAGE=the base; Debian's python3)
  redis     localhost/zocrates-redis:$SUITE from deploy/images/redis.Dockerfile
  postgres  localhost/zocrates-postgres:$SUITE from deploy/images/postgres.Dockerfile
  phoenix   localhost/zocrates-phoenix:$SUITE from deploy/images/phoenix.Dockerfile

With no IMAGE, all of them, in that order. Every step is idempotent: the base is built only
when missing, the others are 'podman build' runs whose unchanged layers come from the cache.
Prints each command before running it. At the end (or with --print-env alone) prints the
variables that make compose use these images:

  eval "\$(scripts/podman_images.sh --print-env)"
  podman-compose --podman-args="--runtime \$PODMAN_RUNTIME" -p zocrates -f deploy/compose.yaml up -d

Environment:
  PODMAN_RUNTIME  OCI runtime for build containers (default: runc when installed, as rootful
                  Podman with crun fails on hosts whose cgroups are in hybrid mode)
  PIP_CERT        CA bundle handed to pip inside builds as the build secret 'pip_ca'
                  (default /etc/ssl/certs/ca-certificates.crt when it exists; for a
                  TLS-intercepting proxy)
  BASE_IMAGE, DEBIAN_SUITE, DEBIAN_MIRROR, ZOCRATES_IMAGE  override the names above
EOF
}

if command -v runc >/dev/null 2>&1; then
    RUNTIME=${PODMAN_RUNTIME:-runc}
else
    RUNTIME=${PODMAN_RUNTIME:-}
fi

print_env() {
    echo "export PODMAN_RUNTIME=${RUNTIME:-crun}"
    echo "export ZOCRATES_IMAGE=$ZOCRATES_TAG"
    echo "export REDIS_IMAGE=localhost/zocrates-redis:$SUITE"
    echo "export POSTGRES_IMAGE=localhost/zocrates-postgres:$SUITE"
    echo "export PHOENIX_IMAGE=localhost/zocrates-phoenix:$SUITE"
}

say() { echo "+ $*" >&2; }
run() {
    say "$@"
    "$@"
}

# The same limits compose gives every container: runc cannot raise them past the host's.
BUILD_ARGS=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096
    --build-arg "BASE_IMAGE=$BASE_IMAGE")
[[ -n "$RUNTIME" ]] && BUILD_ARGS=(--runtime "$RUNTIME" "${BUILD_ARGS[@]}")
[[ -s "$CA_BUNDLE" ]] && BUILD_ARGS+=(--secret "id=pip_ca,src=$CA_BUNDLE")

build_base() {
    if podman image exists "$BASE_IMAGE"; then
        say "base: $BASE_IMAGE exists, not rebuilt (podman rmi $BASE_IMAGE to rebuild)"
        return
    fi
    command -v debootstrap >/dev/null || { echo "debootstrap missing: apt-get install debootstrap" >&2; exit 1; }
    [[ $(id -u) == 0 ]] || { echo "building the base needs root (debootstrap)" >&2; exit 1; }
    local dir
    dir=$(mktemp -d /var/tmp/zocrates-base.XXXXXX)
    run debootstrap --variant=minbase "$SUITE" "$dir/root" "$MIRROR" || { rm -rf "$dir"; exit 1; }
    # Drop the downloaded packages and lists, then import the tree as a one-layer image.
    rm -rf "$dir/root/var/cache/apt/archives/"*.deb "$dir/root/var/lib/apt/lists/"*
    say "tar -C $dir/root -c . | podman import - $BASE_IMAGE"
    tar -C "$dir/root" -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE_IMAGE"
    rm -rf "$dir"
}

build() { # name dockerfile tag context
    run podman build "${BUILD_ARGS[@]}" -f "$2" -t "$3" "${@:5}" "$4"
}

main() {
    local images=()
    for arg in "$@"; do
        case $arg in
            -h | --help) usage; exit 0 ;;
            --print-env) [[ $# == 1 ]] && { print_env; exit 0; } ;;
            base | zocrates | redis | postgres | phoenix) images+=("$arg") ;;
            *) echo "unknown argument: $arg (see --help)" >&2; exit 2 ;;
        esac
    done
    [[ ${#images[@]} -gt 0 ]] || images=("${ALL[@]}")
    command -v podman >/dev/null || { echo "podman missing: apt-get install podman" >&2; exit 1; }
    cd "$ROOT"
    for image in "${images[@]}"; do
        local start=$SECONDS
        case $image in
            base) build_base ;;
            zocrates)
                build zocrates deploy/Dockerfile "$ZOCRATES_TAG" . \
                    --ignorefile deploy/Dockerfile.dockerignore ;;
            *)
                build "$image" "deploy/images/$image.Dockerfile" \
                    "localhost/zocrates-$image:$SUITE" deploy/images ;;
        esac
        say "$image: done in $((SECONDS - start)) s"
    done
    print_env
}

main "$@"
