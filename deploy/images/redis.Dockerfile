# Redis from Debian's packages: a stand-in for redis:7-alpine where no registry can be reached.
#   podman build -f deploy/images/redis.Dockerfile -t zocrates-redis:bookworm deploy/images
# BASE_IMAGE: any Debian bookworm image (scripts/podman_images.sh builds zocrates-base:bookworm).
ARG BASE_IMAGE=zocrates-base:bookworm
FROM ${BASE_IMAGE}

RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data && chown redis:redis /data

COPY redis-entrypoint.sh /usr/local/bin/redis-entrypoint.sh
USER redis
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]
CMD ["redis-server"]
