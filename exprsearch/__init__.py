"""exprsearch: discover interpretable closed-form performance laws from measurements."""

__version__ = "0.1.0"

from .errors import ExprsearchError  # noqa: E402
from .law import Law, load  # noqa: E402
from .search import Result, SearchSettings, search  # noqa: E402

__all__ = ["ExprsearchError", "Law", "Result", "SearchSettings", "__version__", "load", "search"]
