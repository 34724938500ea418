from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from torch.utils.data.dataset import IterableDataset

T = TypeVar("T")


def get_worker_info() -> None:
    """None, as PyTorch answers in the main process: rows are read here, by no worker process."""
    return None


class DataLoader(Generic[T]):
    """The rows of an IterableDataset one at a time, each passed as [row] through `collate_fn`: what
    GuideLLM asks (batch_size=1). The process options (num_workers, prefetch_factor, generator) are
    accepted and unused: rows are made as they are asked for, in this process.
    """

    def __init__(
        self,
        dataset: IterableDataset[Any],
        batch_size: int = 1,
        shuffle: bool | None = None,
        collate_fn: Callable[[list[Any]], T] | None = None,
        **_process_options: Any,
    ) -> None:
        if not isinstance(dataset, IterableDataset):
            raise TypeError("this stand-in for torch's DataLoader reads an IterableDataset only")
        if shuffle:
            # PyTorch's own words for the same refusal.
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option")
        if batch_size != 1:
            raise ValueError(f"this stand-in for torch's DataLoader reads one row at a time, not {batch_size}")
        self.dataset = dataset
        self.collate_fn = collate_fn if collate_fn is not None else (lambda batch: batch)

    def __iter__(self) -> Iterator[T]:
        for row in self.dataset:
            yield self.collate_fn([row])
