"""``ember.utils``."""
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
from . import dlpack  # noqa: F401
from . import hooks  # noqa: F401
from . import benchmark  # noqa: F401
from . import flop_counter  # noqa: F401
from . import model_zoo  # noqa: F401
