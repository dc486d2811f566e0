// Package update is DMG's adaptive update coordinator (DESIGN.md §5): how
// an update candidate for a vertex cached by another compute node reaches
// it. The engine (package rank) hands it whole runs of edges that share a
// source and a target chunk; the loops are package reduce's.
//
//   - Direct remote update (sparse iterations): Direct pre-combines the
//     candidates per destination in a bounded direct-mapped table (no Go
//     map) and applies them in place on the MN with remote CAS, in
//     doorbell-batched rounds. With Log, the CAS that takes a word from
//     the identity appends its vertex to the target chunk's touched log,
//     so the owner reads only the words that changed; with Prune
//     (monotone kernels), it first reads the destinations' values and
//     sends only candidates below them.
//   - Collaborative update (dense iterations): updates move to where the
//     data lives in large sequential transfers. A Sender pre-combines
//     (destination, candidate) pairs per target chunk (ValRD, pass by
//     value) into blocks of the target's mailbox — one FAA reserves a
//     whole block, WRITEs fill it without waiting — and collects long
//     segments of out-of-place lists it does not fetch at all (RefRD, pass
//     by reference: segment address, length, source and its contribution),
//     one FAA and one WRITE per buffer of items. Mailboxes are bounded;
//     what does not fit is spilled to direct update, so nothing is lost
//     however small they are. The owner reads its mailboxes after the
//     iteration's barrier (RefCursor.Take, Mailboxes.ValBlockPairs), and
//     may take complete RefRD records while senders still work
//     (RefCursor.Pullable, senders then commit each flush with a second
//     FAA); or the MN that holds a ValRD mailbox applies it in its own
//     memory (ApplyValLocal).
//
// Every decoder of what a peer wrote (DecodeRefs, ValBlockPairs, DecodeLog)
// checks it, so a corrupt mailbox is an error, not a panic or a write out
// of range. Stats counts candidates by path (local, pulled, direct, ValRD,
// RefRD), RD items and bytes, mailbox flushes, spills and pruned ones.
package update
