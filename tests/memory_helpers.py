"""Small wrappers over the public API for the retrieval tests."""

from __future__ import annotations

from agentmem.v1 import retrieval_pb2, sources_pb2

ACTIVE, COLD = sources_pb2.CLASSIFICATION_ACTIVE, sources_pb2.CLASSIFICATION_COLD


def insert(client, content, thread_id="", request_id="", **metadata):
    return client.InsertMemory(
        sources_pb2.InsertMemoryRequest(
            content=content,
            thread_id=thread_id,
            request_id=request_id,
            metadata=sources_pb2.InsertMetadata(**metadata),
        )
    )


def classify(client, source_id, expected, classification):
    return client.SetSourceClassification(
        sources_pb2.SetSourceClassificationRequest(
            source_id=source_id, expected_revision=expected, classification=classification
        )
    )


def search(client, query, limit=10, thread_id=""):
    return client.SearchMemories(
        retrieval_pb2.SearchMemoriesRequest(query=query, limit=limit, thread_id=thread_id)
    )


def search_ids(client, query, limit=10, thread_id=""):
    return [h.source_id for h in search(client, query, limit, thread_id).hits]


def assemble(client, query, thread_id="t1", token_budget=500):
    return client.AssemblePrompt(
        retrieval_pb2.AssemblePromptRequest(
            query=query, thread_id=thread_id, token_budget=token_budget
        )
    )


def explain(client, query, limit=10, thread_id=""):
    return client.ExplainRetrieval(
        retrieval_pb2.ExplainRetrievalRequest(query=query, limit=limit, thread_id=thread_id)
    )


def list_sources(client, page_size=100, page_token="", **filters):
    return client.ListSources(
        sources_pb2.ListSourcesRequest(
            page_size=page_size, page_token=page_token, filter=sources_pb2.SourceFilter(**filters)
        )
    )


def get_source(client, source_id, include_content=False):
    return client.GetSource(
        sources_pb2.GetSourceRequest(source_id=source_id, include_content=include_content)
    )
