"""ADK's ``BaseSessionService`` over the sessions service's gRPC API.

Processes other than the sessions service (the agent, the compactor) hand this to ADK's
``Runner`` instead of opening sessions.db. Sessions and events cross the wire as ADK JSON;
the storage revision marker that ADK keeps privately travels beside them so that ADK's
stale-session check still works across processes (``StaleSessionError`` is raised here when
the service answers ABORTED/stale_session).
"""

from __future__ import annotations

import json
from typing import Any

from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events.event import Event
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from zocrates.common.v1.session_ref_pb2 import SessionRef
from zocrates.sessions.v1 import sessions_pb2 as pb
from zocrates.sessions.v1 import sessions_pb2_grpc as pb_grpc

from services.common.adk.internals import set_storage_update_marker, storage_update_marker
from services.common.errors import AlreadyExists, NotFound, StaleSession
from services.common.grpc_client import ServiceClient


def _session_from(reply: pb.SessionReply) -> Session:
    session = Session.model_validate_json(reply.session_json)
    set_storage_update_marker(session, reply.storage_update_marker or None)
    return session


class RemoteSessionService(BaseSessionService):
    def __init__(self, address: str, *, timeout: float = 10.0) -> None:
        self._client = ServiceClient(address, timeout=timeout, peer="sessions")
        self._stub = pb_grpc.SessionServiceStub(self._client.channel)

    async def close(self) -> None:
        await self._client.close()

    async def healthy(self) -> bool:
        return await self._client.healthy()

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        try:
            reply = await self._client.call(
                self._stub.CreateSession,
                pb.CreateSessionRequest(
                    app_name=app_name,
                    user_id=user_id,
                    session_id=session_id or "",
                    state_json=json.dumps(state or {}),
                ),
            )
        except AlreadyExists as exc:
            raise AlreadyExistsError(exc.message) from None
        return _session_from(reply)

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        try:
            reply = await self._client.call(
                self._stub.GetSession,
                pb.GetSessionRequest(
                    ref=SessionRef(app_name=app_name, user_id=user_id, session_id=session_id),
                    config_json=config.model_dump_json() if config else "",
                ),
            )
        except NotFound:
            return None
        return _session_from(reply)

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        reply = await self._client.call(
            self._stub.ListSessions,
            pb.ListSessionsRequest(app_name=app_name, user_id=user_id or ""),
        )
        return ListSessionsResponse(
            sessions=[Session.model_validate_json(s) for s in reply.session_json]
        )

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        try:
            await self._client.call(
                self._stub.DeleteSession,
                pb.DeleteSessionRequest(
                    ref=SessionRef(app_name=app_name, user_id=user_id, session_id=session_id)
                ),
            )
        except NotFound:
            return  # ADK's services treat deleting a missing session as done

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        try:
            reply = await self._client.call(
                self._stub.AppendEvent,
                pb.AppendEventRequest(
                    ref=SessionRef(
                        app_name=session.app_name, user_id=session.user_id, session_id=session.id
                    ),
                    last_update_time=session.last_update_time,
                    storage_update_marker=storage_update_marker(session) or "",
                    last_event_id=session.events[-1].id if session.events else "",
                    event_json=event.model_dump_json(),
                ),
            )
        except StaleSession as exc:
            raise StaleSessionError(exc.message) from None
        session.last_update_time = reply.last_update_time
        set_storage_update_marker(session, reply.storage_update_marker or None)
        return self._commit_event_to_session(session, event)
