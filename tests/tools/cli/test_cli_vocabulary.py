"""The CLI's option vocabularies are the library's own: ``--where`` takes exactly the process
boundaries of :mod:`specpack._core._process` (and ``check`` also ``here``), never ``fork``."""

from __future__ import annotations

import pytest

from specpack._core._process.launch import BOUNDARIES
from specpack._tools._cli.parsers import build_parser


def _where_choices(command: str) -> tuple[str, ...]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    action = next(a for a in sub.choices[command]._actions if a.dest == "where")  # type: ignore[index]
    return tuple(action.choices)


@pytest.mark.parametrize("command", ["verify", "audit"])
def test_where_choices_of_a_rebuilding_command_are_the_process_boundaries(command: str) -> None:
    assert _where_choices(command) == BOUNDARIES


def test_check_where_choices_are_here_and_the_process_boundaries() -> None:
    assert _where_choices("check") == ("here", *BOUNDARIES)


def test_where_fork_is_refused_since_a_fork_proves_nothing_about_a_boundary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["verify", "CartPole-v1", "--where", "fork"])
    assert "invalid choice: 'fork'" in capsys.readouterr().err


def _backend_choices(command: str) -> tuple[str, ...]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    action = next(a for a in sub.choices[command]._actions if a.dest == "backend")  # type: ignore[index]
    return tuple(action.choices)


def test_backend_choices_come_from_the_backend_registry() -> None:
    from specpack._core._backends import BACKENDS, with_trait

    assert _backend_choices("capture") == with_trait("ids") == ("gymnasium", "gym")
    assert _backend_choices("audit") == with_trait("audit") == ("gymnasium", "pettingzoo")
    assert set(with_trait("ids")) | set(with_trait("audit")) <= set(BACKENDS)
