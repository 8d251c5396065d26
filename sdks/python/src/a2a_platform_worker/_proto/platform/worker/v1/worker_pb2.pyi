from google.protobuf import timestamp_pb2 as _timestamp_pb2
from a2a_platform_worker._proto.lf.a2a.v1 import a2a_pb2 as _a2a_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ArtifactUpdate(_message.Message):
    __slots__ = ["append", "artifact", "last_chunk"]
    APPEND_FIELD_NUMBER: _ClassVar[int]
    ARTIFACT_FIELD_NUMBER: _ClassVar[int]
    LAST_CHUNK_FIELD_NUMBER: _ClassVar[int]
    append: bool
    artifact: _a2a_pb2.Artifact
    last_chunk: bool
    def __init__(self, artifact: _Optional[_Union[_a2a_pb2.Artifact, _Mapping]] = ..., append: bool = ..., last_chunk: bool = ...) -> None: ...

class Assignment(_message.Message):
    __slots__ = ["attempt", "context_id", "lease_epoch", "lease_expires_at", "may_reply", "message", "task", "task_id", "traceparent"]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    LEASE_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    MAY_REPLY_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TRACEPARENT_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    context_id: str
    lease_epoch: int
    lease_expires_at: _timestamp_pb2.Timestamp
    may_reply: bool
    message: _a2a_pb2.Message
    task: _a2a_pb2.Task
    task_id: str
    traceparent: str
    def __init__(self, task_id: _Optional[str] = ..., context_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ..., lease_expires_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., task: _Optional[_Union[_a2a_pb2.Task, _Mapping]] = ..., message: _Optional[_Union[_a2a_pb2.Message, _Mapping]] = ..., attempt: _Optional[int] = ..., may_reply: bool = ..., traceparent: _Optional[str] = ...) -> None: ...

class Assignments(_message.Message):
    __slots__ = ["assignments"]
    ASSIGNMENTS_FIELD_NUMBER: _ClassVar[int]
    assignments: _containers.RepeatedCompositeFieldContainer[Assignment]
    def __init__(self, assignments: _Optional[_Iterable[_Union[Assignment, _Mapping]]] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ["lease_epoch", "task_id"]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    lease_epoch: int
    task_id: str
    def __init__(self, task_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ...) -> None: ...

class ExecutionUpdate(_message.Message):
    __slots__ = ["artifact", "message", "reply", "status"]
    ARTIFACT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    artifact: ArtifactUpdate
    message: _a2a_pb2.Message
    reply: _a2a_pb2.Message
    status: _a2a_pb2.TaskStatus
    def __init__(self, status: _Optional[_Union[_a2a_pb2.TaskStatus, _Mapping]] = ..., message: _Optional[_Union[_a2a_pb2.Message, _Mapping]] = ..., artifact: _Optional[_Union[ArtifactUpdate, _Mapping]] = ..., reply: _Optional[_Union[_a2a_pb2.Message, _Mapping]] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ["leases"]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    leases: _containers.RepeatedCompositeFieldContainer[LeaseRef]
    def __init__(self, leases: _Optional[_Iterable[_Union[LeaseRef, _Mapping]]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ["identity", "leases", "max_concurrent_tasks", "takes_assignment_batches"]
    IDENTITY_FIELD_NUMBER: _ClassVar[int]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_TASKS_FIELD_NUMBER: _ClassVar[int]
    TAKES_ASSIGNMENT_BATCHES_FIELD_NUMBER: _ClassVar[int]
    identity: str
    leases: _containers.RepeatedCompositeFieldContainer[LeaseRef]
    max_concurrent_tasks: int
    takes_assignment_batches: bool
    def __init__(self, identity: _Optional[str] = ..., max_concurrent_tasks: _Optional[int] = ..., leases: _Optional[_Iterable[_Union[LeaseRef, _Mapping]]] = ..., takes_assignment_batches: bool = ...) -> None: ...

class LeaseRef(_message.Message):
    __slots__ = ["lease_epoch", "task_id"]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    lease_epoch: int
    task_id: str
    def __init__(self, task_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ...) -> None: ...

class LeaseRevoked(_message.Message):
    __slots__ = ["lease_epoch", "reason", "task_id"]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    lease_epoch: int
    reason: str
    task_id: str
    def __init__(self, task_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class PlatformMessage(_message.Message):
    __slots__ = ["assignment", "assignments", "cancel", "lease_revoked", "updates_applied", "welcome"]
    ASSIGNMENTS_FIELD_NUMBER: _ClassVar[int]
    ASSIGNMENT_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    LEASE_REVOKED_FIELD_NUMBER: _ClassVar[int]
    UPDATES_APPLIED_FIELD_NUMBER: _ClassVar[int]
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    assignment: Assignment
    assignments: Assignments
    cancel: CancelRequest
    lease_revoked: LeaseRevoked
    updates_applied: SessionUpdatesApplied
    welcome: Welcome
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., assignment: _Optional[_Union[Assignment, _Mapping]] = ..., cancel: _Optional[_Union[CancelRequest, _Mapping]] = ..., lease_revoked: _Optional[_Union[LeaseRevoked, _Mapping]] = ..., updates_applied: _Optional[_Union[SessionUpdatesApplied, _Mapping]] = ..., assignments: _Optional[_Union[Assignments, _Mapping]] = ...) -> None: ...

class PublishOutcome(_message.Message):
    __slots__ = ["code", "message", "reason", "version"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    reason: str
    version: int
    def __init__(self, code: _Optional[int] = ..., version: _Optional[int] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class PublishUpdateRequest(_message.Message):
    __slots__ = ["artifact", "lease_epoch", "message", "reply", "status", "task_id", "traceparent", "update_id", "updates"]
    ARTIFACT_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TRACEPARENT_FIELD_NUMBER: _ClassVar[int]
    UPDATES_FIELD_NUMBER: _ClassVar[int]
    UPDATE_ID_FIELD_NUMBER: _ClassVar[int]
    artifact: ArtifactUpdate
    lease_epoch: int
    message: _a2a_pb2.Message
    reply: _a2a_pb2.Message
    status: _a2a_pb2.TaskStatus
    task_id: str
    traceparent: str
    update_id: str
    updates: _containers.RepeatedCompositeFieldContainer[ExecutionUpdate]
    def __init__(self, task_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ..., status: _Optional[_Union[_a2a_pb2.TaskStatus, _Mapping]] = ..., message: _Optional[_Union[_a2a_pb2.Message, _Mapping]] = ..., artifact: _Optional[_Union[ArtifactUpdate, _Mapping]] = ..., reply: _Optional[_Union[_a2a_pb2.Message, _Mapping]] = ..., update_id: _Optional[str] = ..., updates: _Optional[_Iterable[_Union[ExecutionUpdate, _Mapping]]] = ..., traceparent: _Optional[str] = ...) -> None: ...

class PublishUpdateResponse(_message.Message):
    __slots__ = ["version"]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: int
    def __init__(self, version: _Optional[int] = ...) -> None: ...

class PublishUpdatesRequest(_message.Message):
    __slots__ = ["requests"]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[PublishUpdateRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[PublishUpdateRequest, _Mapping]]] = ...) -> None: ...

class PublishUpdatesResponse(_message.Message):
    __slots__ = ["outcomes"]
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[PublishOutcome]
    def __init__(self, outcomes: _Optional[_Iterable[_Union[PublishOutcome, _Mapping]]] = ...) -> None: ...

class ReleaseLeaseRequest(_message.Message):
    __slots__ = ["lease_epoch", "reason", "task_id"]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    lease_epoch: int
    reason: str
    task_id: str
    def __init__(self, task_id: _Optional[str] = ..., lease_epoch: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class ReleaseLeaseResponse(_message.Message):
    __slots__ = ["version"]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: int
    def __init__(self, version: _Optional[int] = ...) -> None: ...

class SessionUpdates(_message.Message):
    __slots__ = ["batch_id", "requests"]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    batch_id: str
    requests: _containers.RepeatedCompositeFieldContainer[PublishUpdateRequest]
    def __init__(self, batch_id: _Optional[str] = ..., requests: _Optional[_Iterable[_Union[PublishUpdateRequest, _Mapping]]] = ...) -> None: ...

class SessionUpdatesApplied(_message.Message):
    __slots__ = ["batch_id", "outcomes"]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    batch_id: str
    outcomes: _containers.RepeatedCompositeFieldContainer[PublishOutcome]
    def __init__(self, batch_id: _Optional[str] = ..., outcomes: _Optional[_Iterable[_Union[PublishOutcome, _Mapping]]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ["agent_id", "heartbeat_interval_ms", "lease_ttl_ms", "tenant_id", "worker_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_MS_FIELD_NUMBER: _ClassVar[int]
    LEASE_TTL_MS_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    heartbeat_interval_ms: int
    lease_ttl_ms: int
    tenant_id: str
    worker_id: str
    def __init__(self, worker_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., heartbeat_interval_ms: _Optional[int] = ..., lease_ttl_ms: _Optional[int] = ...) -> None: ...

class WorkerMessage(_message.Message):
    __slots__ = ["heartbeat", "hello", "updates"]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    HELLO_FIELD_NUMBER: _ClassVar[int]
    UPDATES_FIELD_NUMBER: _ClassVar[int]
    heartbeat: Heartbeat
    hello: Hello
    updates: SessionUpdates
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., updates: _Optional[_Union[SessionUpdates, _Mapping]] = ...) -> None: ...
