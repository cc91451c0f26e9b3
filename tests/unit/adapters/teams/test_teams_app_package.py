"""The Teams app package: manifest 1.22 with the bot, its scopes and commands, and the two icons."""

from __future__ import annotations

import importlib.util
import json
import struct
import zipfile
import zlib
from pathlib import Path
from types import ModuleType

import pytest

MANIFESTS = Path(__file__).resolve().parents[4] / "manifests" / "teams"
APP_ID = "11111111-2222-3333-4444-555555555555"


def load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"teams_{name}", MANIFESTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rgba_pixels(png: bytes) -> list[tuple[int, ...]]:
    """Pixels of an unfiltered 8-bit RGBA PNG as written by icons.py."""
    width, height = struct.unpack(">II", png[16:24])
    position, idat = 8, b""
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        kind = png[position + 4 : position + 8]
        if kind == b"IDAT":
            idat += png[position + 8 : position + 8 + length]
        position += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + 4 * width
    assert all(raw[row * stride] == 0 for row in range(height))
    return [
        tuple(raw[row * stride + 1 + 4 * x : row * stride + 5 + 4 * x]) for row in range(height) for x in range(width)
    ]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("teams") / "regbot-teams.zip"
    load_script("build_package").build_package(app_id=APP_ID, version="1.2.3", out=out)
    return zipfile.ZipFile(out)


class TestAppPackage:
    def test_zip_holds_the_manifest_and_icons_at_its_root(self, package: zipfile.ZipFile) -> None:
        assert sorted(package.namelist()) == ["color.png", "manifest.json", "outline.png"]

    def test_manifest_registers_the_bot_in_chats_teams_and_group_chats(self, package: zipfile.ZipFile) -> None:
        manifest = json.loads(package.read("manifest.json"))

        assert manifest["manifestVersion"] == "1.22"
        assert (manifest["id"], manifest["version"]) == (APP_ID, "1.2.3")
        [bot] = manifest["bots"]
        assert bot["botId"] == APP_ID
        assert sorted(bot["scopes"]) == ["groupChat", "personal", "team"]
        titles = [c["title"] for c in bot["commandLists"][0]["commands"]]
        assert titles[0] == "규정" and "제20조" in bot["commandLists"][0]["commands"][0]["description"]
        assert len(manifest["name"]["short"]) <= 30 and len(manifest["description"]["short"]) <= 80

    def test_icons_have_the_sizes_teams_requires(self, package: zipfile.ZipFile) -> None:
        icons = load_script("icons")

        assert icons.png_size(package.read("color.png")) == (192, 192)
        assert icons.png_size(package.read("outline.png")) == (32, 32)

    def test_outline_icon_is_white_on_transparent(self, package: zipfile.ZipFile) -> None:
        pixels = rgba_pixels(package.read("outline.png"))

        assert {p for p in pixels if p[3] != 0} == {(255, 255, 255, 255)}
        assert sum(p[3] == 0 for p in pixels) > len(pixels) // 2

    @pytest.mark.parametrize(
        ("arguments", "complaint"),
        [({"app_id": "not-a-guid"}, "--app-id"), ({"app_id": APP_ID, "version": "1.0"}, "--version")],
    )
    def test_bad_arguments_are_refused_with_the_fix(
        self, tmp_path: Path, arguments: dict[str, str], complaint: str
    ) -> None:
        builder = load_script("build_package")

        with pytest.raises(builder.PackageError, match=complaint):
            builder.build_package(out=tmp_path / "x.zip", **arguments)
