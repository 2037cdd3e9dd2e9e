"""``python -m knotwork``: the same as the ``knotwork`` command."""

from .cli.main import main

main()
