"""Generated protobuf and gRPC code for Weft's wire protocols.

Do not edit the ``*_pb2*`` files by hand: regenerate them with
``scripts/gen_proto.sh`` (see that script for the pinned generator version).
"""
