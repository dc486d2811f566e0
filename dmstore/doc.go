// Package dmstore lays a graph out on the memory nodes in the DM-friendly
// format of DESIGN.md §4, and moves it there and back through package
// verbs: the store's side of what package csr reads.
//
//   - entry.go is the codec of the adaptive index entry (16, 32 or 64 bytes:
//     edges in place, or the address of an out-of-place edge list plus
//     per-chunk segment lengths; or, in a packed layout, of a packed
//     list and its size);
//   - pack.go is the packed list's code (LayoutConfig.Packed: sorted ids
//     as gaps in a group varint code, about 2 bytes per edge);
//   - weights.go is how weights are stored (LayoutConfig.Weights: float32,
//     or an integer of 2 or 1 bytes when every weight of the graph is one);
//   - layout.go plans where every piece goes (Plan, PlanSizes: pure and
//     deterministic, so every rank computes the same plan) and checks
//     capacity. PlanSizes takes every chunk's sizes, measured from its
//     rows (SizeRange) or, before they are built, rooms bounded by their
//     degrees (RoomRange), which LoadOptions.Rooms loads. A layout starts at offset 0 of every MN's pool, or at
//     LayoutConfig.Base[m]: a second layout, such as the reverse adjacency
//     of the shares' in-edges (same Bounds, NumMN and EntrySize, its index
//     entries' segments counted by source chunk), then goes after the first
//     one on the same pools with Base[m] = first.MN[m].End;
//   - load.go writes a CN's share of the plan (Layout.Load; a window of it
//     with LoadOptions.Lo and Hi), and readrows.go reads rows back
//     (Layout.ReadRows, ReadGraph).
//
// For example:
//
//	l, err := dmstore.Plan(g, dmstore.LayoutConfig{NumMN: 2, Bounds: bounds})
//	rep, err := l.Load(g, cn, endpoints, dmstore.LoadOptions{})
package dmstore
