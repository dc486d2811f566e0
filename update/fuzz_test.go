package update_test

import (
	"encoding/binary"
	"testing"

	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// pools is a RangeChecker of fixed pool sizes.
type pools []uint64

func (p pools) Check(a verbs.Addr, n int) error { return verbs.CheckRange(p, a, n) }

// The mailbox decoders take whatever bytes a corrupt (or hostile) peer may
// have written: they never panic, and what they accept is what a sender
// can have written.
func FuzzMailboxDecoders(f *testing.F) {
	rec := make([]byte, update.RefRec)
	a, _ := verbs.MakeAddr(0, 64)
	update.PutRef(rec, update.RefItem{Seg: a, Edges: 3, Src: 2, Val: 42})
	f.Add(rec, uint8(4), uint16(100))
	blk := make([]byte, 8+12*4)
	binary.LittleEndian.PutUint64(blk, 2)
	binary.LittleEndian.PutUint32(blk[8:], 5)
	binary.LittleEndian.PutUint32(blk[12:], 7)
	f.Add(blk, uint8(8), uint16(10))
	f.Add([]byte{}, uint8(0), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, recSel uint8, n uint16) {
		recBytes := 4 + 4*int(recSel&1)
		check := pools{1 << 12, 1 << 10}
		items, err := update.DecodeRefs(data, recBytes, 1<<10, uint32(n), check, nil)
		if err == nil {
			if len(items)*update.RefRec != len(data) {
				t.Fatalf("%d items from %d bytes", len(items), len(data))
			}
			for i, it := range items {
				if it.Edges == 0 || it.Edges > 1<<10 || it.Src >= uint32(n) || check.Check(it.Seg, int(it.Edges)*recBytes) != nil {
					t.Fatalf("accepted item %d: %+v", i, it)
				}
				var b [update.RefRec]byte
				update.PutRef(b[:], it)
				if string(b[:]) != string(data[i*update.RefRec:(i+1)*update.RefRec]) {
					t.Fatalf("item %d does not round-trip", i)
				}
			}
		}
		block := uint64(2 + 2*(recSel>>1&7))
		mb := &update.Mailboxes{ValBlock: block}
		if uint64(len(data)) >= mb.ValBlockBytes() {
			dst, val, err := mb.ValBlockPairs(data[:mb.ValBlockBytes()], 0, uint32(n), nil, nil)
			if err == nil {
				if uint64(len(dst)) != binary.LittleEndian.Uint64(data) || len(val) != len(dst) || uint64(len(dst)) > block {
					t.Fatalf("block of %d pairs decoded to %d, %d", binary.LittleEndian.Uint64(data), len(dst), len(val))
				}
				for _, d := range dst {
					if d >= uint32(n) {
						t.Fatalf("accepted destination %d of %d vertices", d, n)
					}
				}
			}
		}
		checkReadValPairs(t, mb, data, uint32(n))
		ids, err := update.DecodeLog(data, 0, uint32(n), nil)
		if err == nil {
			if len(ids)*update.LogRec != len(data) {
				t.Fatalf("%d log entries from %d bytes", len(ids), len(data))
			}
			for _, v := range ids {
				if v >= uint32(n) {
					t.Fatalf("accepted log entry %d of %d vertices", v, n)
				}
			}
		}
	})
}

// poolReader reads MN 0's pool from a byte slice.
type poolReader []byte

func (p poolReader) Read(dst []byte, src verbs.Addr) error {
	copy(dst, p[src.Offset():src.Offset()+uint64(len(dst))])
	return nil
}
func (poolReader) Flush() error { return nil }

// checkReadValPairs: ReadValPairs, which reads only the blocks' used
// parts, accepts a mailbox of whole blocks (data) exactly when every block
// passes ValBlockPairs, with the same pairs in the same order.
func checkReadValPairs(t *testing.T, mb *update.Mailboxes, data []byte, n uint32) {
	bb := mb.ValBlockBytes()
	used := uint64(len(data)) / bb * bb
	box, _ := verbs.MakeAddr(0, 0)
	m := *mb
	m.ValCap, m.Val = used, []verbs.Addr{box}
	pool := append(make([]byte, 16), data...) // the mailbox's header, then its records
	_, dst, val, err := m.ReadValPairs(poolReader(pool), 0, used, 0, n, nil, nil, nil)
	var wantD []uint32
	var wantV []uint64
	var wantErr error
	for off := uint64(0); off < used && wantErr == nil; off += bb {
		var d []uint32
		var v []uint64
		if d, v, wantErr = m.ValBlockPairs(data[off:off+bb], 0, n, nil, nil); wantErr == nil {
			wantD, wantV = append(wantD, d...), append(wantV, v...)
		}
	}
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("ReadValPairs: %v; whole blocks: %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if len(dst) != len(wantD) || len(val) != len(wantV) {
		t.Fatalf("ReadValPairs: %d pairs; whole blocks: %d", len(dst), len(wantD))
	}
	for i := range dst {
		if dst[i] != wantD[i] || val[i] != wantV[i] {
			t.Fatalf("pair %d: (%d, %d); whole blocks: (%d, %d)", i, dst[i], val[i], wantD[i], wantV[i])
		}
	}
}
