from torch.utils import data

__all__ = ["data"]
