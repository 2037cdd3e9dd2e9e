"""The REST front end: a FastAPI app over the facade (``knotwork serve``)."""

from .app import DEFAULT_HOST, DEFAULT_PORT, check_bind, create_app, is_loopback, serve
from .errors import STATUS

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "STATUS", "check_bind", "create_app", "is_loopback",
           "serve"]
