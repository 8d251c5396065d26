"""Building and reading A2A messages and parts."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence

from google.protobuf import json_format, struct_pb2

from ._proto.lf.a2a.v1 import a2a_pb2

Part = a2a_pb2.Part
Message = a2a_pb2.Message

#: What a status, message or reply may hold: a text (one text part) or parts.
Content = str | Sequence[a2a_pb2.Part]


def text_part(text: str) -> a2a_pb2.Part:
    """A text part."""
    return a2a_pb2.Part(text=text)


def data_part(data: object, media_type: str = "") -> a2a_pb2.Part:
    """A data part holding any JSON value (dict, list, str, number, bool or None); ``media_type``
    (default: none) says what it is."""
    value = struct_pb2.Value()
    json_format.ParseDict(data, value)
    part = a2a_pb2.Part(media_type=media_type)
    part.data.CopyFrom(value)
    return part


def parts_of(content: Content) -> list[a2a_pb2.Part]:
    """The parts of a text or of a sequence of parts."""
    return [text_part(content)] if isinstance(content, str) else list(content)


def agent_message(
    content: Content,
    *,
    context_id: str,
    task_id: str | None = None,
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> a2a_pb2.Message:
    """A ROLE_AGENT message with a fresh message id, in a task, or only in a context (a reply)."""
    message = a2a_pb2.Message(
        message_id=new_id(),
        context_id=context_id,
        role=a2a_pb2.ROLE_AGENT,
        parts=parts_of(content),
    )
    if task_id is not None:
        message.task_id = task_id
    return message


def text_of(message: a2a_pb2.Message | Iterable[a2a_pb2.Part]) -> str:
    """The text parts of a message (or of parts) joined by newlines; other parts are left out."""
    parts = message.parts if isinstance(message, a2a_pb2.Message) else message
    return "\n".join(part.text for part in parts if part.HasField("text"))
