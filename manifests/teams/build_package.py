"""Builds the Teams app package (a zip of manifest.json, color.png and outline.png) for sideloading.

    python manifests/teams/build_package.py --app-id <MICROSOFT_APP_ID> [--teams-app-id GUID]
        [--version 1.0.1] [--out build/regbot-teams.zip]

`manifest.json` here is a template: `${{MICROSOFT_APP_ID}}` becomes the bot's Azure app id (the bot
registration) and `${{TEAMS_APP_ID}}` the Teams app's own id (defaults to the bot's). Bump `--version`
on every re-upload: Teams ignores a package whose version it has already seen. The icons are redrawn
when missing (see icons.py). The checks below are the limits Teams' validator rejects most often.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from icons import png_size, write_icons  # noqa: E402  (a script beside this one, not a package)

GUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+$")
ICON_SIZES = {"color": (192, 192), "outline": (32, 32)}


class PackageError(ValueError):
    """The manifest or its icons would be rejected by Teams; the message says what to fix."""


def render_manifest(template: str, *, app_id: str, teams_app_id: str, version: str) -> dict[str, Any]:
    """The manifest with ids and version filled in, checked against the common Teams limits."""
    for name, value in (("--app-id", app_id), ("--teams-app-id", teams_app_id)):
        if not GUID.match(value):
            raise PackageError(f"{name} must be a GUID such as 00000000-0000-0000-0000-000000000000, got {value!r}")
    if not SEMVER.match(version):
        raise PackageError(f"--version must look like 1.0.0, got {version!r}")
    text = template.replace("${{MICROSOFT_APP_ID}}", app_id).replace("${{TEAMS_APP_ID}}", teams_app_id)
    left = re.findall(r"\$\{\{(\w+)\}\}", text)
    if left:
        raise PackageError(f"unfilled placeholders in manifest.json: {', '.join(sorted(set(left)))}")
    manifest = json.loads(text)
    manifest["version"] = version
    check_manifest(manifest)
    return manifest


def check_manifest(manifest: dict[str, Any]) -> None:
    """Raise PackageError for the limits of manifest schema 1.22 that matter for this bot."""
    missing = [
        k
        for k in ("manifestVersion", "version", "id", "developer", "name", "description", "icons", "accentColor")
        if k not in manifest
    ]
    if missing:
        raise PackageError(f"manifest.json lacks {', '.join(missing)}")
    if len(manifest["name"]["short"]) > 30 or len(manifest["name"].get("full", "")) > 100:
        raise PackageError("name.short must be ≤ 30 and name.full ≤ 100 characters")
    if len(manifest["description"]["short"]) > 80 or len(manifest["description"]["full"]) > 4000:
        raise PackageError("description.short must be ≤ 80 and description.full ≤ 4000 characters")
    if len(manifest["developer"]["name"]) > 32:
        raise PackageError("developer.name must be ≤ 32 characters")
    for bot in manifest.get("bots", []):
        if not set(bot["scopes"]) <= {"personal", "team", "groupChat", "copilot"}:
            raise PackageError(f"unknown bot scopes: {bot['scopes']}")
        for command_list in bot.get("commandLists", []):
            if len(command_list["commands"]) > 10:
                raise PackageError("a command list holds at most 10 commands in manifest 1.22")


def check_icon(path: Path, kind: str) -> None:
    size = png_size(path.read_bytes())
    if size != ICON_SIZES[kind]:
        raise PackageError(f"{path.name} is {size[0]}×{size[1]}; Teams wants {ICON_SIZES[kind]} for the {kind} icon")


def build_package(
    *,
    app_id: str,
    teams_app_id: str = "",
    version: str = "1.0.0",
    out: Path = HERE.parents[1] / "build" / "regbot-teams.zip",
    source: Path = HERE,
) -> Path:
    """Write the zip Teams accepts for upload (files at the zip's root) and return its path."""
    manifest = render_manifest(
        (source / "manifest.json").read_text(encoding="utf-8"),
        app_id=app_id,
        teams_app_id=teams_app_id or app_id,
        version=version,
    )
    icons = {kind: source / manifest["icons"][kind] for kind in ICON_SIZES}
    if not all(path.exists() for path in icons.values()):
        write_icons(source)
    for kind, path in icons.items():
        check_icon(path, kind)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as package:
        package.writestr("manifest.json", json.dumps(manifest, ensure_ascii=False, indent=2))
        for path in icons.values():
            package.write(path, arcname=path.name)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--app-id",
        default=os.environ.get("MICROSOFT_APP_ID", ""),
        help="the Azure Bot's Microsoft App ID (default: $MICROSOFT_APP_ID)",
    )
    parser.add_argument("--teams-app-id", default="", help="the Teams app id (default: the bot's app id)")
    parser.add_argument("--version", default="1.0.0", help="the app version; bump it on every upload")
    parser.add_argument("--out", type=Path, default=HERE.parents[1] / "build" / "regbot-teams.zip")
    args = parser.parse_args(argv)
    try:
        path = build_package(app_id=args.app_id, teams_app_id=args.teams_app_id, version=args.version, out=args.out)
    except PackageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
