"""``ember.optim``: optimizers and learning-rate schedulers, as ``torch.optim``."""
from . import lr_scheduler  # noqa: F401
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "ASGD", "LBFGS", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "lr_scheduler"]


def __getattr__(name):
    if name == "swa_utils":
        import importlib
        return importlib.import_module(".swa_utils", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
