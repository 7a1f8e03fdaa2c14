"""``ember.nn.functional``: the functions behind the layers, one file per family."""
from .activation import *  # noqa: F403
from .softmax_family import *  # noqa: F403
from .loss import *  # noqa: F403
from .linear import *  # noqa: F403
from .dropout import *  # noqa: F403
from .embedding import *  # noqa: F403
from .misc import *  # noqa: F403
from .conv import *  # noqa: F403
from .pooling import *  # noqa: F403
from .fractional_pooling import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .vision import *  # noqa: F403
from .sampling import *  # noqa: F403
from .distance import *  # noqa: F403
from .attention import *  # noqa: F403
from .ctc import *  # noqa: F403
