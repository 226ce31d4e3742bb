"""The agent service (not built yet): ADK runner over a RemoteSessionService
(services.sessions.remote_session_service), the coordinator and search pipeline, HITL
checkpoints, and the library index. `zocrates run` starts it once it exists."""
