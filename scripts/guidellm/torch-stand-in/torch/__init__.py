"""The part of PyTorch that GuideLLM 0.8 imports to run an HTTP benchmark, without PyTorch.

PyPI's PyTorch for Linux pulls 5 GB of CUDA wheels, for no use here: GuideLLM only feeds its request
rows through torch.utils.data.DataLoader. This stand-in does that in the calling process, which is what
PyTorch's DataLoader yields too with one worker (GuideLLM's default) over an IterableDataset.
It has no distribution metadata nor version, so transformers does not take it for PyTorch; datasets
would, and is told otherwise by USE_TORCH=0 (scripts/test-tools.sh runs GuideLLM with it).
"""

from torch import utils


class Generator:
    """A seed holder: DataLoader only consults its generator to shuffle, which an IterableDataset refuses."""

    def __init__(self) -> None:
        self.seed = 0

    def manual_seed(self, seed: int) -> "Generator":
        self.seed = seed
        return self


__all__ = ["Generator", "utils"]
