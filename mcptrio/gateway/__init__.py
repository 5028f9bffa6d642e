"""The gateway: one MCP server fronting many (see :mod:`.gateway` for the actor tree).

- :mod:`.gateway`: :class:`Gateway`, a :class:`~mcptrio.Server` whose contents come from
  upstream servers;
- :mod:`.upstream`: :class:`Upstream` (one upstream: target, namespace, filters, renames) and
  the actor that keeps it connected, :class:`Backoff`; :mod:`.in_process`, an upstream that is
  a ``Server`` in this process (mounted);
- :mod:`.parked`: a handshake-era upstream's questions put to a stateless-era client;
- :mod:`.routing`: which downstream client answers an upstream's sampling, elicitation and
  roots requests;
- :mod:`.toolsets`: :class:`Toolset`, named groups of upstream tools each client switches;
- :mod:`.tool_search`: :class:`ToolSearch`, ``search_tools`` and ``call_tool`` listed instead
  of the upstream tools;
- :mod:`.transforms`: :class:`ToolTransform`, an upstream tool re-described, hidden or with
  arguments fixed;
- :mod:`.config`: the ``mcpServers`` JSON file (:mod:`.config_entries`: one entry checked);
- :mod:`.serve`: :func:`serve_gateway` and :func:`serve_gateway_config`, what
  ``python -m mcptrio.gateway gateway.json`` runs.
"""

from .config import ConfigError as ConfigError
from .config import GatewayOptions as GatewayOptions
from .config import load_config as load_config
from .config import load_gateway_options as load_gateway_options
from .config import parse_config as parse_config
from .config import parse_gateway_options as parse_gateway_options
from .gateway import Gateway as Gateway
from .in_process import InProcessUpstream as InProcessUpstream
from .serve import serve_gateway as serve_gateway
from .serve import serve_gateway_config as serve_gateway_config
from .tool_search import ToolSearch as ToolSearch
from .toolsets import Toolset as Toolset
from .transforms import ToolTransform as ToolTransform
from .upstream import Backoff as Backoff
from .upstream import Upstream as Upstream
from .upstream import UpstreamConnection as UpstreamConnection
