"""Settings → Custom providers in Chromium: the providers are exported to a JSON file (without
their keys unless asked), deleted, and imported back with each model's description, which the
model picker shows; a broken file is refused with its reason; importing over a saved provider asks
first. axe-core finds no serious violation in the states this adds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_a11y import Checker, axe_source
from web_app_helpers import App, open_app

__all__ = ["axe_source"]  # axe-core's script, the fixture of test_a11y.py

KEY = "sk-gateway-FAKE-key-for-the-export-test-3"
PROVIDER = {
    "name": "Gateway",
    "kind": "openai-compatible",
    "api": "openai-completions",
    "baseUrl": "http://127.0.0.1:9/v1",
    "models": [{"id": "gw-vision", "input": ["text", "image"], "contextWindow": 131072, "reasoning": True}],
}


def providers_tab(app: App) -> Any:
    page = app.page
    page.locator("#open-settings").click()
    page.get_by_role("tab", name="Custom providers").click()
    page.get_by_role("button", name="Import providers").wait_for()
    return page.locator("dialog[open]")


def import_file(page: Any, path: Path) -> None:
    with page.expect_file_chooser() as chosen:
        page.get_by_role("button", name="Import providers").click()
    chosen.value.set_files(str(path))


def test_providers_are_exported_and_imported_back_with_their_models(
    browser: Any, base_url: str, axe_source: str, tmp_path: Path
) -> None:
    app = open_app(browser, base_url, viewport={"width": 1400, "height": 900})
    page = app.page
    check = Checker(page, axe_source)
    try:
        app.py("save_custom_provider", provider=PROVIDER, key=KEY, discover=False)
        dialog = providers_tab(app)
        dialog.get_by_text("Include API keys and custom headers (not exported unless ticked)").wait_for()
        check("custom providers with export and import")
        with page.expect_download() as saved:
            dialog.get_by_role("button", name="Export providers").click()
        exported = tmp_path / "providers.json"
        saved.value.save_as(exported)
        text = exported.read_text(encoding="utf-8")
        assert KEY not in text
        model = json.loads(text)["providers"][0]["models"][0]
        assert model["input"] == ["text", "image"] and model["contextWindow"] == 131072 and model["reasoning"]
        dialog.get_by_role("status").filter(has_text="Exported without API keys.").wait_for()

        # Cleared: deleted through the page, gone from the list.
        dialog.get_by_role("button", name="Delete Gateway").click()
        page.locator("dialog[open]").last.get_by_role("button", name="Delete", exact=True).click()
        dialog.get_by_text("No custom provider yet.").wait_for()

        broken = tmp_path / "broken.json"
        broken.write_text('{"format": "py-agent-providers", "version": 1, "providers": [', encoding="utf-8")
        import_file(page, broken)
        dialog.get_by_role("status").filter(has_text="Nothing was imported: This file is not valid JSON").wait_for()
        assert dialog.get_by_text("No custom provider yet.").is_visible()

        import_file(page, exported)
        dialog.get_by_role("status").filter(has_text="1 added, 0 replaced, 0 skipped").wait_for()
        card = dialog.locator(".provider-card", has_text="Gateway")
        card.get_by_text("1 model · needs a key").wait_for()

        # Again: the same name is asked about, and replaced when the user says so.
        import_file(page, exported)
        ask = page.get_by_role("dialog", name="Providers already saved")
        ask.wait_for()
        check("import asks about a provider already saved")
        ask.get_by_role("button", name="Replace").click()
        dialog.get_by_role("status").filter(has_text="0 added, 1 replaced, 0 skipped").wait_for()
        page.keyboard.press("Escape")
        page.locator("dialog[open]").wait_for(state="detached")

        # The picker shows the model as the file described it.
        page.locator("#model-button").click()
        page.locator("#model-search").fill("gw-vision")
        row = page.locator(".model-row", has_text="gw-vision")
        row.get_by_text("131K context").wait_for()
        assert row.locator("[title='Reads images']").count() == 1
        assert row.locator("[title='Can think (reasoning)']").count() == 1
        page.keyboard.press("Escape")
    finally:
        page.context.close()
    assert not check.found, check.report()
    assert not app.page_errors, app.page_errors
