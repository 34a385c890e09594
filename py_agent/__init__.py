"""py-agent: pi's agent core, rebuilt in Python for CPython and Pyodide.

``Agent`` and the loop live in :mod:`py_agent.core`; message types, the stream protocol, the
provider registry and the faux provider in :mod:`py_agent.ai`.
"""

__version__ = "0.1.0"

from .ai import (
    AbortController,
    AbortSignal,
    AssistantMessage,
    AssistantMessageEventStream,
    Context,
    ImageContent,
    Model,
    SimpleStreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    stream_simple,
)
from .ai.transport import set_default_transport_factory as _set_default_transport_factory
from .core import (
    Agent,
    AgentContext,
    AgentEvent,
    AgentLoopConfig,
    AgentState,
    AgentTool,
    AgentToolResult,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
)
from .transports import default_transport as _default_transport

# The composition root: "automatic" HTTP is the platform's transport. Wired here, the one module
# above every layer, so that py_agent.ai never imports py_agent.transports.
_set_default_transport_factory(_default_transport)

__all__ = [
    "AbortController",
    "AbortSignal",
    "Agent",
    "AgentContext",
    "AgentEvent",
    "AgentLoopConfig",
    "AgentState",
    "AgentTool",
    "AgentToolResult",
    "AssistantMessage",
    "AssistantMessageEventStream",
    "Context",
    "ImageContent",
    "Model",
    "SimpleStreamOptions",
    "TextContent",
    "ThinkingContent",
    "ToolCall",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "__version__",
    "agent_loop",
    "agent_loop_continue",
    "run_agent_loop",
    "run_agent_loop_continue",
    "stream_simple",
]
