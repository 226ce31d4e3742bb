"""Code every Zocrates service shares: settings, errors, gRPC frame, admin port, telemetry."""
