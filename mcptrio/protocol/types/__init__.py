"""Wire types of every MCP revision mcptrio speaks (2024-11-05 to 2026-07-28).

One set of msgspec structs covers all of them: members that only later revisions define
are optional (``None`` when absent, so that results read as plain Python), so a struct decodes
any of them and encodes only what the caller set. The modules, by concept:

- :mod:`.common`: ``BaseMetadata``, ``Described``, annotations, icons, pagination bases,
  ``Cursor``.
- :mod:`.content`: content blocks (tagged on ``type``).
- :mod:`.lifecycle`: implementation info, capabilities, ``initialize``, ``ping``, cancellation,
  progress.
- :mod:`.tools`, :mod:`.resources` (with resource contents and links), :mod:`.prompts`,
  :mod:`.completion`, :mod:`.logging`: the server features.
- :mod:`.sampling`, :mod:`.elicitation`, :mod:`.roots`: the client features.
- :mod:`.tasks`: tasks (2025-11-25).
- :mod:`.discovery`, :mod:`.input_required`, :mod:`.subscriptions`: the stateless era's
  ``server/discover``, input-required results and ``subscriptions/listen`` (2026-07-28).

A ``...Request`` struct is the ``params`` of its request and knows its ``METHOD`` and
``RESULT``; a ``...Notification`` struct is the ``params`` of its notification. The base classes
of :mod:`mcptrio.protocol.base` are re-exported here too. The method registry is
:mod:`mcptrio.protocol.methods`.
"""

from ..base import UNSET as UNSET
from ..base import EmptyResult as EmptyResult
from ..base import HasMeta as HasMeta
from ..base import Meta as Meta
from ..base import Notification as Notification
from ..base import ProgressToken as ProgressToken
from ..base import Request as Request
from ..base import RequestId as RequestId
from ..base import Result as Result
from ..base import UnsetType as UnsetType
from ..base import WireStruct as WireStruct
from ..base import meta_field as meta_field
from .common import Annotations as Annotations
from .common import BaseMetadata as BaseMetadata
from .common import CacheablePaginatedResult as CacheablePaginatedResult
from .common import CacheScope as CacheScope
from .common import Cursor as Cursor
from .common import Described as Described
from .common import Icon as Icon
from .common import PaginatedRequest as PaginatedRequest
from .common import PaginatedResult as PaginatedResult
from .common import Role as Role
from .completion import CompleteArgument as CompleteArgument
from .completion import CompleteContext as CompleteContext
from .completion import CompleteRequest as CompleteRequest
from .completion import CompleteResult as CompleteResult
from .completion import Completion as Completion
from .completion import CompletionReference as CompletionReference
from .completion import PromptReference as PromptReference
from .completion import ResourceReference as ResourceReference
from .completion import ResourceTemplateReference as ResourceTemplateReference
from .content import AnnotatedBlock as AnnotatedBlock
from .content import AudioContent as AudioContent
from .content import ContentBlock as ContentBlock
from .content import EmbeddedResource as EmbeddedResource
from .content import ImageContent as ImageContent
from .content import SamplingContent as SamplingContent
from .content import SamplingMessageContentBlock as SamplingMessageContentBlock
from .content import TextContent as TextContent
from .content import ToolResultContent as ToolResultContent
from .content import ToolUseContent as ToolUseContent
from .discovery import DiscoverRequest as DiscoverRequest
from .discovery import DiscoverResult as DiscoverResult
from .elicitation import BooleanSchema as BooleanSchema
from .elicitation import ElicitAction as ElicitAction
from .elicitation import ElicitationCompleteNotification as ElicitationCompleteNotification
from .elicitation import ElicitRequest as ElicitRequest
from .elicitation import ElicitResult as ElicitResult
from .elicitation import ElicitValue as ElicitValue
from .elicitation import EnumOption as EnumOption
from .elicitation import EnumSchema as EnumSchema
from .elicitation import LegacyTitledEnumSchema as LegacyTitledEnumSchema
from .elicitation import MultiSelectEnumSchema as MultiSelectEnumSchema
from .elicitation import NumberSchema as NumberSchema
from .elicitation import PrimitiveSchemaDefinition as PrimitiveSchemaDefinition
from .elicitation import SingleSelectEnumSchema as SingleSelectEnumSchema
from .elicitation import StringSchema as StringSchema
from .elicitation import TitledEnumItems as TitledEnumItems
from .elicitation import TitledMultiSelectEnumSchema as TitledMultiSelectEnumSchema
from .elicitation import TitledSingleSelectEnumSchema as TitledSingleSelectEnumSchema
from .elicitation import UntitledEnumItems as UntitledEnumItems
from .elicitation import UntitledMultiSelectEnumSchema as UntitledMultiSelectEnumSchema
from .elicitation import UntitledSingleSelectEnumSchema as UntitledSingleSelectEnumSchema
from .elicitation import URLElicitationRequiredErrorData as URLElicitationRequiredErrorData
from .elicitation import parse_primitive_schema as parse_primitive_schema
from .elicitation import requested_schema as requested_schema
from .elicitation import requested_schema_properties as requested_schema_properties
from .input_required import INPUT_REQUEST_METHODS as INPUT_REQUEST_METHODS
from .input_required import INPUT_REQUIRED as INPUT_REQUIRED
from .input_required import RESULT_COMPLETE as RESULT_COMPLETE
from .input_required import InputRequest as InputRequest
from .input_required import InputRequiredResult as InputRequiredResult
from .input_required import InputResponseRequest as InputResponseRequest
from .lifecycle import CancelledNotification as CancelledNotification
from .lifecycle import ClientCapabilities as ClientCapabilities
from .lifecycle import ClientTaskRequestsCapability as ClientTaskRequestsCapability
from .lifecycle import ClientTasksCapability as ClientTasksCapability
from .lifecycle import ElicitationCapability as ElicitationCapability
from .lifecycle import Implementation as Implementation
from .lifecycle import InitializedNotification as InitializedNotification
from .lifecycle import InitializeRequest as InitializeRequest
from .lifecycle import InitializeResult as InitializeResult
from .lifecycle import PingRequest as PingRequest
from .lifecycle import ProgressNotification as ProgressNotification
from .lifecycle import PromptsCapability as PromptsCapability
from .lifecycle import ResourcesCapability as ResourcesCapability
from .lifecycle import RootsCapability as RootsCapability
from .lifecycle import SamplingCapability as SamplingCapability
from .lifecycle import ServerCapabilities as ServerCapabilities
from .lifecycle import ServerTaskRequestsCapability as ServerTaskRequestsCapability
from .lifecycle import ServerTasksCapability as ServerTasksCapability
from .lifecycle import TaskElicitationCapability as TaskElicitationCapability
from .lifecycle import TaskSamplingCapability as TaskSamplingCapability
from .lifecycle import TaskToolsCapability as TaskToolsCapability
from .lifecycle import ToolsCapability as ToolsCapability
from .logging import LOGGING_LEVELS as LOGGING_LEVELS
from .logging import LoggingLevel as LoggingLevel
from .logging import LoggingMessageNotification as LoggingMessageNotification
from .logging import SetLevelRequest as SetLevelRequest
from .prompts import GetPromptRequest as GetPromptRequest
from .prompts import GetPromptResult as GetPromptResult
from .prompts import ListPromptsRequest as ListPromptsRequest
from .prompts import ListPromptsResult as ListPromptsResult
from .prompts import Prompt as Prompt
from .prompts import PromptArgument as PromptArgument
from .prompts import PromptListChangedNotification as PromptListChangedNotification
from .prompts import PromptMessage as PromptMessage
from .resources import BlobResourceContents as BlobResourceContents
from .resources import ListResourcesRequest as ListResourcesRequest
from .resources import ListResourcesResult as ListResourcesResult
from .resources import ListResourceTemplatesRequest as ListResourceTemplatesRequest
from .resources import ListResourceTemplatesResult as ListResourceTemplatesResult
from .resources import ReadResourceRequest as ReadResourceRequest
from .resources import ReadResourceResult as ReadResourceResult
from .resources import Resource as Resource
from .resources import ResourceContents as ResourceContents
from .resources import ResourceLink as ResourceLink
from .resources import ResourceListChangedNotification as ResourceListChangedNotification
from .resources import ResourceTemplate as ResourceTemplate
from .resources import ResourceUpdatedNotification as ResourceUpdatedNotification
from .resources import SubscribeRequest as SubscribeRequest
from .resources import TextResourceContents as TextResourceContents
from .resources import UnsubscribeRequest as UnsubscribeRequest
from .roots import ListRootsRequest as ListRootsRequest
from .roots import ListRootsResult as ListRootsResult
from .roots import Root as Root
from .roots import RootsListChangedNotification as RootsListChangedNotification
from .sampling import CreateMessageRequest as CreateMessageRequest
from .sampling import CreateMessageResult as CreateMessageResult
from .sampling import IncludeContext as IncludeContext
from .sampling import ModelHint as ModelHint
from .sampling import ModelPreferences as ModelPreferences
from .sampling import SamplingMessage as SamplingMessage
from .sampling import SamplingMessageContent as SamplingMessageContent
from .sampling import StopReason as StopReason
from .sampling import ToolChoice as ToolChoice
from .subscriptions import SubscriptionFilter as SubscriptionFilter
from .subscriptions import (
    SubscriptionsAcknowledgedNotification as SubscriptionsAcknowledgedNotification,
)
from .subscriptions import SubscriptionsListenRequest as SubscriptionsListenRequest
from .subscriptions import SubscriptionsListenResult as SubscriptionsListenResult
from .tasks import MODEL_IMMEDIATE_RESPONSE_META_KEY as MODEL_IMMEDIATE_RESPONSE_META_KEY
from .tasks import RELATED_TASK_META_KEY as RELATED_TASK_META_KEY
from .tasks import CancelTaskRequest as CancelTaskRequest
from .tasks import CancelTaskResult as CancelTaskResult
from .tasks import CreateTaskResult as CreateTaskResult
from .tasks import GetTaskPayloadRequest as GetTaskPayloadRequest
from .tasks import GetTaskPayloadResult as GetTaskPayloadResult
from .tasks import GetTaskRequest as GetTaskRequest
from .tasks import GetTaskResult as GetTaskResult
from .tasks import ListTasksRequest as ListTasksRequest
from .tasks import ListTasksResult as ListTasksResult
from .tasks import RelatedTaskMetadata as RelatedTaskMetadata
from .tasks import Task as Task
from .tasks import TaskMetadata as TaskMetadata
from .tasks import TaskStatus as TaskStatus
from .tasks import TaskStatusNotification as TaskStatusNotification
from .tools import CallToolRequest as CallToolRequest
from .tools import CallToolResult as CallToolResult
from .tools import ListToolsRequest as ListToolsRequest
from .tools import ListToolsResult as ListToolsResult
from .tools import Tool as Tool
from .tools import ToolAnnotations as ToolAnnotations
from .tools import ToolExecution as ToolExecution
from .tools import ToolListChangedNotification as ToolListChangedNotification
