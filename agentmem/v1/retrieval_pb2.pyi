from agentmem.v1 import sources_pb2 as _sources_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Reason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REASON_UNSPECIFIED: _ClassVar[Reason]
    REASON_SELECTED: _ClassVar[Reason]
    REASON_BELOW_LIMIT: _ClassVar[Reason]
    REASON_COLD: _ClassVar[Reason]
    REASON_PENDING_REVIEW: _ClassVar[Reason]
    REASON_REJECTED: _ClassVar[Reason]
    REASON_REVOKED: _ClassVar[Reason]
    REASON_ASSENT_INVALID: _ClassVar[Reason]
    REASON_ASSENT_EXPIRED: _ClassVar[Reason]
    REASON_THREAD_MEMORY_DISABLED: _ClassVar[Reason]

class MatchedBy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCHED_BY_UNSPECIFIED: _ClassVar[MatchedBy]
    MATCHED_BY_LEXICAL: _ClassVar[MatchedBy]
    MATCHED_BY_SEMANTIC: _ClassVar[MatchedBy]
    MATCHED_BY_BOTH: _ClassVar[MatchedBy]
REASON_UNSPECIFIED: Reason
REASON_SELECTED: Reason
REASON_BELOW_LIMIT: Reason
REASON_COLD: Reason
REASON_PENDING_REVIEW: Reason
REASON_REJECTED: Reason
REASON_REVOKED: Reason
REASON_ASSENT_INVALID: Reason
REASON_ASSENT_EXPIRED: Reason
REASON_THREAD_MEMORY_DISABLED: Reason
MATCHED_BY_UNSPECIFIED: MatchedBy
MATCHED_BY_LEXICAL: MatchedBy
MATCHED_BY_SEMANTIC: MatchedBy
MATCHED_BY_BOTH: MatchedBy

class Citation(_message.Message):
    __slots__ = ("source_id", "revision", "passage")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    PASSAGE_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    passage: Passage
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., passage: _Optional[_Union[Passage, _Mapping]] = ...) -> None: ...

class Passage(_message.Message):
    __slots__ = ("message_start", "message_end", "char_start", "char_end")
    MESSAGE_START_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_END_FIELD_NUMBER: _ClassVar[int]
    CHAR_START_FIELD_NUMBER: _ClassVar[int]
    CHAR_END_FIELD_NUMBER: _ClassVar[int]
    message_start: int
    message_end: int
    char_start: int
    char_end: int
    def __init__(self, message_start: _Optional[int] = ..., message_end: _Optional[int] = ..., char_start: _Optional[int] = ..., char_end: _Optional[int] = ...) -> None: ...

class SearchMemoriesRequest(_message.Message):
    __slots__ = ("query", "thread_id", "limit", "group_by_source")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    GROUP_BY_SOURCE_FIELD_NUMBER: _ClassVar[int]
    query: str
    thread_id: str
    limit: int
    group_by_source: bool
    def __init__(self, query: _Optional[str] = ..., thread_id: _Optional[str] = ..., limit: _Optional[int] = ..., group_by_source: _Optional[bool] = ...) -> None: ...

class SearchHit(_message.Message):
    __slots__ = ("source_id", "revision", "score", "snippet", "citation", "passage")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    CITATION_FIELD_NUMBER: _ClassVar[int]
    PASSAGE_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    score: float
    snippet: str
    citation: Citation
    passage: Passage
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., score: _Optional[float] = ..., snippet: _Optional[str] = ..., citation: _Optional[_Union[Citation, _Mapping]] = ..., passage: _Optional[_Union[Passage, _Mapping]] = ...) -> None: ...

class SearchMemoriesResponse(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ...) -> None: ...

class AssemblePromptRequest(_message.Message):
    __slots__ = ("query", "thread_id", "token_budget")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    query: str
    thread_id: str
    token_budget: int
    def __init__(self, query: _Optional[str] = ..., thread_id: _Optional[str] = ..., token_budget: _Optional[int] = ...) -> None: ...

class AssemblePromptResponse(_message.Message):
    __slots__ = ("context", "citations", "prompt_record_id", "tokens_used")
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_RECORD_ID_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    context: str
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    prompt_record_id: str
    tokens_used: int
    def __init__(self, context: _Optional[str] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., prompt_record_id: _Optional[str] = ..., tokens_used: _Optional[int] = ...) -> None: ...

class ExplainRetrievalRequest(_message.Message):
    __slots__ = ("query", "thread_id", "limit", "token_budget")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    query: str
    thread_id: str
    limit: int
    token_budget: int
    def __init__(self, query: _Optional[str] = ..., thread_id: _Optional[str] = ..., limit: _Optional[int] = ..., token_budget: _Optional[int] = ...) -> None: ...

class ExplanationEntry(_message.Message):
    __slots__ = ("source_id", "revision", "classification", "included", "reason", "rank", "score", "matched_by", "lexical_score", "semantic_score", "hold_reason", "passage")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    INCLUDED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    MATCHED_BY_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_SCORE_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_SCORE_FIELD_NUMBER: _ClassVar[int]
    HOLD_REASON_FIELD_NUMBER: _ClassVar[int]
    PASSAGE_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    classification: _sources_pb2.Classification
    included: bool
    reason: Reason
    rank: int
    score: float
    matched_by: MatchedBy
    lexical_score: float
    semantic_score: float
    hold_reason: str
    passage: Passage
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., classification: _Optional[_Union[_sources_pb2.Classification, str]] = ..., included: _Optional[bool] = ..., reason: _Optional[_Union[Reason, str]] = ..., rank: _Optional[int] = ..., score: _Optional[float] = ..., matched_by: _Optional[_Union[MatchedBy, str]] = ..., lexical_score: _Optional[float] = ..., semantic_score: _Optional[float] = ..., hold_reason: _Optional[str] = ..., passage: _Optional[_Union[Passage, _Mapping]] = ...) -> None: ...

class ExplainRetrievalResponse(_message.Message):
    __slots__ = ("entries", "total_matches", "truncated")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MATCHES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[ExplanationEntry]
    total_matches: int
    truncated: bool
    def __init__(self, entries: _Optional[_Iterable[_Union[ExplanationEntry, _Mapping]]] = ..., total_matches: _Optional[int] = ..., truncated: _Optional[bool] = ...) -> None: ...
