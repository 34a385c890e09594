"""Images sent to a model without image input: pi-ai 0.79.10's transformMessages replaces each run of
adjacent images with one placeholder text (user messages and tool results alike); the model is told
an image was there, nothing is dropped silently, and a vision model gets the images unchanged."""

from __future__ import annotations

from py_agent.ai.providers.anthropic import convert_messages
from py_agent.ai.transform import (
    NON_VISION_TOOL_IMAGE_PLACEHOLDER,
    NON_VISION_USER_IMAGE_PLACEHOLDER,
    _downgrade_images,
    transform_messages,
)
from py_agent.ai.types import Context, ImageContent, Model, TextContent, ToolResultMessage, UserMessage

IMAGE = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")


def model(vision: bool) -> Model:
    return Model(
        id="m",
        name="M",
        api="anthropic-messages",
        provider="anthropic",
        base_url="http://127.0.0.1:1",
        input=["text", "image"] if vision else ["text"],
        context_window=1000,
        max_tokens=100,
    )


def test_runs_of_images_become_one_placeholder_each() -> None:
    message = UserMessage(content=[TextContent(text="look"), IMAGE, IMAGE, TextContent(text="and"), IMAGE])
    [out] = transform_messages([message], model(vision=False))
    assert isinstance(out, UserMessage) and not isinstance(out.content, str)
    assert [getattr(b, "text", "image") for b in out.content] == [
        "look",
        NON_VISION_USER_IMAGE_PLACEHOLDER,
        "and",
        NON_VISION_USER_IMAGE_PLACEHOLDER,
    ]
    assert message.content[1] is IMAGE, "the input (what the session keeps) is not changed"


def test_an_image_after_the_placeholder_text_adds_none() -> None:
    message = UserMessage(content=[TextContent(text=NON_VISION_USER_IMAGE_PLACEHOLDER), IMAGE])
    [out] = transform_messages([message], model(vision=False))
    assert [b.text for b in out.content if isinstance(b, TextContent)] == [NON_VISION_USER_IMAGE_PLACEHOLDER]


def test_tool_result_images_get_the_tool_placeholder() -> None:
    result = ToolResultMessage(tool_call_id="c1", tool_name="shot", content=[IMAGE, TextContent(text="done")])
    downgraded = _downgrade_images(result, model(vision=False))
    assert isinstance(downgraded, ToolResultMessage)
    assert [getattr(b, "text", "image") for b in downgraded.content] == [NON_VISION_TOOL_IMAGE_PLACEHOLDER, "done"]


def test_vision_models_get_the_images() -> None:
    message = UserMessage(content=[TextContent(text="look"), IMAGE])
    [out] = transform_messages([message], model(vision=True))
    assert out.content[1] == IMAGE


def test_the_request_says_an_image_was_omitted() -> None:
    context = Context(messages=[UserMessage(content=[TextContent(text="what is this?"), IMAGE])])
    [param] = convert_messages(model(vision=False), context, None)
    assert param["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "text", "text": NON_VISION_USER_IMAGE_PLACEHOLDER},
    ]
