"""``ember.nn``: Module, Parameter, layers, functional, init and utils."""
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F403
from . import functional, init, utils  # noqa: F401
from . import parallel  # noqa: F401
from . import attention  # noqa: F401  (sdpa_kernel, SDPBackend)
from . import grad  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from ._factory_kwargs import factory_kwargs  # noqa: F401
