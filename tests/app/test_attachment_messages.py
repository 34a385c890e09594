"""Attachments through the app's `send` command, in CPython against the mock provider server:
the stored message is pi's `user` message (typed text, `<file name=…>` blocks, image blocks,
metadata in `attachments`), the originals land in the session's workspace under `uploads/`, the
request carries the image and the document text, a model without image input gets nothing until
the user confirms, and every limit refuses with its message while nothing is sent or written."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from app_helpers import call, idle

from py_agent.ai.custom import unregister_custom_provider
from py_agent.app.attachments import LIMIT_SETTINGS, MAX_SETTING, attachments_plugin
from py_agent.app.controller import WebApp
from py_agent.app.keys import MemoryTabStore
from py_agent.app.storage import MemoryBackend, all_lines
from py_agent.app.workspace_store import open_workspace
from py_agent.app.workspace_tools import workspace_plugin
from py_agent.testing.mock_server import MockProviderServer

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082"
)
PNG64 = base64.b64encode(PNG).decode()
PDF_BYTES = b"%PDF-1.4 pretend\n%%EOF\n"


@pytest.fixture(autouse=True)
def _forget_the_provider() -> Iterator[None]:
    """The catalogue of custom providers is global: leave it as it was found."""
    yield
    unregister_custom_provider("Mock")


async def make_app(backend: MemoryBackend | None = None) -> WebApp:
    app = WebApp(
        backend or MemoryBackend(),
        MemoryTabStore(),
        lambda _kind, _payload: None,
        demo_tokens_per_second=0,
        plugins=[workspace_plugin, attachments_plugin],
    )
    await app.start()
    return app


async def with_model(app: WebApp, server: MockProviderServer, vision: bool, api: str = "anthropic-messages") -> None:
    base = server.url if api == "anthropic-messages" else f"{server.url}/v1"
    model = {"id": "mock-model", "name": "Mock Model", "input": ["text", "image"] if vision else ["text"]}
    provider = {"name": "Mock", "kind": "openai-compatible", "api": api, "baseUrl": base, "models": [model]}
    await call(app, "save_custom_provider", provider=provider, discover=False)
    await call(app, "save_key", provider="Mock", key="sk-test-1234", remember=True)
    await call(app, "new_session")
    await call(app, "set_model", provider="Mock", id="mock-model")


def image(name: str = "dot.png", data: str = PNG64) -> dict[str, Any]:
    return {
        "name": name,
        "mimeType": "image/png",
        "size": len(PNG),
        "kind": "image",
        "image": {"data": data, "mimeType": "image/png", "width": 1, "height": 1},
        "bytes": PNG64,
    }


def document(
    name: str = "q3.pdf", text: str = '<page number="1">\nRevenue by region\n</page>', **extra: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "mimeType": "application/pdf",
        "size": len(PDF_BYTES),
        "kind": "document",
        "text": text,
        "bytes": base64.b64encode(PDF_BYTES).decode(),
        **extra,
    }


def stored_messages(backend: MemoryBackend, sid: str) -> list[dict[str, Any]]:
    entries = [json.loads(line) for line in all_lines(backend, sid)]
    return [e["message"] for e in entries if e.get("type") == "message"]


async def test_a_prompt_with_an_image_and_a_document_is_pi_user_message_and_reaches_the_request() -> None:
    with MockProviderServer() as server:
        backend = MemoryBackend()
        app = await make_app(backend)
        await with_model(app, server, vision=True)
        result = await call(app, "send", text="Does the chart match?", attachments=[document(), image("chart.png")])
        assert result["status"] == "sent"
        await idle(app)
        assert app.chat is not None
        sid = app.chat.id
        user = stored_messages(backend, sid)[0]
        assert user["role"] == "user"
        assert user["content"] == [
            {"type": "text", "text": "Does the chart match?"},
            {
                "type": "text",
                "text": '<file name="uploads/q3.pdf">\n<page number="1">\nRevenue by region\n</page>\n</file>',
            },
            {"type": "text", "text": '<file name="uploads/chart.png"></file>'},
            {"type": "image", "data": PNG64, "mimeType": "image/png"},
        ]
        assert user["attachments"] == [
            {"path": "uploads/q3.pdf", "mimeType": "application/pdf", "size": len(PDF_BYTES)},
            {"path": "uploads/chart.png", "mimeType": "image/png", "size": len(PNG)},
        ]
        workspace = await open_workspace(sid)
        assert workspace.get("uploads/q3.pdf").data == PDF_BYTES  # type: ignore[union-attr]
        assert workspace.get("uploads/chart.png").data == PNG  # type: ignore[union-attr]
        body = json.dumps(server.requests[0]["body"])
        assert '"media_type": "image/png"' in body and PNG64 in body
        assert "Revenue by region" in body and "uploads/q3.pdf" in body

        # The same name again: a second file beside the first, not over it.
        await call(app, "send", text="", attachments=[document()])
        await idle(app)
        assert stored_messages(backend, sid)[-2]["attachments"][0]["path"] == "uploads/q3 (2).pdf"
        assert stored_messages(backend, sid)[-2]["content"][0]["text"].startswith('<file name="uploads/q3 (2).pdf">')


async def test_a_model_without_image_input_gets_nothing_until_the_user_confirms() -> None:
    with MockProviderServer() as server:
        backend = MemoryBackend()
        app = await make_app(backend)
        await with_model(app, server, vision=False, api="openai-completions")
        result = await call(app, "send", text="What is this?", attachments=[image()])
        assert result == {
            "status": "confirm_images",
            "message": "Mock Model can't see images; it will be told an image was omitted.",
        }
        assert server.requests == []
        assert app.chat is not None and not app.chat.persisted
        assert (await open_workspace(app.chat.id)).paths() == []

        result = await call(app, "send", text="What is this?", attachments=[image()], confirm_images=True)
        assert result["status"] == "sent"
        await idle(app)
        body = json.dumps(server.requests[0]["body"])
        # The provider leaves the image out for this model; the file block still names it.
        assert PNG64 not in body and "uploads/dot.png" in body
        # The session keeps the image (a vision model chosen later sees it).
        assert stored_messages(backend, app.chat.id)[0]["content"][-1]["type"] == "image"


async def test_limits_refuse_with_their_message_and_nothing_is_sent_or_written() -> None:
    with MockProviderServer() as server:
        app = await make_app()
        await with_model(app, server, vision=True)
        assert app.chat is not None
        sid = app.chat.id

        async def refused(**args: Any) -> dict[str, Any]:
            result = await call(app, "send", text="hi", **args)
            assert result["status"] == "refused", result
            return result

        eleven = [document(f"d{i}.txt") for i in range(11)]
        assert (await refused(attachments=eleven))["message"] == "You can attach at most 10 files to a message."
        big = document("big.pdf", size=21 * 1024 * 1024)
        result = await refused(attachments=[big])
        assert result == {"status": "refused", "message": "big.pdf is 21 MB; the limit is 20 MB.", "name": "big.pdf"}
        await call(app, "set_setting", key=MAX_SETTING, value=1)
        result = await refused(attachments=[document("two.pdf", size=2 * 1024 * 1024)])
        assert result["message"] == "two.pdf is 2 MB; the limit is 1 MB."
        await call(app, "set_setting", key=MAX_SETTING, value=20)
        gif = {**image("a.gif"), "image": {"data": PNG64, "mimeType": "image/gif"}}
        assert "this file type isn't supported (image/gif)" in (await refused(attachments=[gif]))["message"]
        # Images over the provider's request limit (Anthropic: 30 MB of base64 per request).
        huge = "A" * (4 * 1024 * 1024)
        result = await refused(attachments=[image(f"i{i}.png", huge) for i in range(8)])
        assert result["message"] == (
            "Images in this conversation total 32 MB, over Anthropic's 30 MB request limit. "
            "Branch from an earlier message or start a new session."
        )
        assert server.requests == []
        assert (await open_workspace(sid)).paths() == []


async def test_a_long_document_is_cut_and_its_full_text_kept_in_the_workspace() -> None:
    with MockProviderServer() as server:
        backend = MemoryBackend()
        app = await make_app(backend)
        await with_model(app, server, vision=True)
        full = "word " * 30_000
        long = document("notes.txt", text=full[:100_000], truncated=True, fullText=full, mimeType="text/plain")
        await call(app, "send", text="summarise", attachments=[long])
        await idle(app)
        assert app.chat is not None
        user = stored_messages(backend, app.chat.id)[0]
        block = user["content"][1]["text"]
        assert block.endswith("[Truncated at 100,000 characters. The full text is in uploads/notes.txt.txt.]\n</file>")
        assert user["attachments"][0]["truncated"] is True
        assert (await open_workspace(app.chat.id)).get("uploads/notes.txt.txt").data == full  # type: ignore[union-attr]


async def test_a_long_text_file_is_cut_and_the_note_points_at_the_file_itself() -> None:
    """The page reads only the start of a text file (web/attachments/extract-worker.js): the
    uploaded file is its full text, so no copy of it is written."""
    with MockProviderServer() as server:
        app = await make_app()
        await with_model(app, server, vision=True)
        full = "line of a log\n" * 10_000
        start = full[:100_000]
        data = base64.b64encode(full.encode()).decode()
        log = document("app.log", text=start, truncated=True, textIsFile=True, mimeType="text/plain", bytes=data)
        await call(app, "send", text="why?", attachments=[log])
        await idle(app)
        assert app.chat is not None
        sent = json.dumps(server.requests[0]["body"])
        assert "[Truncated at 100,000 characters. The whole file is uploads/app.log.]" in sent
        assert (await open_workspace(app.chat.id)).paths() == ["uploads/app.log"]


async def test_every_limit_of_settings_attachments_is_a_setting_the_app_keeps() -> None:
    app = await make_app()
    for key, (default, lowest, highest) in LIMIT_SETTINGS.items():
        assert lowest <= default <= highest
        settings = (await call(app, "set_setting", key=key, value=lowest))["settings"]
        assert settings[key] == lowest


async def test_export_carries_the_message_and_the_files_and_import_restores_both() -> None:
    with MockProviderServer() as server:
        backend = MemoryBackend()
        app = await make_app(backend)
        await with_model(app, server, vision=True)
        await call(app, "send", text="look", attachments=[image(), document()])
        await idle(app)
        assert app.chat is not None
        sid = app.chat.id
        text = (await call(app, "export_session"))["text"]
        await call(app, "delete_session", id=sid)
        imported = await call(app, "import_session", text=text)
        content = stored_messages(backend, imported["sessionId"])[0]["content"]
        assert [b.get("data") for b in content if b["type"] == "image"] == [PNG64]
        assert any("Revenue by region" in b.get("text", "") for b in content)
        files = {f.path: f.data for f in (await open_workspace(imported["sessionId"])).files()}
        assert files == {"uploads/dot.png": PNG, "uploads/q3.pdf": PDF_BYTES}


async def test_a_scaled_image_carries_pi_s_resize_note() -> None:
    with MockProviderServer() as server:
        backend = MemoryBackend()
        app = await make_app(backend)
        await with_model(app, server, vision=True)
        scaled = image("big.png")
        scaled["image"] = {
            **scaled["image"],
            "width": 2000,
            "height": 1000,
            "originalWidth": 4000,
            "originalHeight": 2000,
        }
        scaled["image"]["resized"] = True
        converted = image("anim.gif")  # re-encoded (GIF to PNG) at its own size: no note
        converted["image"] = {**converted["image"], "resized": True, "originalWidth": 1, "originalHeight": 1}
        await call(app, "send", text="", attachments=[scaled, converted])
        await idle(app)
        assert app.chat is not None
        texts = [b["text"] for b in stored_messages(backend, app.chat.id)[0]["content"] if b["type"] == "text"]
        assert texts == [
            '<file name="uploads/big.png">[Image: original 4000x2000, displayed at 2000x1000. '
            "Multiply coordinates by 2.00 to map to original image.]</file>",
            '<file name="uploads/anim.gif"></file>',
        ]


async def test_editing_a_message_keeps_its_attachments() -> None:
    with MockProviderServer() as server:
        backend = MemoryBackend()
        app = await make_app(backend)
        await with_model(app, server, vision=True)
        await call(app, "send", text="first words", attachments=[document(), image()])
        await idle(app)
        assert app.chat is not None
        entry = next(e for e in app.chat.session if getattr(e, "message", {}).get("role") == "user")
        await call(app, "edit", entry_id=entry.id, text="better words")
        await idle(app)
        edited = stored_messages(backend, app.chat.id)[-2]
        original = stored_messages(backend, app.chat.id)[0]
        assert edited["content"][0] == {"type": "text", "text": "better words"}
        assert edited["content"][1:] == original["content"][1:]
        assert edited["attachments"] == original["attachments"]
        assert "Revenue by region" in json.dumps(server.requests[-1]["body"])


async def test_hostile_names_are_kept_under_their_safe_name_or_refused_naming_the_file() -> None:
    with MockProviderServer() as server:
        backend = MemoryBackend()
        app = await make_app(backend)
        await with_model(app, server, vision=True)
        long = "n" * 1200 + ".txt"
        names = ["/workspace/../tmp/absws-x.txt", "....//....//dots-x.txt", long, "esc\x1b[31m.txt", "...."]
        # What the chips show before sending: the name each file will have, or why it cannot be kept.
        answers = await call(app, "upload_names", names=names)
        assert [a.get("path") for a in answers] == [
            "uploads/absws-x.txt",
            "uploads/dots-x.txt",
            f"uploads/{'n' * 250}\u2026.txt",
            "uploads/esc_[31m.txt",
            None,
        ]
        assert answers[4]["error"] == "'....' was not added: no part of its name can be a file name"
        # A name with nothing left refuses the send, naming the file; nothing is written.
        result = await call(app, "send", text="hi", attachments=[document(n) for n in names])
        assert result == {"status": "refused", "message": answers[4]["error"], "name": "...."}
        assert app.chat is not None
        assert (await open_workspace(app.chat.id)).paths() == []
        # The others are stored exactly where the chips said, and the message names those paths.
        result = await call(app, "send", text="hi", attachments=[document(n) for n in names[:4]])
        assert result["status"] == "sent"
        await idle(app)
        stored = [a["path"] for a in answers[:4]]
        assert sorted((await open_workspace(app.chat.id)).paths()) == sorted(stored)
        assert [a["path"] for a in stored_messages(backend, app.chat.id)[0]["attachments"]] == stored
