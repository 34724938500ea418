from torch.utils.data.dataloader import DataLoader, get_worker_info
from torch.utils.data.dataset import IterableDataset

__all__ = ["DataLoader", "IterableDataset", "get_worker_info"]
