"""What the wiki's methods answer are frozen records; ``record["key"]`` reads one field as
``as_dict()`` has it, as the facade's other results do (``knotwork.results``)."""

from __future__ import annotations

__all__ = ["Keyed"]


class Keyed:
    """``record["name"]``: one key of ``as_dict()`` (a ``KeyError`` for any other)."""

    __slots__ = ()

    def as_dict(self) -> dict[str, object]:
        raise NotImplementedError

    def __getitem__(self, key: str) -> object:
        return self.as_dict()[key]
