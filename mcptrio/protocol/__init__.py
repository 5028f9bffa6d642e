"""The sans-IO protocol core: wire types, the JSON-RPC codec, the revision table, the step that
fits messages to a revision, and the connection.

Nothing in this package imports trio or performs I/O; a test guards that.
"""

from . import errors as errors
from . import types as types
from .base import UNSET as UNSET
from .base import EmptyResult as EmptyResult
from .base import Notification as Notification
from .base import Request as Request
from .base import RequestId as RequestId
from .base import Result as Result
from .connection import Connection as Connection
from .errors import McpError as McpError
from .revisions import LATEST as LATEST
from .revisions import REVISIONS as REVISIONS
from .revisions import SUPPORTED as SUPPORTED
from .revisions import Revision as Revision
from .revisions import revision_of as revision_of
