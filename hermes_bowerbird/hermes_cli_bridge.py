"""`hermes bowerbird ...`: hands the arguments Hermes parsed to the same click commands as `bowerbird ...`."""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence
from typing import Any

log = logging.getLogger(__name__)

_HELP = """Examples:
  hermes bowerbird status
  hermes bowerbird recall "which database did we pick" --explain
  hermes bowerbird remember "Deploys happen on Fridays" --type procedure
  hermes bowerbird --json bulletin
Every `bowerbird` command works here; `hermes bowerbird help` lists them."""


def register_cli(subparser: argparse.ArgumentParser) -> None:
    """Called by Hermes with the parser of `hermes bowerbird`: take the rest of the line and route it to click."""
    subparser.description = (subparser.description or "") + "\n\n" + _HELP
    subparser.formatter_class = argparse.RawDescriptionHelpFormatter
    subparser.add_argument(
        "--json", dest="bowerbird_json", action="store_true", help="print a JSON envelope"
    )
    subparser.add_argument(
        "--user", dest="bowerbird_user", metavar="ID", help="a gateway user's scope"
    )
    subparser.add_argument(
        "--db", dest="bowerbird_db", metavar="PATH", help="another database file"
    )
    subparser.add_argument(
        "bowerbird_args",
        nargs=argparse.REMAINDER,
        metavar="COMMAND ...",
        help="a bowerbird command and its options",
    )
    subparser.set_defaults(func=bowerbird_command)


def bowerbird_command(args: argparse.Namespace) -> int:
    """Run one bowerbird command inside the Hermes CLI (Hermes ignores return values, so failures exit)."""
    argv = list(getattr(args, "bowerbird_args", None) or [])
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv or argv[0] == "help":
        argv = [*argv[1:], "--help"]
    options: list[str] = ["--json"] if getattr(args, "bowerbird_json", False) else []
    for flag, dest in (("--user", "bowerbird_user"), ("--db", "bowerbird_db")):
        value = getattr(args, dest, None)
        if value:
            options += [flag, str(value)]
    code = run([*options, *argv], hermes_home=_hermes_home())
    if code:
        raise SystemExit(code)
    return 0


def run(argv: Sequence[str], *, hermes_home: str | None = None) -> int:
    """Invoke the click group without letting it exit the host process."""
    import click

    from .cli import cli

    argv = list(argv)
    if hermes_home and "--hermes-home" not in argv:
        argv = ["--hermes-home", hermes_home, *argv]
    try:
        result = cli.main(args=argv, prog_name="hermes bowerbird", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except SystemExit as exc:  # our own commands exit non-zero on failure
        return int(exc.code) if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return result if isinstance(result, int) else 0


def _hermes_home() -> str | None:
    """The profile's home as Hermes resolved it (profiles override HERMES_HOME), else the environment's."""
    try:
        from hermes_constants import get_hermes_home
    except ImportError:
        return os.environ.get("HERMES_HOME")
    home: Any = get_hermes_home()
    return str(home) if home else None
