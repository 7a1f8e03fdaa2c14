"""``ember.utils.tensorboard``: ``SummaryWriter`` with torch's API, writing TensorBoard event
files through the ``tensorboardX`` package."""
try:
    import tensorboardX  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("ember.utils.tensorboard requires the tensorboardX package "
                      "(pip install tensorboardX protobuf)") from e

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
