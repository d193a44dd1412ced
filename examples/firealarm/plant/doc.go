// Package plant simulates the shop-floor and fire-alarm examples that
// Cheriton and Skeen use against causally and totally ordered communication
// (CATOCS), as the Kronos paper answers them (§3.4): order is recorded in an
// event ordering service, not carried by the messages.
//
// The plant has zones, each with a fire alarm sensor, and machines in the
// zones. Every message is a Kronos event, and its issuer records in Kronos
// what it causally follows, with must edges to a fresh event (so they never
// conflict):
//   - a sensor raises "fire" after the last "fire out" it saw for its zone;
//   - the extinguisher answers each "fire" with a "fire out" after it;
//   - controllers order "start" and "stop" for machines after the last
//     order they saw for that machine, through a database that does not
//     preserve causality (here, the delayed bus);
//   - the fail-safe stops a zone's machines after its "fire", and on the
//     matching "fire out" restarts them after it and after its own "stop"
//     (it also prefers "stop" before "fire out", accepting a reversal).
//
// Messages reach every observer over their own links with random delays, so
// each observer sees its own arrival order; some links may lag badly,
// delivering every fire alarm after its fire out. An
// observer keeps, for each zone and machine, the messages it has in Kronos
// order: on arrival it issues one assign_order batch preferring every message
// it already holds for that object before the new one (arrival order), and
// Kronos either agrees or reports the reversal that earlier commitments —
// an issuer's must, or another observer's preference — force. The answer
// places the message in its sorted position. Because the first preference
// binds every later observer, all observers hold the same order over the
// same messages, so they end in the same state whatever their arrival orders,
// and a "fire out" is never placed before the "fire" it answers. An object's
// state is its last message: a zone burns after "fire", is safe after "fire
// out"; a machine runs after "start", is stopped after "stop".
//
// Observers apply nothing by arrival; the package also computes what an
// observer trusting arrival order would conclude, as the control.
//
// Run is safe to call concurrently; an Observer is owned by its goroutine
// until Run returns it.
package plant
