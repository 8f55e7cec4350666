"""The pbbp2 frame of Feishu's long connection, built with protobuf from its schema.

The fake speaks the wire format without importing the SDK under test (lark-oapi vendors the
schema in `lark_oapi.ws.pb.pbbp2_pb2`; importing any part of lark-oapi loads all of it,
11,000 modules). Field numbers and types are those of that schema.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_HEADER = (
    ("key", 1, _F.TYPE_STRING, _F.LABEL_REQUIRED),
    ("value", 2, _F.TYPE_STRING, _F.LABEL_REQUIRED),
)
_FRAME = (
    ("SeqID", 1, _F.TYPE_UINT64, _F.LABEL_REQUIRED),
    ("LogID", 2, _F.TYPE_UINT64, _F.LABEL_REQUIRED),
    ("service", 3, _F.TYPE_INT32, _F.LABEL_REQUIRED),
    ("method", 4, _F.TYPE_INT32, _F.LABEL_REQUIRED),
    ("headers", 5, _F.TYPE_MESSAGE, _F.LABEL_REPEATED),
    ("payload_encoding", 6, _F.TYPE_STRING, _F.LABEL_OPTIONAL),
    ("payload_type", 7, _F.TYPE_STRING, _F.LABEL_OPTIONAL),
    ("payload", 8, _F.TYPE_BYTES, _F.LABEL_OPTIONAL),
    ("LogIDNew", 9, _F.TYPE_STRING, _F.LABEL_OPTIONAL),
)


def _frame_class() -> Any:
    schema = descriptor_pb2.FileDescriptorProto(
        name="fake_pbbp2.proto", package="pbbp2", syntax="proto2"
    )
    for name, fields in (("Header", _HEADER), ("Frame", _FRAME)):
        message = schema.message_type.add(name=name)
        for field, number, kind, label in fields:
            entry = message.field.add(name=field, number=number, type=kind, label=label)
            if kind == _F.TYPE_MESSAGE:
                entry.type_name = ".pbbp2.Header"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(schema)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("pbbp2.Frame"))


Frame = _frame_class()
