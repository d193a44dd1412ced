// Package social is the social-network timeline of the Kronos paper (§3.1,
// Figure 5) on Weft's Kronos service.
//
// Users are homed on shards (application servers), each with its own Kronos
// client. A post is one Kronos event. A reply is a new event ordered after the
// post it answers with assign_order(in_reply_to → reply, must). Shards fan
// posts out to the timelines of the author and the author's friends, and the
// fan-out is slow and unordered: deliveries take random delays, and a lagging
// shard may hold its fan-out back for a while, so a timeline's arrival order
// can show a reply before the message it answers.
//
// Rendering a timeline asks query_order about every pair of posts it holds and
// topologically sorts them, breaking ties by arrival. The invariant: a
// rendered timeline never shows a post before any post it (transitively)
// replies to, even when the intermediate replies are not on that timeline —
// the paper's Figure 1 point that Kronos carries A ⇝ B ⇝ C as A ⇝ C to a
// component that never saw B. Posts Kronos leaves concurrent keep their
// arrival order: Kronos imposes no total order on unrelated activity.
//
// Network, Shard and Timeline are safe for concurrent use. Render is a pure
// function of the posts it is given and Kronos's answers.
package social
