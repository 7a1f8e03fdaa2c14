"""``ember.utils.benchmark``: timing statements (``Timer``), their results (``Measurement``)
and tables comparing them (``Compare``), as torch.utils.benchmark. ember's Timer times Python
statements; the fuzzers and Callgrind instruction counts are not there."""
from .utils.common import *  # noqa: F403
from .utils.timer import *  # noqa: F403
from .utils.compare import *  # noqa: F403
