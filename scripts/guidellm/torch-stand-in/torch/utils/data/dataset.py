from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class IterableDataset(Generic[T]):
    """A dataset read by iterating it; subclasses define __iter__."""

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")
