"""Tasks as actors: the supervisor, the task-side request context, and the ``tasks/*`` answers.

Shared by the server (the receiver of task-augmented ``tools/call``) and the client (the
receiver of task-augmented ``sampling/createMessage`` and ``elicitation/create``), so it sits
between the runtime and both of them. The records live in a
:class:`~mcptrio.stores.task_store.TaskStore`.
"""

from .context import TaskRequestContext as TaskRequestContext
from .handle import CoreTaskBackend as CoreTaskBackend
from .handle import TaskBackend as TaskBackend
from .handle import TaskHandle as TaskHandle
from .handle import payload_request as payload_request
from .handle import task_augmented as task_augmented
from .receiver import RESULT_TYPES as RESULT_TYPES
from .receiver import TaskReceiver as TaskReceiver
from .receiver import owner_of as owner_of
from .receiver import related_task_meta as related_task_meta
from .supervisor import RunningTask as RunningTask
from .supervisor import StatusListener as StatusListener
from .supervisor import TaskLimits as TaskLimits
from .supervisor import TasksNotServing as TasksNotServing
from .supervisor import TaskSupervisor as TaskSupervisor
from .supervisor import TaskWork as TaskWork
from .supervisor import outcome as outcome
