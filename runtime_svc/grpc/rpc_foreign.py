"""The runtime's RPCs of foreign sources, revocation, readback and erasure."""

from __future__ import annotations

from agentmem.v1 import foreign_pb2
from runtime_svc.domain.foreign import Pointer
from runtime_svc.grpc import enums, mapping
from runtime_svc.grpc.enums import STATES
from runtime_svc.grpc.servicer_base import CALLER, Context, ServicerBase
from runtime_svc.services.foreign import AdmitCommand
from runtime_svc.services.source_lifecycle import (
    EraseCommand,
    RevokeAssentCommand,
)


class ForeignRpcs(ServicerBase):
    # Foreign sources, revocation, readback, erasure

    async def RegisterOwnerKey(
        self, request: foreign_pb2.RegisterOwnerKeyRequest, context: Context
    ) -> foreign_pb2.RegisterOwnerKeyResponse:
        receipt = await self._write(
            self._foreign.register_key,
            CALLER.get(),
            request.owner_id,
            request.key_id,
            request.public_key_pem,
        )
        return foreign_pb2.RegisterOwnerKeyResponse(
            owner_id=request.owner_id, key_id=request.key_id, receipt=mapping.receipt(receipt)
        )

    async def RevokeOwnerKey(
        self, request: foreign_pb2.RevokeOwnerKeyRequest, context: Context
    ) -> foreign_pb2.RevokeOwnerKeyResponse:
        retired = await self._write(
            self._foreign.revoke_key, CALLER.get(), request.owner_id, request.key_id
        )
        return foreign_pb2.RevokeOwnerKeyResponse(
            owner_id=request.owner_id,
            key_id=request.key_id,
            sources_affected=retired.sources_affected,
            receipt=mapping.receipt(retired.receipt),
        )

    async def PrepareForeignSource(
        self, request: foreign_pb2.PrepareForeignSourceRequest, context: Context
    ) -> foreign_pb2.PrepareForeignSourceResponse:
        pointer = _pointer(request.pointer)
        source_id, audience = self._foreign.prepare(CALLER.get(), request.canonical_owner, pointer)
        return foreign_pb2.PrepareForeignSourceResponse(
            source_id=source_id, audience=audience, content_digest=pointer.content_digest
        )

    async def AdmitForeignSource(
        self, request: foreign_pb2.AdmitForeignSourceRequest, context: Context
    ) -> foreign_pb2.AdmitForeignSourceResponse:
        cmd = AdmitCommand(
            request.canonical_owner, _pointer(request.pointer), request.assent, request.body
        )
        o = await self._write(self._foreign.admit, CALLER.get(), cmd)
        return foreign_pb2.AdmitForeignSourceResponse(
            source_id=o.source_id,
            revision=o.revision,
            effective_retrieval_state=STATES.to_proto(o.state),
            receipt=mapping.receipt(o.receipt),
        )

    async def RevokeSource(
        self, request: foreign_pb2.RevokeSourceRequest, context: Context
    ) -> foreign_pb2.RevokeSourceResponse:
        o = await self._write(
            self._lifecycle.revoke, CALLER.get(), request.source_id, request.reason
        )
        return foreign_pb2.RevokeSourceResponse(
            source_id=o.source.source_id,
            effective_retrieval_state=STATES.to_proto(o.state),
            receipt=mapping.receipt(o.receipt),
        )

    async def RevokeAssent(
        self, request: foreign_pb2.RevokeAssentRequest, context: Context
    ) -> foreign_pb2.RevokeAssentResponse:
        cmd = RevokeAssentCommand(request.source_id, request.assent_id, request.revocation)
        o = await self._write(self._lifecycle.revoke_assent, CALLER.get(), cmd)
        return foreign_pb2.RevokeAssentResponse(
            source_id=o.source.source_id,
            effective_retrieval_state=STATES.to_proto(o.state),
            receipt=mapping.receipt(o.receipt),
        )

    async def ReadbackSource(
        self, request: foreign_pb2.ReadbackSourceRequest, context: Context
    ) -> foreign_pb2.ReadbackSourceResponse:
        r = await self._run(self._lifecycle.readback, CALLER.get(), request.source_id)
        return foreign_pb2.ReadbackSourceResponse(
            source_id=r.source_id,
            clean=r.clean,
            effective_retrieval_state=STATES.to_proto(r.state),
            derivatives=[
                foreign_pb2.Derivative(
                    kind=d.kind, derivative_id=d.derivative_id, eligible=d.eligible, state=d.state
                )
                for d in r.derivatives
            ],
            retrievable_by=r.retrievable_by,
            physical_erasure=enums.physical_erasure(r.physical.state),
            residue=r.physical.residue,
            scrubbed_at=mapping.timestamp(r.physical.scrubbed_at_us)
            if r.physical.scrubbed_at_us
            else None,
        )

    async def EraseSource(
        self, request: foreign_pb2.EraseSourceRequest, context: Context
    ) -> foreign_pb2.EraseSourceResponse:
        cmd = EraseCommand(
            request.source_id, request.expected_revision, request.reason, request.appended_by
        )
        erased = await self._write(self._lifecycle.erase, CALLER.get(), cmd)
        out = foreign_pb2.EraseSourceResponse(
            source_id=request.source_id, receipt=mapping.receipt(erased.receipt)
        )
        if erased.turns_erased is not None:
            out.revision = erased.source.revision
            out.turns_erased = erased.turns_erased.turns_erased
            out.messages_erased = erased.turns_erased.messages_erased
            out.message_count = len(erased.source.body.messages)
        return out


def _pointer(p: foreign_pb2.ThinPointer) -> Pointer:
    return Pointer(p.uri, p.content_digest, p.media_type, p.title, p.descriptor)
