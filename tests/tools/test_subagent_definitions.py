"""Agent definitions: the frontmatter subset, the built-ins, the registry and its persistence.

Plain test functions (no fixtures), so the module also runs inside Pyodide.
"""

from __future__ import annotations

from typing import Any

import pytest

from py_agent.tools.subagent_definitions import (
    AgentDefinition,
    AgentRegistry,
    DefinitionError,
    FrontmatterError,
    builtin_definitions,
    definition_to_markdown,
    format_agent_list,
    load_user_definitions,
    parse_agent_definition,
    parse_frontmatter,
    save_user_definitions,
)

ARTICLE_SCOUT = """---
name: scout
description: Fast codebase recon
tools: read, grep, find, ls, bash
model: claude-haiku-4-5
---
You are a fast codebase scout. Return compact findings with file paths.
"""


def test_the_articles_scout_definition() -> None:
    definition = parse_agent_definition(ARTICLE_SCOUT)
    assert definition.name == "scout"
    assert definition.description == "Fast codebase recon"
    assert definition.tools == ["read", "grep", "find", "ls", "bash"]
    assert definition.model == "claude-haiku-4-5"
    assert definition.system_prompt == "You are a fast codebase scout. Return compact findings with file paths."
    assert definition.source == "user" and definition.status == "active"


def test_frontmatter_subset() -> None:
    text = (
        "\ufeff---\r\n"
        "# a comment\r\n"
        'name: "quoted: name"\r\n'
        "description: >\r\n"
        "  Folded text\r\n"
        "  on two lines\r\n"
        "tools: [read, 'grep', \"ls\"]\r\n"
        "model: anthropic/claude-haiku-4-5   # trailing comment\r\n"
        "notes: |\r\n"
        "  line one\r\n"
        "    indented\r\n"
        "list:\r\n"
        "  - a\r\n"
        "  - b # c\r\n"
        "nested:\r\n"
        "  key: value\r\n"
        "empty:\r\n"
        "nothing: ~\r\n"
        "plain: continues\r\n"
        "  on the next line\r\n"
        "---\r\n"
        "\r\n  Body text.  \r\n\r\n"
    )
    frontmatter, body = parse_frontmatter(text)
    assert frontmatter == {
        "name": "quoted: name",
        "description": "Folded text on two lines\n",
        "tools": ["read", "grep", "ls"],
        "model": "anthropic/claude-haiku-4-5",
        "notes": "line one\n  indented\n",
        "list": ["a", "b"],
        "nested": {"key": "value"},
        "empty": None,
        "nothing": None,
        "plain": "continues on the next line",
    }
    assert body == "Body text."


def test_frontmatter_edges_as_pi() -> None:
    # No frontmatter, or an unterminated one: all body (untrimmed), empty mapping.
    assert parse_frontmatter("  just text \n") == ({}, "  just text \n")
    assert parse_frontmatter("---\nname: x\nno end") == ({}, "---\nname: x\nno end")
    assert parse_frontmatter("---\n---\nbody") == ({}, "body")
    assert parse_frontmatter("---\nname: 'it''s'\n---") == ({"name": "it's"}, "")
    with pytest.raises(FrontmatterError):
        parse_frontmatter("---\njust a line\n---\n")
    with pytest.raises(FrontmatterError):
        parse_frontmatter("---\nname: {a: b}\n---\n")


def test_definitions_need_name_and_description() -> None:
    with pytest.raises(DefinitionError):
        parse_agent_definition("---\nname: x\n---\nbody")
    with pytest.raises(DefinitionError):
        parse_agent_definition("no frontmatter at all")
    with pytest.raises(DefinitionError):
        parse_agent_definition("---\nname: [a, b]\ndescription: d\n---\n")
    definition = parse_agent_definition("---\nname: x\ndescription: d\ntools: ' , '\nmodel: ''\n---\n")
    assert definition.tools is None and definition.model is None and definition.system_prompt == ""


def test_builtins_are_adapted_to_the_page() -> None:
    builtins = {d.name: d for d in builtin_definitions()}
    assert list(builtins) == ["scout", "planner", "reviewer", "worker"]
    for name in ("scout", "planner", "reviewer"):
        assert builtins[name].tools == ["read", "grep", "find", "ls"]  # read-only in-page tools
        assert "bash" not in builtins[name].system_prompt
    assert builtins["worker"].tools is None  # every session tool
    assert all(d.model is None for d in builtins.values())  # the session's model
    assert all(d.source == "builtin" and d.status == "active" for d in builtins.values())
    assert builtins["scout"].system_prompt.startswith("You are a scout.")
    assert builtins["planner"].system_prompt.endswith("The worker agent will execute it verbatim.")


def test_markdown_round_trip() -> None:
    for definition in [
        *builtin_definitions(),
        AgentDefinition(
            name="odd: name",
            description="- starts with a dash # and hash",
            tools=["a b", "c,d"],
            model="p/m",
            system_prompt="Body\n\nwith lines",
        ),
        AgentDefinition(name="null", description="true"),
        AgentDefinition(name="12", description="yes", model="1.5"),
    ]:
        markdown = definition_to_markdown(definition)
        again = parse_agent_definition(markdown, source=definition.source)
        assert again == definition, markdown


def test_registry_add_edit_delete_and_overrides() -> None:
    registry = AgentRegistry()
    changes: list[int] = []
    remove = registry.subscribe(lambda r: changes.append(len(r.user_definitions())))
    assert [d.name for d in registry.all()] == ["scout", "planner", "reviewer", "worker"]

    registry.save("---\nname: tester\ndescription: Writes tests\ntools: read, write\n---\nWrite tests.")
    custom_scout = registry.save(AgentDefinition(name="scout", description="My scout", source="builtin"))
    assert custom_scout.source == "user"  # saved definitions are the user's
    assert [(d.name, d.source) for d in registry.all()] == [
        ("scout", "user"),
        ("planner", "builtin"),
        ("reviewer", "builtin"),
        ("worker", "builtin"),
        ("tester", "user"),
    ]
    assert not registry.is_builtin("scout") and registry.builtin("scout") is not None

    # rename through an edit
    registry.save(AgentDefinition(name="test-writer", description="Writes tests"), previous_name="tester")
    assert "tester" not in registry and "test-writer" in registry

    # deleting the override brings the built-in back; built-ins cannot be deleted
    assert registry.delete("scout") is True
    assert registry.get("scout").source == "builtin"  # type: ignore[union-attr]
    assert registry.delete("scout") is False
    assert changes == [1, 2, 2, 1]
    remove()
    registry.delete("test-writer")
    assert changes == [1, 2, 2, 1]


def test_imported_definitions_are_pending_until_confirmed() -> None:
    registry = AgentRegistry()
    imported = registry.import_markdown("---\nname: helper\ndescription: From a file\n---\nHelp.", origin="helper.md")
    assert imported.status == "pending" and imported.needs_confirmation and imported.origin == "helper.md"
    assert "helper" in registry and "helper" not in [d.name for d in registry.available()]
    registry.confirm("helper")
    assert registry.get("helper").status == "active"  # type: ignore[union-attr]
    assert "helper" in [d.name for d in registry.available()]
    with pytest.raises(KeyError):
        registry.confirm("nobody")
    with pytest.raises(DefinitionError):
        registry.import_markdown("not a definition")


def test_records_round_trip_and_bad_records_are_skipped() -> None:
    registry = AgentRegistry()
    registry.save(AgentDefinition(name="a", description="A", tools=["read"], system_prompt="Do A."))
    registry.import_markdown("---\nname: b\ndescription: B\n---\n", origin="b.md")
    records = registry.to_records()
    assert records[0] == {
        "name": "a",
        "description": "A",
        "tools": ["read"],
        "systemPrompt": "Do A.",
        "source": "user",
        "status": "active",
    }
    assert records[1]["status"] == "pending" and records[1]["origin"] == "b.md"

    other = AgentRegistry(builtins=False)
    problems = other.load_records([*records, {"name": "no description"}, {"name": "", "description": "x"}])
    assert len(problems) == 2
    assert other.user_definitions() == registry.user_definitions()


class FakeKV:
    def __init__(self) -> None:
        self.data: dict[tuple[str, str], Any] = {}

    async def kv_get(self, store: str, key: str) -> Any:
        return self.data.get((store, key))

    async def kv_put(self, store: str, key: str, value: Any) -> None:
        self.data[(store, key)] = value


async def test_persistence_over_a_key_value_backend() -> None:
    backend = FakeKV()
    registry = AgentRegistry()
    assert await load_user_definitions(backend, registry) == []
    registry.save(AgentDefinition(name="mine", description="Mine"))
    await save_user_definitions(backend, registry)
    assert backend.data[("settings", "subagent.agents")][0]["name"] == "mine"
    restored = AgentRegistry()
    assert await load_user_definitions(backend, restored) == []
    assert restored.get("mine") == registry.get("mine")
    backend.data[("settings", "subagent.agents")] = "garbage"
    assert await load_user_definitions(backend, AgentRegistry()) == ["Stored agent definitions are not a list; ignored"]


def test_format_agent_list_as_pi() -> None:
    agents = builtin_definitions()
    text, remaining = format_agent_list(agents, 2)
    assert text == (
        "scout (builtin): Fast workspace recon that returns compressed context for handoff to other agents; "
        "planner (builtin): Creates implementation plans from context and requirements"
    )
    assert remaining == 2
    assert format_agent_list([], 5) == ("none", 0)
