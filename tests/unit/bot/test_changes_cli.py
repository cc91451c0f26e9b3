"""`regbot changes` input errors: one line on stderr and a non-zero exit, nothing created."""

from __future__ import annotations

from bot.cli import cli


def test_without_an_index_it_says_how_to_make_one_and_creates_nothing(tmp_path, capsys):
    data_dir = tmp_path / "none"
    code = cli.main(["--data-dir", str(data_dir), "changes", "--json"])
    err = capsys.readouterr().err
    assert code == 3
    assert err.count("\n") == 1 and "regbot ingest" in err
    assert not data_dir.exists()


def test_a_date_that_is_not_yyyy_mm_dd_is_an_input_error(tmp_path, capsys):
    try:
        code = cli.main(["--data-dir", str(tmp_path), "changes", "--since", "last week"])
    except SystemExit as exit_:  # argparse reports the bad option itself
        code = exit_.code
    assert code == 2
    assert "expected a date as YYYY-MM-DD, got 'last week'" in capsys.readouterr().err
