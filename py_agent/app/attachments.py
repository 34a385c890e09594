"""Files attached to a prompt: checked, kept in the session's workspace and turned into pi's ``user`` message.

The page prepares each attachment off its main thread (``web/attachments/``): an image is decoded
and, when needed, scaled and re-encoded to the limits below; a document's text is extracted. What
reaches :func:`build_user_message` is that result plus the original bytes (base64). Here:

- the limits are checked again (number of files, size, image bytes per request);
- the original bytes go to the session's workspace under ``uploads/`` (so ``read``, ``grep`` and
  the code tools see them), a document's full text beside it when it was too long to inline;
- the message is a plain pi ``user`` message (docs/attachments.md): block 0 the typed text, then per
  attachment a ``<file name="PATH">`` text block (a document's text inside it) and, for an image,
  the image block; the optional ``attachments`` field holds metadata only.

A model without image input is not sent images silently: :func:`vision_warning` is what the page
shows, and the app sends only once the user confirmed (the provider then replaces the images
with a note, as pi does).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ..ai.types import ImageContent, Model, TextContent, UserMessage, now_ms
from ..tools.workspace import Workspace, WorkspaceError, safe_path, unique_path
from .commands import command
from .plugin_contract import Plugin
from .workspace_store import open_workspace

if TYPE_CHECKING:
    from .chat import ChatSession

__all__ = [
    "DEFAULT_MAX_FILE_MB",
    "LIMIT_SETTINGS",
    "MAX_DOCUMENT_CHARS",
    "MAX_FILES",
    "MAX_SETTING",
    "REQUEST_IMAGE_LIMITS_MB",
    "UPLOADS",
    "Attachment",
    "AttachmentError",
    "ImagePart",
    "attachments_plugin",
    "build_user_message",
    "check_request_images",
    "edited_message",
    "image_bytes",
    "parse_attachments",
    "send_with_attachments",
    "upload_names",
    "upload_path",
    "vision_warning",
]

MAX_FILES = 10
DEFAULT_MAX_FILE_MB = 20
MAX_SETTING = "attachmentMaxMb"
"""The app setting (Settings → Attachments) with the per-file limit in MB."""
LIMIT_SETTINGS: dict[str, tuple[int, int, int]] = {
    MAX_SETTING: (DEFAULT_MAX_FILE_MB, 1, 20),
    "attachmentMaxUnpackedMb": (20, 1, 50),
    "attachmentMaxMegapixels": (50, 1, 200),
    "attachmentMaxPages": (500, 1, 2000),
}
"""The limits a user may change in Settings → Attachments: default, lowest, highest. The page checks
them before it reads a file (web/attachments/limits.js, the same table); Python checks the file
size again here."""
MAX_DOCUMENT_CHARS = 100_000
MAX_IMAGE_BASE64 = int(4.5 * 1024 * 1024)
IMAGE_MIME_TYPES = ("image/png", "image/jpeg", "image/webp")
UPLOADS = "uploads"
# Base64 image bytes a whole request may carry (every turn resends the history), by wire API:
# under each provider's documented request limit, with room for the text.
REQUEST_IMAGE_LIMITS_MB: dict[str, tuple[str, int]] = {
    "google-generative-ai": ("Google", 18),
    "anthropic-messages": ("Anthropic", 30),
    "openai-completions": ("OpenAI", 45),
    "openai-responses": ("OpenAI", 45),
    "openai-codex-responses": ("OpenAI", 45),
    "azure-openai-responses": ("OpenAI", 45),
}
DEFAULT_REQUEST_LIMIT = ("the provider", 30)


class AttachmentError(ValueError):
    """An attachment (or the set of them) the app refuses; ``name`` is the file it is about, if one."""

    def __init__(self, message: str, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


class _Wire(BaseModel):
    # Validators built on first use, not when the page's Python starts.
    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, extra="ignore", defer_build=True
    )


class ImagePart(_Wire):
    """An image as the page prepared it (base64, PNG/JPEG/WebP)."""

    data: str
    mime_type: str
    width: int = 0
    height: int = 0
    original_width: int = 0
    original_height: int = 0
    resized: bool = False


class Attachment(_Wire):
    """One attachment of a ``send`` command."""

    name: str = Field(min_length=1)
    mime_type: str = "application/octet-stream"
    size: int = Field(ge=0)
    kind: str = "document"  # "image" | "document"
    text: str | None = None
    truncated: bool = False
    full_text: str | None = None
    text_is_file: bool = False
    """The text is the start of the file itself (a text file): its full text is the uploaded file."""
    pages: int | None = None
    image: ImagePart | None = None
    bytes: str | None = None
    """The original file, base64."""


def parse_attachments(raw: Sequence[Any]) -> list[Attachment]:
    try:
        return [Attachment.model_validate(item) for item in raw]
    except ValidationError as error:
        raise AttachmentError(f"An attachment is malformed: {error.errors()[0].get('msg', error)}") from error


def _escape(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


def _mb(size: int) -> str:
    value = size / (1024 * 1024)
    return f"{value:.1f}".rstrip("0").rstrip(".")


def upload_path(name: str) -> str:
    """Where an attachment named ``name`` is kept: ``uploads/`` and the last segment of its safe
    workspace name (:func:`~py_agent.tools.workspace.safe_path`). Raises :class:`AttachmentError`
    naming the file when nothing of the name can be kept."""
    try:
        return f"{UPLOADS}/{safe_path(name).rsplit('/', 1)[-1]}"
    except WorkspaceError as error:
        raise AttachmentError(str(error), name) from error


def image_bytes(messages: Iterable[Any]) -> int:
    """Base64 bytes of the image blocks in ``messages`` (pi messages, as models or JSON)."""
    total = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
        if not isinstance(content, list):
            continue
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", None)
            if kind == "image":
                data = block.get("data") if isinstance(block, dict) else getattr(block, "data", "")
                total += len(data or "")
    return total


def vision_warning(model: Model) -> str:
    return f"{model.name or model.id} can't see images; it will be told an image was omitted."


def check_request_images(model: Model, history: Iterable[Any], new_bytes: int) -> None:
    """Refuse a send whose request would carry more image bytes than the provider takes."""
    if "image" not in model.input:
        return  # the images are replaced by a note on the wire
    label, limit_mb = REQUEST_IMAGE_LIMITS_MB.get(model.api, DEFAULT_REQUEST_LIMIT)
    total = image_bytes(history) + new_bytes
    if total > limit_mb * 1024 * 1024:
        raise AttachmentError(
            f"Images in this conversation total {_mb(total)} MB, over {label}'s {limit_mb} MB request limit. "
            "Branch from an earlier message or start a new session."
        )


def _decode(attachment: Attachment) -> bytes | None:
    if attachment.bytes is None:
        return None
    try:
        return base64.b64decode(attachment.bytes, validate=True)
    except (binascii.Error, ValueError) as error:
        raise AttachmentError(f"{attachment.name} arrived damaged; attach it again.", attachment.name) from error


def _unsupported(name: str, mime_type: str) -> str:
    return f"{name}: this file type isn't supported ({mime_type}). Attach images, PDF, DOCX, XLSX, CSV or text."


def _check(attachments: Sequence[Attachment], max_file_mb: float) -> None:
    if len(attachments) > MAX_FILES:
        raise AttachmentError(f"You can attach at most {MAX_FILES} files to a message.")
    for a in attachments:
        if a.size > max_file_mb * 1024 * 1024:
            raise AttachmentError(
                f"{a.name} is {_mb(a.size)} MB; the limit is {_mb(int(max_file_mb * 1048576))} MB.", a.name
            )
        if a.kind == "image":
            if a.image is None:
                raise AttachmentError(f"{a.name}: the image was not prepared; attach it again.", a.name)
            if a.image.mime_type not in IMAGE_MIME_TYPES:
                raise AttachmentError(_unsupported(a.name, a.image.mime_type), a.name)
            if len(a.image.data) > MAX_IMAGE_BASE64:
                raise AttachmentError(f"{a.name}: couldn't be reduced below 4.5 MB.", a.name)
        elif a.kind != "document" or a.text is None:
            raise AttachmentError(_unsupported(a.name, a.mime_type), a.name)


@dataclass
class Built:
    message: UserMessage
    written: list[str]


async def build_user_message(
    text: str,
    attachments: Sequence[Attachment],
    workspace: Workspace,
    *,
    model: Model,
    history: Iterable[Any] = (),
    max_file_mb: float = DEFAULT_MAX_FILE_MB,
) -> Built:
    """The ``user`` message for ``text`` and ``attachments``; their files written to ``workspace``.

    Raises :class:`AttachmentError` (nothing written) when a limit is crossed or a file cannot be kept."""
    _check(attachments, max_file_mb)
    new_image_bytes = sum(len(a.image.data) for a in attachments if a.image is not None)
    check_request_images(model, history, new_image_bytes)

    taken: set[str] = set()
    plan: list[tuple[Attachment, str, bytes | None]] = []
    for a in attachments:
        path = unique_path(upload_path(a.name), lambda p: workspace.exists(p) or p in taken)
        taken.add(path)
        if a.truncated and a.full_text is not None:
            taken.add(f"{path}.txt")
        plan.append((a, path, _decode(a)))

    written: list[str] = []
    try:
        for a, path, data in plan:
            if data is not None:
                await workspace.write(path, data, source="attachment")
                written.append(path)
            if a.truncated and a.full_text is not None:
                await workspace.write(f"{path}.txt", a.full_text, source="attachment")
                written.append(f"{path}.txt")
    except WorkspaceError as error:
        for path in written:
            with contextlib.suppress(WorkspaceError):
                await workspace.delete(path, source="attachment")
        raise AttachmentError(f"The attachments could not be kept (storage full?): {error}") from error

    content: list[TextContent | ImageContent] = [TextContent(text=text)] if text else []
    meta: list[dict[str, Any]] = []
    for a, path, _ in plan:
        name = _escape(path)
        if a.image is not None:
            image = a.image
            note = ""
            scaled = (image.width, image.height) != (image.original_width, image.original_height)
            if image.resized and scaled and image.original_width and image.width:
                scale = image.original_width / image.width
                note = (
                    f"[Image: original {image.original_width}x{image.original_height}, displayed at "
                    f"{image.width}x{image.height}. Multiply coordinates by {scale:.2f} to map to original image.]"
                )
            content.append(TextContent(text=f'<file name="{name}">{note}</file>'))
            content.append(ImageContent(data=image.data, mime_type=image.mime_type))
            meta.append({"path": path, "mimeType": a.mime_type, "size": a.size})
        else:
            body = a.text or ""
            if a.truncated:
                where = ""
                if a.full_text is not None:
                    where = f" The full text is in {path}.txt."
                elif a.text_is_file:
                    where = f" The whole file is {path}."
                body += f"\n[Truncated at {MAX_DOCUMENT_CHARS:,} characters.{where}]"
            content.append(TextContent(text=f'<file name="{name}">\n{body}\n</file>'))
            entry: dict[str, Any] = {"path": path, "mimeType": a.mime_type, "size": a.size}
            if a.truncated:
                entry["truncated"] = True
            meta.append(entry)
    message = UserMessage(content=list(content), timestamp=now_ms(), attachments=meta)
    return Built(message, written)


def edited_message(original: dict[str, Any], text: str) -> UserMessage | None:
    """An edit of a user message that had attachments: the new text, the same attachments (their
    blocks and metadata). ``None`` when the original had none (a plain text message will do)."""
    content = original.get("content")
    if not isinstance(content, list):
        return None
    kept = [
        b
        for b in content
        if isinstance(b, dict)
        and (b.get("type") == "image" or (b.get("type") == "text" and str(b.get("text", "")).startswith("<file name=")))
    ]
    if not kept:
        return None
    extra = {"attachments": original["attachments"]} if isinstance(original.get("attachments"), list) else {}
    blocks = [{"type": "text", "text": text}, *kept] if text else kept
    return UserMessage.model_validate({"role": "user", "content": blocks, "timestamp": now_ms(), **extra})


def _limit_mb(value: Any) -> float:
    default, _, highest = LIMIT_SETTINGS[MAX_SETTING]
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(min(value, highest))
    return float(default)


async def send_with_attachments(
    chat: ChatSession, text: str, raw: Sequence[Any], confirm_images: bool, max_file_mb: Any = None
) -> dict[str, Any] | None:
    """The ``send`` command with attachments: ``None`` once sent, else the page's answer
    (``confirm_images``: the model can't see images, ask first; ``refused``: why, nothing sent)."""
    if chat.streaming:
        # Before any file is written: a message with attachments is never queued.
        return {"status": "refused", "message": "Attachments go with a new message: wait for the reply to finish."}
    try:
        attachments = parse_attachments(raw)
        model = chat.model
        if any(a.kind == "image" for a in attachments) and "image" not in model.input and not confirm_images:
            return {"status": "confirm_images", "message": vision_warning(model)}
        workspace = await open_workspace(chat.id)
        built = await build_user_message(
            text,
            attachments,
            workspace,
            model=model,
            history=chat.agent.state.messages,
            max_file_mb=_limit_mb(max_file_mb),
        )
    except AttachmentError as error:
        return {"status": "refused", "message": str(error), "name": error.name}
    chat.send(text, built.message)
    return None


def upload_names(names: list[Any]) -> list[dict[str, str]]:
    """The ``upload_names`` command: where each attachment name would be kept (``{"name", "path"}``,
    before a ``(2)`` for a taken name) or why it cannot be (``{"name", "error"}``), for the chips."""
    answers: list[dict[str, str]] = []
    for name in names:
        try:
            answers.append({"name": str(name), "path": upload_path(str(name))})
        except AttachmentError as error:
            answers.append({"name": str(name), "error": str(error)})
    return answers


def attachments_plugin() -> Plugin:
    """Declares the settings the attachments own (their limits) and the chips' ``upload_names``; the
    send path is the app's ``send`` command (:meth:`py_agent.app.controller.WebApp.cmd_send`)."""
    return Plugin(name="attachments", settings=tuple(LIMIT_SETTINGS), commands=(command("upload_names", upload_names),))
