from google.protobuf import json_format

from a2a_platform_worker import a2a_pb2, agent_message, data_part, text_of, text_part


def test_an_agent_message_in_a_task() -> None:
    message = agent_message("hi", context_id="ctx", task_id="t", new_id=lambda: "id-1")
    assert message.message_id == "id-1"
    assert message.role == a2a_pb2.ROLE_AGENT
    assert (message.context_id, message.task_id) == ("ctx", "t")
    assert [part.text for part in message.parts] == ["hi"]


def test_a_reply_belongs_to_no_task() -> None:
    message = agent_message([text_part("a"), text_part("b")], context_id="ctx")
    assert message.task_id == ""
    assert text_of(message) == "a\nb"


def test_text_of_leaves_other_parts_out() -> None:
    parts = [text_part("one"), data_part({"n": 1}), text_part("two")]
    assert text_of(parts) == "one\ntwo"
    assert json_format.MessageToDict(parts[1].data) == {"n": 1}
