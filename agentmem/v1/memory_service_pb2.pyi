from agentmem.v1 import audit_pb2 as _audit_pb2
from agentmem.v1 import capabilities_pb2 as _capabilities_pb2
from agentmem.v1 import events_pb2 as _events_pb2
from agentmem.v1 import facts_pb2 as _facts_pb2
from agentmem.v1 import foreign_pb2 as _foreign_pb2
from agentmem.v1 import retrieval_pb2 as _retrieval_pb2
from agentmem.v1 import review_pb2 as _review_pb2
from agentmem.v1 import sources_pb2 as _sources_pb2
from agentmem.v1 import thread_mode_pb2 as _thread_mode_pb2
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

DESCRIPTOR: _descriptor.FileDescriptor
