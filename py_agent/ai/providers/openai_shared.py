"""What the two OpenAI wire APIs (Chat Completions and Responses) share: one way to build a request."""

from __future__ import annotations

from typing import Any, ClassVar

from ..types import Context, Model, SimpleStreamOptions
from .descriptor import WireApi
from .driver import BuiltRequest
from .headers import join_url, openai_headers


class OpenAIRequestBuilder:
    """``build_request`` of both OpenAI APIs: ``<base URL><request path>``, a bearer key, the
    subclass's payload."""

    descriptor: ClassVar[WireApi]

    def build_payload(self, model: Model, context: Context, options: SimpleStreamOptions) -> dict[str, Any]:
        raise NotImplementedError

    def build_request(
        self, model: Model, context: Context, options: SimpleStreamOptions, api_key: str | None
    ) -> BuiltRequest:
        return BuiltRequest(
            url=join_url(model.base_url, self.descriptor.request_path),
            headers=openai_headers(model, options, api_key),
            payload=self.build_payload(model, context, options),
        )
