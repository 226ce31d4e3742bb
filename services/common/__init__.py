"""Code every Zocrates service shares: settings, errors, gRPC frame, admin port, telemetry,
the model providers (``models``) and, in ``adk``, what the services share about ADK sessions."""
