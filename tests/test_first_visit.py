"""What a first visitor and a host need, without a browser: the LICENSE matches pyproject.toml,
`build.py serve --host` binds where it says and prints the network URL, the web app manifest
(web/app.webmanifest) is valid and its icons are the PNGs the build draws, and the README starts
with the first chat and the facts a host needs. The manifest in a browser: tests/browser/test_phone.py."""

from __future__ import annotations

import json
import re
import struct
import tomllib
from pathlib import Path

import pytest

from buildsys import commands, serve
from buildsys.icons import ICONS, write_icons

ROOT = Path(__file__).resolve().parent.parent


def test_license_matches_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"  # an SPDX expression (PEP 639)
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


@pytest.mark.parametrize(
    ("args", "host", "port"),
    [
        ([], "127.0.0.1", 8000),
        (["--host"], "0.0.0.0", 8000),
        (["--host", "--port", "9000"], "0.0.0.0", 9000),
        (["--port", "9000", "--host"], "0.0.0.0", 9000),
        (["--host", "192.168.1.20"], "192.168.1.20", 8000),
        (["--host=::1", "--port=8123"], "::1", 8123),
    ],
)
def test_serve_host_arguments(args: list[str], host: str, port: int) -> None:
    options = commands.parse_serve_args(args)
    assert (options.host, options.port) == (host, port)


def test_serve_host_rejects_a_bad_port() -> None:
    with pytest.raises(SystemExit):
        commands.parse_serve_args(["--host", "--port", "eighty"])


def test_serve_urls_name_the_network_address() -> None:
    assert serve.serve_urls("0.0.0.0", 8000, "192.168.1.20") == [
        "http://127.0.0.1:8000/",
        "http://192.168.1.20:8000/",
    ]
    assert serve.serve_urls("0.0.0.0", 8000, None) == ["http://127.0.0.1:8000/"]
    assert serve.serve_urls("127.0.0.1", 8001, None) == ["http://127.0.0.1:8001/"]
    assert serve.serve_urls("::1", 8002, None) == ["http://[::1]:8002/"]
    lan = serve.lan_address()
    assert lan is None or (re.fullmatch(r"\d+\.\d+\.\d+\.\d+", lan) and not lan.startswith("127."))


def test_serve_binds_the_host_it_was_given(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bound: list[tuple[str, int]] = []

    class FakeServer:
        def __init__(self, address: tuple[str, int], handler: object) -> None:
            bound.append(address)
            self.server_address = (address[0], address[1] or 4321)

        def serve_forever(self) -> None:
            raise KeyboardInterrupt

        def server_close(self) -> None:
            pass

    monkeypatch.setattr(serve, "build_site", lambda: None)
    monkeypatch.setattr(serve.http.server, "ThreadingHTTPServer", FakeServer)
    monkeypatch.setattr(serve, "lan_address", lambda: "10.1.2.3")
    assert commands.main(["serve", "--host", "--port", "0"]) == 0
    out = capsys.readouterr().out
    assert bound == [("0.0.0.0", 0)]
    assert "http://127.0.0.1:4321/" in out and "http://10.1.2.3:4321/" in out and "https" in out
    assert commands.main(["serve", "--port", "0"]) == 0
    assert bound[-1] == ("127.0.0.1", 0)
    assert "10.1.2.3" not in capsys.readouterr().out


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_manifest_lists_the_icons_the_build_draws(tmp_path: Path) -> None:
    manifest = json.loads((ROOT / "web" / "app.webmanifest").read_text(encoding="utf-8"))
    assert manifest["name"] and manifest["short_name"]
    assert manifest["display"] == "standalone"
    assert manifest["start_url"] == manifest["scope"] == "./"  # relative: the site works from any folder
    assert re.fullmatch(r"#[0-9a-f]{6}", manifest["theme_color"])
    drawn = {rel: size for rel, size, _ in ICONS}
    assert write_icons(tmp_path) == list(drawn)
    for icon in manifest["icons"]:
        if icon["type"] != "image/png":
            assert (ROOT / "web" / icon["src"]).exists(), icon
            continue
        assert icon["src"] in drawn, icon
        size = drawn[icon["src"]]
        assert icon["sizes"] == f"{size}x{size}"
        assert png_size((tmp_path / icon["src"]).read_bytes()) == (size, size)
    purposes = {(icon["sizes"], icon.get("purpose", "any")) for icon in manifest["icons"]}
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= purposes
    index = (ROOT / "web" / "index.html").read_text(encoding="utf-8")
    assert '<link rel="manifest" href="app.webmanifest">' in index


def test_the_readme_starts_with_the_first_chat_and_the_hosting_facts() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = readme[: readme.index("## Two commands")] if "## Two commands" in readme else readme
    assert "](docs/screenshot.png)" in head and (ROOT / "docs" / "screenshot.png").exists()
    for needed in ("OLLAMA_ORIGINS", "LM Studio", "CORS", "proxy", "secure context", "build.py serve --host"):
        assert needed in head, needed
    # The providers' table names every built-in provider of the catalogue.
    from py_agent.app.catalog import PROVIDER_INFO

    table = head[head.index("| Provider") :]
    labels = [info.label for provider, info in PROVIDER_INFO.items() if provider != "demo"]
    assert len(labels) >= 9
    for label in labels:
        assert f"| {label} |" in table, label
