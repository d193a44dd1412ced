"""A client of a whole Weft cluster, found through its coordinator.

A cluster (``weft cluster up``) has several gatekeepers, each serving the
HTTP API of docs/api.md, and a coordinator that knows which member holds each
gatekeeper slot in each configuration epoch. :class:`ClusterClient` asks the
coordinator replicas' HTTP status (``/status.json``) for the gatekeepers'
HTTP addresses, spreads calls over them round robin, and follows the
configuration as gatekeepers fail and backups are promoted into their slots::

    from weft import Client

    with Client.from_coordinator(["http://127.0.0.1:7611"]) as client:
        for tx in client.transaction():
            with tx:
                n = tx.get_vertex("counter").props.get("n", 0)
                tx.set_vertex_prop("counter", "n", n + 1)

It behaves as the Go client's ``DialCoordinator`` (client/weft/coord.go):

* The configuration is the serving leader's: every replica is asked in turn
  and the first that says it is the leader wins; when none does, the view
  with the highest applied index is taken. A configuration is adopted only
  if its epoch is at least the one held, so a lagging replica never moves
  the client back.
* It is read when the client is made (within ``timeout``), every
  ``refresh_every`` seconds on the next call, and at once (at most every
  0.1 s) when a call loses its gatekeeper.
* A call that loses its gatekeeper — the connection is refused or breaks,
  the answer times out, or the gatekeeper answers ``UNAVAILABLE`` (503) or
  ``OVERLOADED`` — is sent again to another gatekeeper, with backoff, until
  ``timeout`` has passed since it started: begin, reads, programs, program
  lists, status and health checks. The last failure is raised then.
* A commit is sent again only when it provably never left the client (the
  connection could not be opened). Once sent, a failure that is not the
  server refusing it raises :class:`~weft.client.UnknownOutcome`, which the
  transaction loop does not retry; ``OVERLOADED`` and ``ABORTED`` answers are
  refusals (nothing was written) and the loop runs the transaction again.

A :class:`ClusterClient` is safe to share between threads (each thread has
its own connection to each gatekeeper); it starts no threads of its own.

The class is defined in :mod:`weft.client` (beside :meth:`Client.from_coordinator`,
which returns one) and the requester that finds gatekeepers and fails over
in ``weft._http``; this module is their public home.
"""

from __future__ import annotations

from ._http import GatekeeperInfo, parse_status
from .client import ClusterClient

__all__ = ["ClusterClient", "GatekeeperInfo", "parse_status"]
