// Package update is DMG's adaptive update coordinator (DESIGN.md §5): how
// an update candidate for a vertex cached by another compute node reaches
// it.
//
//   - Direct remote update (sparse iterations): the candidate is applied
//     in place on the MN with remote CAS (min, or float sums by CAS loop) —
//     Direct, in doorbell-batched rounds.
//   - Collaborative update (dense iterations): updates are moved to where
//     the data lives in large sequential transfers. A Sender pre-combines
//     (destination, value) pairs per target chunk (ValRD, pass by value)
//     and collects long segments of out-of-place edge lists that it does
//     not fetch at all (RefRD, pass by reference: segment address, length,
//     source value and degree). Full buffers go with one FAA reserving room
//     in the target chunk's mailbox on an MN and one WRITE. Mailboxes are
//     bounded; records that do not fit are spilled to direct update, so
//     nothing is lost however small they are. The owner's RefCursor may
//     Pull complete RefRD records while senders still work (senders then
//     commit each flush with a second FAA); after the iteration's barrier
//     the owner drains what is left exactly once (DrainVal,
//     RefCursor.Drain — RefRD reads the referenced segments itself, merged
//     and doorbell-batched), or the MN that holds a ValRD mailbox applies
//     it in its own memory (ApplyValLocal), then the mailbox is reset.
//
// Stats counts candidates by path (local, direct, ValRD, RefRD), RD items
// and bytes, mailbox flushes and spills.
package update
