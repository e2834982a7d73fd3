"""The runtime's RPCs of facts: search, profile, retraction, ask."""

from __future__ import annotations

from agentmem.contract.errors import invalid_field
from agentmem.contract.invisible import shown
from agentmem.v1 import facts_pb2
from runtime_svc.domain import answers
from runtime_svc.domain.fact_chains import Period
from runtime_svc.grpc import mapping
from runtime_svc.grpc.servicer_base import CALLER, Context, ServicerBase
from runtime_svc.services.fact_retraction import RetractCommand
from runtime_svc.services.facts import FactQuery

FACT_STATES = {
    facts_pb2.FACT_STATUS_UNSPECIFIED: "eligible",
    facts_pb2.FACT_STATUS_ELIGIBLE: "eligible",
    facts_pb2.FACT_STATUS_INELIGIBLE: "ineligible",
    facts_pb2.FACT_STATUS_ALL: "all",
}


class FactRpcs(ServicerBase):
    # Facts, profile, ask

    async def SearchFacts(
        self, request: facts_pb2.SearchFactsRequest, context: Context
    ) -> facts_pb2.SearchFactsResponse:
        state = FACT_STATES.get(request.status)
        if state is None:
            raise invalid_field("status", "must be one of the defined values")
        q = FactQuery(
            query=request.query,
            save_intent=request.save_intent,
            save_intent_source=request.save_intent_source,
            state=state,
            limit=request.limit or 20,
            period=Period(mapping.time_us("as_of", request), request.include_superseded),
        )
        found = await self._run(self._facts.search, CALLER.get(), q)
        return facts_pb2.SearchFactsResponse(facts=[mapping.fact(f) for f in found])

    async def GetProfile(
        self, request: facts_pb2.GetProfileRequest, context: Context
    ) -> facts_pb2.GetProfileResponse:
        entries = await self._run(
            self._facts.profile,
            CALLER.get(),
            request.save_intent_source,
            mapping.time_us("as_of", request),
        )
        return facts_pb2.GetProfileResponse(
            entries=[
                facts_pb2.ProfileEntry(
                    key=e.key,
                    value=e.value,
                    confidence=e.confidence,
                    fact_ids=list(e.fact_ids),
                    since=mapping.timestamp(e.since_us),
                )
                for e in entries
            ]
        )

    async def RetractFact(
        self, request: facts_pb2.RetractFactRequest, context: Context
    ) -> facts_pb2.RetractFactResponse:
        cmd = RetractCommand(request.fact_id, request.reason)
        done = await self._write(self._retraction.retract, CALLER.get(), cmd)
        return facts_pb2.RetractFactResponse(
            fact_id=done.fact_id, receipt=mapping.receipt(done.receipt)
        )

    async def Ask(self, request: facts_pb2.AskRequest, context: Context) -> facts_pb2.AskResponse:
        a = await self._run(
            self._facts.ask,
            CALLER.get(),
            request.question,
            request.token_budget,
            mapping.time_us("as_of", request),
        )
        citations, seen = [], set()
        for p in a.pieces:
            if (p.source_id, p.source_revision, p.passage) not in seen:
                seen.add((p.source_id, p.source_revision, p.passage))
                citations.append(
                    mapping.citation(p.source_id, p.source_revision, p.passage, p.chars)
                )
        return facts_pb2.AskResponse(
            answer=shown(a.text),  # what a person cannot see is shown, as in the block
            answer_basis=a.basis,
            confidence=a.confidence,
            citations=citations,
            provenance=[_provenance(p) for p in a.pieces],
            related=[_provenance(p) for p in a.related],
            changed_at=mapping.timestamp(a.changed_at_us),
        )


def _provenance(p: answers.Piece) -> facts_pb2.AskProvenance:
    return facts_pb2.AskProvenance(
        source_id=p.source_id,
        source_revision=p.source_revision,
        fact_id=p.fact_id,
        save_intent=p.save_intent,
        passage=mapping.passage(p.passage, p.chars),
        valid_from=mapping.timestamp(p.valid_from_us),
        valid_to=mapping.timestamp(p.valid_to_us),
    )
