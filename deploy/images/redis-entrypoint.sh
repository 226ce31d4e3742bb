#!/bin/sh
# Like the official image: `redis-server ARGS` listens on every interface without protected
# mode (the container network, not Redis, decides who may connect); later ARGS still win.
set -eu
if [ "${1:-}" = "redis-server" ]; then
    shift
    set -- redis-server --bind "* -::*" --protected-mode no "$@"
fi
exec "$@"
