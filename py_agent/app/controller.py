"""The web app's controller: what the page asks for, and what it is told.

The page talks to :class:`WebApp` through one function each way, with JSON only:

- page -> Python: ``await dispatch(command, args_json)`` returns a JSON string; the commands are
  ``APP_COMMANDS`` (end of this module) and those of the plugins (:mod:`py_agent.app.commands`);
  an error (an unknown command or argument included) comes back as ``{"error": "..."}``;
- Python -> page: ``emit(kind, payload_json)``: ``session_state``, ``transcript``, ``append``,
  ``stream`` (a reply grew: the page pulls ``streaming_snapshot`` on its next animation frame),
  ``tool``, ``notice``, ``unsent``, ``persisted``, ``sessions_changed``, ``key_rejected``,
  ``panel``, ``catalog_changed``.

Everything here is pure (CPython tests drive it with :class:`~py_agent.app.storage.MemoryBackend`);
:mod:`py_agent.browser.main` wires it to IndexedDB and the page.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from .. import __version__
from ..ai.custom import (
    DEFAULT_BASE_URLS,
    CustomProvider,
    DiscoveryError,
    custom_provider_types,
    discover_models,
    get_custom_provider,
    get_custom_providers,
    register_custom_provider,
    unregister_custom_provider,
)
from ..ai.models import get_builtin_providers, get_model, get_models, model_requires_api_key
from ..ai.registry import complete_simple
from ..ai.types import Context, Model, SimpleStreamOptions, UserMessage
from ..session import Session, detach_attachments, export_with_attachments, import_jsonl, load_session
from ..session.entries import SessionHeader
from ..transports.proxy import ProxyTransport
from .catalog import PROVIDER_INFO, default_model_for, is_local_provider, model_summary, provider_info, search_models
from .chat import ChatSession, estimate_tokens
from .commands import CommandError, CommandTable, method_command
from .compacting import compact_command
from .demo import DEMO_PROVIDER, demo_model, register_demo_model
from .errors import clean_text, friendly_error
from .keys import KeyRing, TabKeyStore
from .network import check_base_url, discovery_problem, set_page_origin, uses_proxy
from .plugin_contract import Plugin, load_plugins
from .plugins import default_plugins
from .provider_transfer import ProviderFileError, export_providers, parse_provider_file, plan_import
from .reliability import idle_timeout_setting
from .storage import SessionStore, StorageBackend, StorageError, describe_storage_error

__all__ = ["APP_COMMANDS", "APP_SETTINGS", "DEFAULT_SYSTEM_PROMPT", "WebApp"]

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant in a chat app that runs in the user's browser. "
    "Answer clearly and concisely; use Markdown, with fenced code blocks for code."
)
KEY_TEST_PROMPT = "Reply with: ok"
APP_SETTINGS = ("theme", "systemPrompt", "welcomed", "idleTimeoutMs", "persistAsked", "proxyUrl")
"""The settings the page may set (``set_setting``); plugins add the ones they own."""
PUBLIC_SETTINGS = ("theme", "systemPrompt", "welcomed", "model", "persistAsked", "idleTimeoutMs")
READ_ONLY_REASON = "This session is open in another tab. To avoid conflicting changes it is read-only here."
AFTER_SWITCH = frozenset(
    {"send", "queue", "unqueue", "retry", "edit", "switch_branch", "set_model", "set_thinking", "set_system_prompt"}
    | {"check_send", "panel_message", "lock_state", "rename_session", "export_session", "tool_settings"}
)
"""Commands about the open session: one sent while a switch (``new_session``, ``open_session``) is
under way applies to the session it opens, not to the one it replaces."""

EmitJson = Callable[[str, str], None]


class WebApp:
    def __init__(
        self,
        backend: StorageBackend,
        tab_keys: TabKeyStore,
        emit: EmitJson,
        *,
        demo_tokens_per_second: float | None = None,
        plugins: Sequence[Plugin | Callable[[], Plugin]] | None = None,
    ) -> None:
        """``plugins``: the plugins (or the functions that build them) the app runs with; default
        :func:`~py_agent.app.plugins.default_plugins`. One that fails to build is a start notice."""
        self.backend = backend
        self.store = SessionStore(backend)
        self.keys = KeyRing(backend, tab_keys)
        self._emit_json = emit
        self.settings: dict[str, Any] = {}
        self.chat: ChatSession | None = None
        self._demo_tps = demo_tokens_per_second
        self.startup_notices: list[str] = []
        self.plugins, problems = load_plugins(default_plugins() if plugins is None else plugins)
        self.startup_notices.extend(problems)
        self.commands = CommandTable(APP_COMMANDS)
        for plugin in list(self.plugins.plugins):
            try:
                self.commands.add(plugin.commands)
            except ValueError as error:
                self.plugins.plugins.remove(plugin)
                self.startup_notices.append(f"Plugin {plugin.name} could not be loaded: {error}")
        self._questions: dict[str, asyncio.Future[str | None]] = {}
        self._warned_skipped = 0
        # Switches of the open session: the newest one started wins (an open of a long session
        # that ends after a later "new chat" must not put its session back), and the commands
        # of AFTER_SWITCH wait until none is under way.
        self._switch_seq = 0
        self._switching = 0
        self._switched = asyncio.Event()
        self._switched.set()

    # ---- plumbing -------------------------------------------------------------------------------

    def emit(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "session_state" and self.chat is not None and payload.get("sessionId") == self.chat.id:
            payload = {**payload, "model": self._summary(self.chat.model)}
        elif (
            kind not in ("sessions_changed", "notice", "catalog_changed", "confirm", "keys_changed")
            and self.chat is not None
            and payload.get("sessionId") not in (None, self.chat.id)
        ):
            return  # an event of a session that is no longer shown
        self._emit_json(kind, json.dumps(payload, ensure_ascii=False))

    def notice(self, text: str, level: str = "info", notice_id: str | None = None) -> None:
        payload: dict[str, Any] = {"level": level, "text": self.keys.redact(text)}
        if notice_id:
            payload["id"] = notice_id
        self.emit("notice", payload)

    def _summary(self, model: Model) -> dict[str, Any]:
        return model_summary(model, has_key=self.keys.has(model.provider))

    async def dispatch(self, command: str, args_json: str = "{}") -> str:
        """Run a page command; returns its JSON result (``{"error": ...}`` when it failed)."""
        declared = self.commands.get(command)
        if declared is None:
            return json.dumps({"error": f"Unknown command: {command}"})
        try:
            args = json.loads(args_json or "{}")
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
            declared.check(args)
        except (ValueError, CommandError) as error:
            return json.dumps({"error": str(error)})
        if command in AFTER_SWITCH:
            await self._switched.wait()
        try:
            result = declared.handler(self, **args) if declared.method else declared.handler(**args)
            if inspect.isawaitable(result):
                result = await result
        except StorageError as error:
            return json.dumps({"error": describe_storage_error(error), "kind": error.kind})
        except ValidationError as error:  # pydantic's words name classes and link to its documentation
            problems = "; ".join(clean_text(str(e.get("msg", ""))) for e in error.errors())
            return json.dumps({"error": self.keys.redact(f"Invalid input: {problems}")})
        except (ValueError, TypeError, KeyError) as error:
            return json.dumps({"error": self.keys.redact(str(error) or "Invalid input.")})
        except Exception as error:  # a bug: report it readably, keep the app running
            print(self.keys.redact(f"py-agent: {command} failed:\n{traceback.format_exc()}"), file=sys.stderr)
            detail = clean_text(str(error)) or "an internal error"
            return json.dumps({"error": self.keys.redact(f"Something went wrong: {detail}.")})
        return json.dumps(result if result is not None else {}, ensure_ascii=False)

    # ---- start -----------------------------------------------------------------------------------

    async def start(self) -> None:
        register_demo_model(**({} if self._demo_tps is None else {"tokens_per_second": self._demo_tps}))
        # The stored records are read at once, not one after the other: in the page each read is a
        # round trip to IndexedDB, and the app's start waited for them in turn.
        problems, self.settings, _, providers = await asyncio.gather(
            self.plugins.storage_opened(self.backend),
            self.backend.kv_all("settings"),
            self.keys.load(),
            self.backend.kv_all("providers"),
        )
        self.startup_notices.extend(problems)
        for name, record in providers.items():
            try:
                self._register_custom(record)
            except Exception as error:
                self.startup_notices.append(f"Custom provider {name!r} could not be loaded: {error}")

    def _register_custom(self, record: dict[str, Any]) -> CustomProvider:
        provider = CustomProvider.model_validate(record["provider"])
        cached = [Model.model_validate(m) for m in record.get("models") or []]
        register_custom_provider(provider, cached or None)
        return provider

    def default_model(self) -> Model:
        ref = self.settings.get("model")
        if isinstance(ref, dict):
            model = self._resolve(ref.get("provider"), ref.get("id"))
            if model is not None:
                return model
        return demo_model()

    def _resolve(self, provider: Any, model_id: Any) -> Model | None:
        if not isinstance(provider, str) or not isinstance(model_id, str):
            return None
        model = get_model(provider, model_id)
        if model is None:
            custom = get_custom_provider(provider)
            if custom is not None:
                model = custom.make_model(model_id)
        return model

    def _system_prompt(self) -> str:
        prompt = self.settings.get("systemPrompt")
        return prompt if isinstance(prompt, str) else DEFAULT_SYSTEM_PROMPT

    async def _set_setting(self, key: str, value: Any) -> None:
        self.settings[key] = value
        await self.backend.kv_put("settings", key, value)

    def cmd_init(self, origin: str = "") -> dict[str, Any]:
        """``origin``: the page's ``location.origin`` (advice about CORS and mixed content names it)."""
        set_page_origin(origin)
        return {
            "version": __version__,
            "settings": self._public_settings(),
            "firstRun": not self.settings.get("welcomed"),
            "model": self._summary(self.default_model()),
            "providers": self._provider_cards(),
            "notices": self.startup_notices,
            "defaultSystemPrompt": DEFAULT_SYSTEM_PROMPT,
            "defaultBaseUrls": DEFAULT_BASE_URLS,
        }

    def _public_settings(self) -> dict[str, Any]:
        return {k: v for k, v in self.settings.items() if k in PUBLIC_SETTINGS or k in self.plugins.settings()}

    def _provider_cards(self) -> list[dict[str, Any]]:
        cards = []
        for provider in [DEMO_PROVIDER, *get_builtin_providers()]:
            info = provider_info(provider)
            model = default_model_for(provider)
            if model is None:
                continue
            cards.append(
                {
                    "provider": provider,
                    "label": info.label,
                    "keyUrl": info.key_url,
                    "hasKey": self.keys.has(provider),
                    "requiresKey": model_requires_api_key(model),
                    "model": model.id,
                    "modelName": model.name or model.id,
                }
            )
        for custom in get_custom_providers():
            # The welcome screen lists it beside the built-in ones: its models (once discovered or
            # configured) and whether it runs on this computer.
            models = get_models(custom.name)
            cards.append(
                {
                    "provider": custom.name,
                    "label": custom.name,
                    "keyUrl": "",
                    "hasKey": self.keys.has(custom.name),
                    "requiresKey": custom.needs_api_key,
                    "custom": True,
                    "kind": custom.kind,
                    "local": is_local_provider(custom),
                    "modelCount": len(models),
                    "model": models[0].id if models else None,
                    "modelName": (models[0].name or models[0].id) if models else "",
                }
            )
        return cards

    async def cmd_set_setting(self, key: str, value: Any) -> dict[str, Any]:
        if key not in APP_SETTINGS and key not in self.plugins.settings():
            raise ValueError(f"Unknown setting: {key}")
        bad_url = not isinstance(value, str) or not value.strip().lower().startswith(("http://", "https://"))
        if key == "proxyUrl" and value and bad_url:
            raise ValueError("The proxy URL must start with http:// or https://")
        if key == "idleTimeoutMs":
            value = idle_timeout_setting(value)
        await self._set_setting(key, value)
        if key == "proxyUrl" and self.chat is not None:
            self.chat.proxy_url = self._proxy_url()
        if key == "idleTimeoutMs" and self.chat is not None:
            self.chat.idle_timeout_ms = value  # from the next request on
        return {"settings": self._public_settings()}

    # ---- sessions -------------------------------------------------------------------------------

    def _chat(self) -> ChatSession:
        if self.chat is None:
            raise ValueError("No session is open.")
        return self.chat

    def _make_chat(self, session: Session, model: Model, thinking: str, prompt: str, saved: int) -> ChatSession:
        idle = self.settings.get("idleTimeoutMs")
        chat = ChatSession(
            session=session,
            store=self.store,
            keys=self.keys,
            emit=self.emit,
            model=model,
            thinking_level=thinking,
            system_prompt=prompt,
            saved_count=saved,
            **({"idle_timeout_ms": int(idle)} if isinstance(idle, int | float) else {}),
            plugins=self.plugins,
        )
        chat.confirm = self.ask
        chat.host_extras["choose"] = self.choose
        chat.proxy_url = self._proxy_url()
        chat.host_extras["tool_settings"] = lambda: self.settings.get("toolSettings")
        # MCP sign-ins keep refreshed tokens in the key ring (py_agent/app/mcp_servers.py); only those names.
        chat.host_extras["set_secret"] = self._set_mcp_secret
        return chat

    async def _set_mcp_secret(self, name: str, value: str, remember: bool = True) -> None:
        if not name.startswith("mcp:"):
            raise ValueError("Only MCP servers' tokens are kept this way")
        await self.keys.set(name, value, remember)

    def _proxy_url(self) -> str | None:
        value = self.settings.get("proxyUrl")
        return value.strip() if isinstance(value, str) and value.strip() else None

    async def ask(self, title: str, message: str) -> bool:
        """Ask the user a yes/no question in a dialog of the page (for tools and plugins)."""
        return await self.choose(title, message) is not None

    async def choose(self, title: str, message: str, choices: Sequence[tuple[str, str]] = ()) -> str | None:
        """Ask the user in a dialog of the page with the buttons ``choices`` (``(value, label)``;
        the page's "Cancel" and "Allow" when empty, answering ``"ok"``): the value chosen, or
        ``None`` when the dialog was closed."""
        question_id = f"q{len(self._questions) + 1}-{id(self)}"
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._questions[question_id] = future
        payload: dict[str, Any] = {"id": question_id, "title": title, "message": message}
        if choices:
            payload["choices"] = [{"value": value, "label": label} for value, label in choices]
        self.emit("confirm", payload)
        try:
            return await future
        finally:
            self._questions.pop(question_id, None)

    def cmd_answer(self, id: str, ok: bool, choice: str | None = None) -> dict[str, Any]:
        future = self._questions.get(id)
        if future is not None and not future.done():
            future.set_result((choice if isinstance(choice, str) else "ok") if ok else None)
        return {}

    async def _show(self, chat: ChatSession, ticket: int) -> dict[str, Any]:
        """Make ``chat`` the open session, unless a switch started after this one (``ticket``)."""
        superseded = {"sessionId": chat.id, "persisted": chat.persisted, "superseded": True}
        if ticket != self._switch_seq:
            return superseded
        old = self.chat
        if old is not None and old is not chat and old.streaming:
            old.abort()
        self.chat = chat
        await chat.install_tools()
        if ticket != self._switch_seq:
            return superseded  # the newer switch shows its own session
        for error in chat.tool_errors:
            self.notice(error, "warn")
        self.emit("transcript", {"sessionId": chat.id, "items": chat.transcript()})
        self.emit("session_state", chat.state())
        return {"sessionId": chat.id, "persisted": chat.persisted, "readOnly": chat.read_only}

    def _start_switch(self) -> int:
        self._switch_seq += 1
        self._switching += 1
        self._switched.clear()
        return self._switch_seq

    def _end_switch(self) -> None:
        self._switching -= 1
        if not self._switching:
            self._switched.set()

    async def cmd_new_session(self) -> dict[str, Any]:
        ticket = self._start_switch()
        try:
            thinking = self.settings.get("thinkingLevel")
            chat = self._make_chat(
                Session.create(),
                self.default_model(),
                thinking if isinstance(thinking, str) else "off",
                self._system_prompt(),
                0,
            )
            return await self._show(chat, ticket)
        finally:
            self._end_switch()

    async def cmd_open_session(self, id: str, read_only: bool = False, reload: bool = False) -> dict[str, Any]:
        """Open a stored session. ``read_only``: another tab holds its lock, so nothing may be
        written, not even the recovery of an interrupted reply (that tab may still be streaming
        it). ``reload``: read it again from storage even if it is the open one (another tab may
        have added to it). Answers ``superseded`` when another switch started meanwhile: that
        one's session is shown, not this one."""
        ticket = self._start_switch()
        try:
            return await self._open_session(ticket, id, read_only, reload)
        finally:
            self._end_switch()

    async def _open_session(self, ticket: int, id: str, read_only: bool, reload: bool) -> dict[str, Any]:
        if self.chat is not None and self.chat.id == id and not reload:
            if read_only and not self.chat.read_only:
                self.chat.set_read_only(READ_ONLY_REASON)
            return await self._show(self.chat, ticket)
        stored = await self.store.load(id)
        # A long session takes a while to read and check, on the page's thread: between the steps
        # the page handles what the user did meanwhile (a click on "New chat" starts a newer switch,
        # and the rest of this one is not done).
        await asyncio.sleep(0)
        if ticket != self._switch_seq:
            return {"sessionId": id, "superseded": True, "found": stored is not None}
        if stored is None:
            return {"found": False}
        session = stored.session
        context = session.build_context()
        warnings = [str(w) for w in stored.warnings]
        model = None
        if context.model is not None:
            model = self._resolve(context.model.provider, context.model.model_id)
            if model is None:
                warnings.append(
                    f"The model {context.model.provider}/{context.model.model_id} of this session is not "
                    "available here; pick another one to continue."
                )
        chat = self._make_chat(
            session,
            model or self.default_model(),
            context.thinking_level,
            context.system_prompt if context.system_prompt is not None else self._system_prompt(),
            stored.next_seq,
        )
        if read_only:
            chat.read_only, chat.read_only_reason = True, READ_ONLY_REASON
        await asyncio.sleep(0)
        if ticket != self._switch_seq:
            return {"sessionId": id, "superseded": True, "found": True}
        await chat.recover_draft(stored.draft)
        result = await self._show(chat, ticket)
        if result.get("superseded"):
            return {**result, "found": True}
        for warning in warnings:
            self.notice(warning, "warn")
        return {**result, "found": True, "warnings": warnings}

    async def cmd_list_sessions(self, query: str = "") -> dict[str, Any]:
        metas = await self.store.list(query)
        skipped = self.store.skipped
        if skipped and skipped != self._warned_skipped:
            self._warned_skipped = skipped
            self.notice(
                f"{skipped} stored session{' is' if skipped == 1 else 's are'} damaged and cannot be listed; "
                "the other sessions are fine.",
                "warn",
                "unreadable-sessions",
            )
        return {"sessions": [m.to_json() for m in metas], "skipped": skipped}

    async def _load_other(self, session_id: str) -> Session:
        stored = await self.store.load(session_id)
        if stored is None:
            raise ValueError("That session no longer exists.")
        return stored.session

    async def cmd_rename_session(self, id: str, name: str) -> dict[str, Any]:
        if self.chat is not None and self.chat.id == id:
            await self.chat.rename(name)
            return {"title": self.chat.session.title}
        stored = await self.store.load(id)
        if stored is None:
            raise ValueError("That session no longer exists.")
        session, first = stored.session, stored.next_seq  # after damaged records too
        entry = session.append_session_info(name)
        await self.store.append(session, first, [entry], clear_draft=False)
        self.emit("sessions_changed", {})
        return {"title": session.title}

    async def cmd_delete_session(self, id: str) -> dict[str, Any]:
        current = self.chat is not None and self.chat.id == id
        if current and self.chat is not None and self.chat.streaming:
            self.chat.abort()
            await self.chat.wait_idle()
        await self.store.delete(id)
        for problem in await self.plugins.session_deleted(id):
            self.notice(problem, "warn")
        self.emit("sessions_changed", {})
        if current:
            await self.cmd_new_session()
        return {"deleted": id, "wasCurrent": current}

    async def cmd_export_session(self, id: str | None = None) -> dict[str, Any]:
        # Plugin data (the workspace) is appended as `custom` entries, which pi reads and ignores.
        secrets = self.keys.secrets()
        if id is None or (self.chat is not None and self.chat.id == id):
            chat = self._chat()
            if not chat.persisted:
                raise ValueError("This session is empty: there is nothing to export yet.")
            attachments, problems = await self.plugins.export_attachments(chat.id, secrets)
            text, session = chat.export(attachments), chat.session
        else:
            session = await self._load_other(id)
            attachments, problems = await self.plugins.export_attachments(session.id, secrets)
            text = export_with_attachments(session, attachments, secrets=secrets)
        for problem in problems:
            self.notice(problem, "warn")
        safe = "".join(c if c.isalnum() or c in "-_ " else "_" for c in session.title)[:40].strip() or "session"
        return {"filename": f"{safe} {session.id[:8]}.jsonl", "text": text}

    async def cmd_import_session(self, text: str) -> dict[str, Any]:
        session = import_jsonl(text)
        # Plugin data the export carried (the workspace): taken out of the tree, restored below.
        session, attached = detach_attachments(session, self.plugins.attachment_types())
        if not len(session):
            raise ValueError("This file holds no session entries (is it a pi session .jsonl file?).")
        warnings = [str(w) for w in session.warnings]
        if await self.store.load(session.id) is not None:
            # Keep both: the import becomes a copy under a new id.
            fresh = Session.create()
            header = SessionHeader.model_validate(
                {**session.header.to_json(), "id": fresh.id}, by_alias=True, by_name=False
            )
            session = load_session(header, [e.to_json() for e in session], leaf_id=session.leaf_id)
            warnings.append("A session with the same id exists; the import was saved as a copy.")
        await self.store.append(session, 0, session.entries, clear_draft=False)
        if attached:
            newest = {custom_type: entries[-1].data for custom_type, entries in attached.items()}
            # First, so that the page shows them (it toasts the first few warnings).
            warnings[:0] = await self.plugins.restore_attachments(session.id, newest)
        self.emit("sessions_changed", {})
        return {"sessionId": session.id, "title": session.title, "warnings": warnings}

    # ---- chatting -------------------------------------------------------------------------------

    async def cmd_send(
        self, text: str, attachments: list[Any] | None = None, confirm_images: bool = False
    ) -> dict[str, Any]:
        text = text.strip()
        if not text and not attachments:
            return {"status": "empty"}
        if self.chat is None:
            await self.cmd_new_session()
        chat = self._chat()
        model = chat.model
        if model_requires_api_key(model) and not self.keys.has(model.provider):
            return {"status": "need_key", "provider": self._key_request(model.provider)}
        instructions = compact_command(text) if not attachments else None
        if instructions is not None:
            await chat.compact(instructions)  # "/compact [instructions]", as in pi's CLI
            return {"status": "sent"}
        if attachments:
            from .attachments import MAX_SETTING, send_with_attachments  # on first use: not at the page's start

            limit = self.settings.get(MAX_SETTING)
            refused = await send_with_attachments(chat, text, attachments, confirm_images, limit)
            if refused is not None:
                return refused
        else:
            chat.send(text)
        await self._welcomed()
        return {"status": "sent"}

    async def _welcomed(self) -> None:
        if not self.settings.get("welcomed"):
            await self._set_setting("welcomed", True)

    def cmd_queue(self, text: str, mode: str = "steer") -> dict[str, Any]:
        text = text.strip()
        if not text:
            return {"status": "empty"}
        chat = self._chat()
        if chat.compactor.running:
            return {"status": "compacting"}  # the text stays in the box until the summary is done
        if not chat.streaming or compact_command(text) is not None:
            return {"status": "idle"}  # the page sends it instead ("/compact" stops the reply first)
        queued = chat.queue(text, "follow_up" if mode == "follow_up" else "steer")
        return {"status": "queued", "id": queued.id}

    def cmd_unqueue(self, id: str) -> dict[str, Any]:
        return {"text": self._chat().unqueue(id)}

    async def cmd_compact(self, instructions: str = "") -> dict[str, Any]:
        """Summarize the session's earlier messages now (the session menu's "Compact")."""
        chat = self._chat()
        if model_requires_api_key(chat.model) and not self.keys.has(chat.model.provider):
            return {"status": "need_key", "provider": self._key_request(chat.model.provider)}
        await chat.compact(instructions.strip())
        return {"status": "sent"}

    async def cmd_summarize_left_branch(self, instructions: str = "") -> dict[str, Any]:
        """Bring a summary of the version the user switched away from into this one."""
        chat = self._chat()
        if model_requires_api_key(chat.model) and not self.keys.has(chat.model.provider):
            return {"status": "need_key", "provider": self._key_request(chat.model.provider)}
        await chat.summarize_left_branch(instructions.strip())
        return {"status": "sent"}

    def cmd_abort(self) -> dict[str, Any]:
        if self.chat is not None:
            self.chat.abort()
        return {}

    async def cmd_retry(self, entry_id: str | None = None) -> dict[str, Any]:
        chat = self._chat()
        if model_requires_api_key(chat.model) and not self.keys.has(chat.model.provider):
            return {"status": "need_key", "provider": self._key_request(chat.model.provider)}
        await chat.retry(entry_id)
        return {"status": "sent"}

    async def cmd_edit(self, entry_id: str, text: str) -> dict[str, Any]:
        chat = self._chat()
        if model_requires_api_key(chat.model) and not self.keys.has(chat.model.provider):
            return {"status": "need_key", "provider": self._key_request(chat.model.provider)}
        await chat.edit(entry_id, text.strip())
        return {"status": "sent"}

    async def cmd_switch_branch(self, entry_id: str) -> dict[str, Any]:
        await self._chat().switch_branch(entry_id)
        return {}

    def cmd_streaming_snapshot(self, since: int | None = None) -> dict[str, Any]:
        if self.chat is None:
            return {"snapshot": None}
        return {"sessionId": self.chat.id, "snapshot": self.chat.streaming_snapshot(since)}

    async def cmd_set_model(self, provider: str, id: str) -> dict[str, Any]:
        model = self._resolve(provider, id)
        if model is None:
            raise ValueError(f"Unknown model {provider}/{id}")
        if self.chat is None:
            await self.cmd_new_session()
        await self._chat().set_model(model)
        await self._set_setting("model", {"provider": model.provider, "id": model.id})
        return {"model": self._summary(model)}

    async def cmd_set_thinking(self, level: str) -> dict[str, Any]:
        chat = self._chat()
        await chat.set_thinking_level(level)
        await self._set_setting("thinkingLevel", chat.thinking_level)
        return {"thinkingLevel": chat.thinking_level}

    async def cmd_set_system_prompt(self, prompt: str, default: bool = False) -> dict[str, Any]:
        if default:
            await self._set_setting("systemPrompt", prompt)
        if self.chat is not None:
            await self.chat.set_system_prompt(prompt)
        return {}

    def cmd_check_send(self, text: str) -> dict[str, Any]:
        """Whether sending ``text`` now would exceed the model's context window (pi's chars/4 estimate)."""
        model = self.chat.model if self.chat is not None else self.default_model()
        if compact_command(text) is not None:
            return {"tokens": 0, "contextWindow": model.context_window, "over": False}  # a command, not sent
        history = list(self.chat.agent.state.messages) if self.chat is not None else []
        prompt = self.chat.system_prompt if self.chat is not None else self._system_prompt()
        tokens = estimate_tokens(history, prompt + text)
        window = model.context_window
        # The offline demo runs in the page and sends nothing anywhere: no provider limit to warn of.
        over = bool(window) and tokens > window and model.provider != DEMO_PROVIDER
        return {"tokens": tokens, "contextWindow": window, "over": over}

    def cmd_search_models(self, query: str = "", reasoning: bool = False, vision: bool = False) -> dict[str, Any]:
        current = self.chat.model if self.chat is not None else self.default_model()
        models = search_models(query, current=current, reasoning=reasoning, vision=vision, has_key=self.keys.has)
        return {"models": [self._summary(m) for m in models]}

    async def cmd_panel_message(self, panel: str, data: Any = None) -> dict[str, Any]:
        handler = self.plugins.panel_handler(panel)
        if handler is None or self.chat is None:
            return {"handled": False}
        result = handler(self.chat.id, data)
        if inspect.isawaitable(result):
            result = await result
        return {"handled": True, "result": result}

    def cmd_lock_state(self, session_id: str, held: bool, reason: str = "") -> dict[str, Any]:
        if self.chat is not None and self.chat.id == session_id:
            if held:
                self.chat.set_writable()
            else:
                self.chat.set_read_only(reason or READ_ONLY_REASON)
        return {}

    # ---- tools -----------------------------------------------------------------------------------

    def cmd_tool_settings(self) -> dict[str, Any]:
        from ..tools.settings import ToolSettings

        settings = ToolSettings.from_json(self.settings.get("toolSettings"))
        names = [getattr(t, "name", "") for t in self.chat.agent.state.tools] if self.chat is not None else []
        return {"settings": settings.to_json(), "tools": sorted({*names, *settings.disabled_tools} - {""})}

    async def cmd_set_tool_settings(self, settings: dict[str, Any]) -> dict[str, Any]:
        from ..tools.settings import ToolSettings

        normalized = ToolSettings.from_json(settings).to_json()
        await self._set_setting("toolSettings", normalized)
        if self.chat is not None and not self.chat.streaming:
            await self.chat.install_tools()  # the descriptions say what the tools may do
            self.emit("session_state", self.chat.state())
        return self.cmd_tool_settings()

    # ---- keys -------------------------------------------------------------------------------------

    def _key_request(self, provider: str) -> dict[str, Any]:
        info = provider_info(provider)
        custom = get_custom_provider(provider)
        return {
            "provider": provider,
            "label": info.label,
            "keyUrl": info.key_url,
            "keyHint": info.key_hint,
            "custom": custom is not None,
            "baseUrl": custom.base_url if custom is not None else "",
        }

    def cmd_key_request(self, provider: str) -> dict[str, Any]:
        return self._key_request(provider)

    def _test_model(self, provider: str) -> Model | None:
        if self.chat is not None and self.chat.model.provider == provider:
            return self.chat.model
        return default_model_for(provider)

    async def _test_key(self, provider: str, key: str) -> str | None:
        """None when a minimal request with ``key`` worked, else why it did not."""
        model = self._test_model(provider)
        if model is None:
            return None  # nothing to test against (a provider without models)
        context = Context(messages=[UserMessage(content=KEY_TEST_PROMPT)])
        message = await complete_simple(model, context, SimpleStreamOptions(api_key=key, max_tokens=64))
        if message.stop_reason in ("error", "aborted"):
            label = provider_info(provider).label
            text = friendly_error(message.error_message or "the request failed", label).replace(key, "[redacted key]")
            return self.keys.redact(text)
        return None

    async def cmd_save_key(self, provider: str, key: str, remember: bool = True, test: bool = False) -> dict[str, Any]:
        key = key.strip()
        if not key:
            raise ValueError("Enter a key first.")
        if test:
            problem = await self._test_key(provider, key)
            if problem is not None:
                return {"ok": False, "problem": problem}
        await self.keys.set(provider, key, remember)
        self._after_keys_changed()
        self._keys_changed("set" if remember else "set_tab", provider)
        return {"ok": True, "place": self.keys.place(provider), "tested": test}

    async def cmd_test_key(self, provider: str) -> dict[str, Any]:
        key = self.keys.get(provider)
        if key is None:
            return {"ok": False, "problem": "No key is stored for this provider."}
        problem = await self._test_key(provider, key)
        return {"ok": problem is None, **({"problem": problem} if problem else {})}

    async def cmd_delete_key(self, provider: str) -> dict[str, Any]:
        await self.keys.delete(provider)
        self._after_keys_changed()
        self._keys_changed("delete", provider)
        return {}

    async def cmd_forget_all_keys(self) -> dict[str, Any]:
        await self.keys.forget_all()
        self._after_keys_changed()
        self._keys_changed("forget_all")
        return {}

    def _keys_changed(self, action: str, provider: str | None = None) -> None:
        # The page tells the app's other tabs (web/ui/reliability.js): their key rings must follow.
        self.emit("keys_changed", {"action": action, **({"provider": provider} if provider else {})})

    async def cmd_sync_keys(self, action: str, provider: str | None = None) -> dict[str, Any]:
        """Another tab changed the keys: forget what it forgot (this tab's own tab-only keys
        included), re-read the device keys otherwise. Never returns a key."""
        if action == "forget_all":
            await self.keys.forget_all()
        elif action == "delete" and provider:
            await self.keys.delete(provider)
        elif action in ("set", "set_tab"):  # a tab-only key replaces a device key: re-read
            await self.keys.load()
        self._after_keys_changed()
        return {}

    def cmd_key_status(self) -> dict[str, Any]:
        return {"keys": self.keys.providers(), "providers": self._provider_cards()}

    def _after_keys_changed(self) -> None:
        self.emit("catalog_changed", {})
        if self.chat is not None:
            self.emit("session_state", self.chat.state())

    # ---- custom providers ----------------------------------------------------------------------------

    def cmd_custom_providers(self) -> dict[str, Any]:
        return {
            "providers": [
                {
                    **p.model_dump(mode="json", exclude={"api_key"}),
                    "label": _kind_label(p),
                    "needsKey": p.needs_api_key,
                    "hasKey": self.keys.has(p.name),
                    "models": [m.id for m in _registered_models(p.name)],
                    "manualModels": [spec.id for spec in p.models],
                    # What the form shows of each model (takes images, context window...), and the
                    # user's own descriptions of them, which win over what the server says.
                    "modelDetails": [_model_details(m) for m in _registered_models(p.name)],
                    "modelSpecs": [spec.model_dump(mode="json", exclude_unset=True) for spec in p.models],
                }
                for p in get_custom_providers()
            ],
            "serverTypes": custom_provider_types(),  # the form's choices (WIRE_APIS)
        }

    def _provider_from_args(self, provider: dict[str, Any]) -> CustomProvider:
        base_url = provider.get("baseUrl", provider.get("base_url"))
        # A reason, before pydantic's words. Through the proxy, the page never calls the URL itself:
        # no mixed content then.
        via_proxy = bool(provider.get("useProxy")) and self._proxy_url() is not None
        check_base_url(base_url if isinstance(base_url, str) else "", "" if via_proxy else None)
        if not str(provider.get("name") or "").strip():
            raise ValueError("Give the provider a name.")
        data = {
            k: v
            for k, v in provider.items()
            if k not in ("apiKey", "api_key", "models", "useProxy") and v not in ("", None)
        }
        if provider.get("useProxy"):
            data["useProxy"] = True
        manual = provider.get("models")
        if isinstance(manual, list):
            data["models"] = [m for m in manual if isinstance(m, str | dict) and m]
        try:
            return CustomProvider.model_validate(data)
        except ValidationError as error:  # readable, without pydantic's wording or links
            words = (clean_text(str(e.get("msg", ""))).removeprefix("Value error, ") for e in error.errors())
            problems = "; ".join(words)
            raise ValueError(f"This provider cannot be saved: {problems}") from None

    def cmd_check_base_url(self, url: str, use_proxy: bool = False) -> dict[str, Any]:
        """The custom-provider form's check of a base URL as it is typed (see network.check_base_url)."""
        try:
            check_base_url(url, "" if use_proxy and self._proxy_url() is not None else None)
        except ValueError as error:
            return {"ok": False, "problem": str(error)}
        return {"ok": True}

    async def cmd_discover(self, provider: dict[str, Any], key: str = "") -> dict[str, Any]:
        """Ask a (possibly not yet saved) custom provider's server for its models."""
        custom = self._provider_from_args(provider)
        key = key.strip() or (self.keys.get(custom.name) or "")
        probe = custom.model_copy(update={"api_key": key or None})
        try:
            models = await discover_models(probe, self._discovery_transport(custom))
        except DiscoveryError as error:
            text = discovery_problem(error, custom)
            return {"ok": False, "problem": self.keys.redact(text.replace(key, "[redacted key]") if key else text)}
        return {"ok": True, "models": [m.id for m in models], "modelDetails": [_model_details(m) for m in models]}

    def _discovery_transport(self, custom: CustomProvider) -> ProxyTransport | None:
        proxy = self._proxy_url()
        return ProxyTransport(proxy) if proxy and uses_proxy(custom) else None

    async def cmd_save_custom_provider(
        self, provider: dict[str, Any], key: str = "", original_name: str | None = None, discover: bool = True
    ) -> dict[str, Any]:
        custom = self._provider_from_args(provider)
        if custom.name in get_builtin_providers() or custom.name == DEMO_PROVIDER:
            raise ValueError(f"{custom.name!r} is the name of a built-in provider: choose another name.")
        if original_name and original_name != custom.name and get_custom_provider(custom.name) is not None:
            raise ValueError(f"A provider called {custom.name!r} exists already.")
        models: list[Model] = custom.to_models()
        problem = None
        key = key.strip()
        if discover:
            try:
                probe_key = key or self.keys.get(original_name or custom.name) or None
                discovered = await discover_models(
                    custom.model_copy(update={"api_key": probe_key}), self._discovery_transport(custom)
                )
                # A model the user described wins over the server's word for the fields they set.
                specs = {spec.id: spec for spec in custom.models}
                found = {m.id for m in discovered}
                models = [custom.model_from_spec(specs[m.id], m) if m.id in specs else m for m in discovered] + [
                    m for m in models if m.id not in found
                ]
            except DiscoveryError as error:
                text = discovery_problem(error, custom)
                problem = self.keys.redact(text.replace(key, "[redacted key]") if key else text)
        if not models:
            # Saved without a model, the provider could never be picked: ask for model ids instead.
            listed = "the server could not be asked for its models" if problem else "the server lists no model"
            return {
                "ok": False,
                "needModels": True,
                "problem": f"Not saved: {listed}. Type the model ids to use (comma-separated), then save again."
                + (f" ({problem})" if problem else ""),
            }
        if original_name and original_name != custom.name:
            await self.backend.kv_delete("providers", original_name)
            unregister_custom_provider(original_name)
            old_key = self.keys.get(original_name)
            if old_key and not key:
                key = old_key
            await self.keys.delete(original_name)
        await self._store_custom(custom, models)
        if key:
            await self.keys.set(custom.name, key, True)
        self.emit("catalog_changed", {})
        return {"ok": True, "models": [m.id for m in models], "warning": problem}

    async def _store_custom(self, custom: CustomProvider, models: list[Model]) -> None:
        """Saved (without its key) with its models, and registered for this page."""
        record = {
            "provider": custom.model_dump(mode="json", exclude={"api_key"}),
            "models": [m.model_dump() for m in models],
        }
        await self.backend.kv_put("providers", custom.name, record)
        register_custom_provider(custom, models)

    async def cmd_delete_custom_provider(self, name: str) -> dict[str, Any]:
        await self.backend.kv_delete("providers", name)
        unregister_custom_provider(name)
        await self.keys.delete(name)
        self.emit("catalog_changed", {})
        self._keys_changed("delete", name)
        return {}

    def cmd_export_custom_providers(self, include_keys: bool = False) -> dict[str, Any]:
        """The custom providers as a JSON file's text (see provider_transfer); keys only when asked."""
        providers = get_custom_providers()
        keys = {p.name: key for p in providers if (key := self.keys.get(p.name))} if include_keys else None
        data = export_providers([(p, _registered_models(p.name)) for p in providers], keys)
        return {"json": json.dumps(data, ensure_ascii=False, indent=2), "count": len(providers)}

    async def cmd_import_custom_providers(self, text: str, replace: bool | None = None) -> dict[str, Any]:
        """Import an exported file. Nothing is saved unless the whole file is valid; when providers of
        the same names exist and ``replace`` is not given, the page is told which, to ask the user."""
        reserved = {*get_builtin_providers(), DEMO_PROVIDER}
        try:
            found = parse_provider_file(text, make_provider=self._provider_from_args, reserved=reserved)
        except ProviderFileError as error:
            return {"ok": False, "problem": f"Nothing was imported: {error}"}
        existing = {p.name for p in get_custom_providers()}
        clashes = [item.provider.name for item in found if item.provider.name in existing]
        if clashes and replace is None:
            return {"ok": False, "conflicts": clashes, "count": len(found)}
        plan = plan_import(found, existing, replace=bool(replace))
        for item in [*plan.add, *plan.replace]:
            await self._store_custom(item.provider, item.to_models())
            if item.api_key:
                await self.keys.set(item.provider.name, item.api_key, True)
                self._keys_changed("set", item.provider.name)
        self.emit("catalog_changed", {})
        return {
            "ok": True,
            "summary": plan.summary(),
            "added": [i.provider.name for i in plan.add],
            "replaced": [i.provider.name for i in plan.replace],
            "skipped": plan.skipped,
        }

    def cmd_provider_info(self) -> dict[str, Any]:
        return {
            "providers": {k: {"label": v.label, "keyUrl": v.key_url} for k, v in PROVIDER_INFO.items()},
        }


APP_COMMANDS = tuple(
    method_command(name, method)
    for name, method in (
        ("init", WebApp.cmd_init),
        ("set_setting", WebApp.cmd_set_setting),
        ("answer", WebApp.cmd_answer),
        ("new_session", WebApp.cmd_new_session),
        ("open_session", WebApp.cmd_open_session),
        ("list_sessions", WebApp.cmd_list_sessions),
        ("rename_session", WebApp.cmd_rename_session),
        ("delete_session", WebApp.cmd_delete_session),
        ("export_session", WebApp.cmd_export_session),
        ("import_session", WebApp.cmd_import_session),
        ("send", WebApp.cmd_send),
        ("queue", WebApp.cmd_queue),
        ("unqueue", WebApp.cmd_unqueue),
        ("abort", WebApp.cmd_abort),
        ("compact", WebApp.cmd_compact),
        ("summarize_left_branch", WebApp.cmd_summarize_left_branch),
        ("retry", WebApp.cmd_retry),
        ("edit", WebApp.cmd_edit),
        ("switch_branch", WebApp.cmd_switch_branch),
        ("streaming_snapshot", WebApp.cmd_streaming_snapshot),
        ("set_model", WebApp.cmd_set_model),
        ("set_thinking", WebApp.cmd_set_thinking),
        ("set_system_prompt", WebApp.cmd_set_system_prompt),
        ("search_models", WebApp.cmd_search_models),
        ("check_send", WebApp.cmd_check_send),
        ("panel_message", WebApp.cmd_panel_message),
        ("lock_state", WebApp.cmd_lock_state),
        ("tool_settings", WebApp.cmd_tool_settings),
        ("set_tool_settings", WebApp.cmd_set_tool_settings),
        ("key_request", WebApp.cmd_key_request),
        ("save_key", WebApp.cmd_save_key),
        ("test_key", WebApp.cmd_test_key),
        ("delete_key", WebApp.cmd_delete_key),
        ("forget_all_keys", WebApp.cmd_forget_all_keys),
        ("sync_keys", WebApp.cmd_sync_keys),
        ("key_status", WebApp.cmd_key_status),
        ("custom_providers", WebApp.cmd_custom_providers),
        ("check_base_url", WebApp.cmd_check_base_url),
        ("discover", WebApp.cmd_discover),
        ("save_custom_provider", WebApp.cmd_save_custom_provider),
        ("delete_custom_provider", WebApp.cmd_delete_custom_provider),
        ("export_custom_providers", WebApp.cmd_export_custom_providers),
        ("import_custom_providers", WebApp.cmd_import_custom_providers),
        ("provider_info", WebApp.cmd_provider_info),
    )
)
"""The app's page commands (``py(name, args)``); their parameters are those of the methods."""


def _kind_label(provider: CustomProvider) -> str:
    if provider.kind != "openai-compatible":
        return provider.label
    return {
        "anthropic-messages": "Anthropic-compatible API",
        "openai-responses": "OpenAI Responses-compatible API",
    }.get(provider.api, "OpenAI-compatible API")


def _model_details(model: Model) -> dict[str, Any]:
    """A custom provider's model as its form describes it."""
    return {
        "id": model.id,
        "vision": "image" in model.input,
        "reasoning": model.reasoning,
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
    }


def _registered_models(provider: str) -> list[Model]:
    from ..ai.models import get_registered_models

    return get_registered_models(provider)
