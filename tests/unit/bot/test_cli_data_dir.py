"""Which data dir a command uses: `--data-dir`, then REGBOT_DATA_DIR, then the nearest `.regbot` folder (the demo's
index, found from anywhere in the clone), then the per-user dir; and a missing index names every place looked in."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bot.cli import cli, common
from bot.config import Settings


def record_build(settings: Settings):
    raise common.CliError(f"built from {settings.data_dir}", common.EXIT_FAILED)


def write_index(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(data_dir / "index.sqlite") as db:
        db.execute("CREATE TABLE chunks (chunk_id TEXT)")
        db.execute("INSERT INTO chunks VALUES ('1')")


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A per-user data dir under tmp_path (platformdirs reads XDG_DATA_HOME) and no REGBOT_DATA_DIR."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("REGBOT_DATA_DIR", raising=False)
    return tmp_path / "xdg" / "regbot"


def ask(argv: list[str], capsys) -> tuple[int, str]:
    code = cli.main(argv, build_components=record_build)
    return code, capsys.readouterr().err


def test_the_demos_index_is_found_from_a_subfolder_of_the_clone(tmp_path, home, monkeypatch, capsys):
    clone = tmp_path / "clone"
    write_index(clone / ".regbot")
    (clone / "docs").mkdir()
    monkeypatch.chdir(clone / "docs")
    assert Settings().data_dir == clone / ".regbot"
    code, err = ask(["ask", "연차는 며칠이야?"], capsys)
    assert (code, err.strip()) == (common.EXIT_FAILED, f"regbot: built from {clone / '.regbot'}")


def test_without_a_project_folder_the_per_user_dir_is_used(tmp_path, home, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert Settings().data_dir == home


def test_no_index_names_every_place_looked_in(tmp_path, home, monkeypatch, capsys):
    here = tmp_path / "work"
    here.mkdir()
    monkeypatch.chdir(here)
    code, err = ask(["search", "연차"], capsys)
    assert code == common.EXIT_NO_INDEX
    assert len(err.splitlines()) == 1
    for place in (here / ".regbot", tmp_path / ".regbot", Path("/.regbot"), home):
        assert str(place) in err


def test_the_flag_wins_over_the_environment(tmp_path, home, monkeypatch, capsys):
    write_index(tmp_path / "from-env")
    write_index(tmp_path / "from-flag")
    monkeypatch.setenv("REGBOT_DATA_DIR", str(tmp_path / "from-env"))
    _, err = ask(["--data-dir", str(tmp_path / "from-flag"), "ask", "연차는 며칠이야?"], capsys)
    assert err.strip() == f"regbot: built from {tmp_path / 'from-flag'}"
    _, err = ask(["ask", "연차는 며칠이야?"], capsys)
    assert err.strip() == f"regbot: built from {tmp_path / 'from-env'}"


def test_the_environment_wins_over_the_project_folder(tmp_path, home, monkeypatch, capsys):
    write_index(tmp_path / ".regbot")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REGBOT_DATA_DIR", str(tmp_path / "elsewhere"))
    code, err = ask(["ask", "연차는 며칠이야?"], capsys)
    assert code == common.EXIT_NO_INDEX
    assert f"{tmp_path / 'elsewhere'} (REGBOT_DATA_DIR)" in err
