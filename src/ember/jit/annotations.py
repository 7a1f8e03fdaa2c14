"""The typing names TorchScript annotations use (``torch.jit.annotations``), for code that
imports them from here."""
from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: UP035 (torch's names)

from ._script import Final

__all__ = ["Any", "Dict", "List", "Optional", "Tuple", "Union", "Final"]
