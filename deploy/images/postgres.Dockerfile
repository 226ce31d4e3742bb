# PostgreSQL 15 from Debian's packages: a stand-in for postgres:16-alpine where no registry can
# be reached. Honours POSTGRES_USER, POSTGRES_DB and POSTGRES_PASSWORD (required) on first start,
# keeps its cluster in /var/lib/postgresql/data (mount a volume there), `pg_isready` works.
#   podman build -f deploy/images/postgres.Dockerfile -t zocrates-postgres:bookworm deploy/images
ARG BASE_IMAGE=zocrates-base:bookworm
FROM ${BASE_IMAGE}

# No default cluster from the package's postinst: the entrypoint creates one in $PGDATA.
RUN mkdir -p /etc/postgresql-common/createcluster.d \
    && echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/zocrates.conf \
    && apt-get update \
    && apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/*

ENV PGDATA=/var/lib/postgresql/data \
    PATH=/usr/lib/postgresql/15/bin:$PATH
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
VOLUME /var/lib/postgresql/data
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
CMD ["postgres"]
