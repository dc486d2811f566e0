package dmstore

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// packCases are sorted id lists that exercise every gap size, every
// last-group length and the fast path's end.
func packCases() [][]uint32 {
	r := rand.New(rand.NewPCG(1, 2))
	cases := [][]uint32{nil, {0}, {0, 0, 0}, {1<<32 - 1}, {0, 1<<32 - 1}, {5, 300, 70000, 1 << 25, 1<<32 - 2}}
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 100, 1000} {
		for _, span := range []uint32{4, 1 << 10, 1 << 20, 1<<32 - 1} {
			l := make([]uint32, n)
			for i := range l {
				l[i] = r.Uint32N(span)
			}
			slices.Sort(l)
			cases = append(cases, l)
		}
	}
	return cases
}

func TestPackRoundTrip(t *testing.T) {
	for _, ids := range packCases() {
		b := AppendPacked([]byte{0xaa}, ids)[1:]
		if len(b) != PackedBytes(ids) {
			t.Fatalf("%d ids: %d bytes, PackedBytes says %d", len(ids), len(b), PackedBytes(ids))
		}
		// Into a buffer with room for the list only: no byte past it.
		if len(ids) > 0 {
			room := make([]byte, 0, len(b))
			if got := AppendPacked(room, ids); &got[0] != &room[:1][0] {
				t.Fatalf("%d ids: AppendPacked wrote past the list's bytes", len(ids))
			}
		}
		// Decoded alone, with bytes after it (the fast path's room), and
		// with bytes after it in its capacity only.
		for _, tail := range [][]byte{nil, make([]byte, 20), {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}} {
			in := append(slices.Clone(b), tail...)
			if tail != nil && tail[0] == 0xff {
				in = in[:len(b)]
			}
			got, n, err := Unpack(in, len(ids), []uint32{7})
			if err != nil || n != len(b) || !slices.Equal(got[1:], ids) || got[0] != 7 {
				t.Fatalf("%d ids, tail %d: got %v (%d bytes, err %v), want %v (%d bytes)", len(ids), len(tail), got, n, err, ids, len(b))
			}
		}
		// Every truncation is an error.
		for cut := range len(b) {
			if _, _, err := Unpack(b[:cut], len(ids), nil); err == nil {
				t.Fatalf("%d ids cut to %d of %d bytes: no error", len(ids), cut, len(b))
			}
		}
	}
}

func TestUnpackListWeighted(t *testing.T) {
	ids := []uint32{3, 9, 1000, 1 << 30}
	for _, tc := range []struct {
		code WeightCode
		w    []float32
	}{
		{WeightFloat32, []float32{0.5, 1, 2, 0.25}},
		{WeightUint16, []float32{0, 1, 65535, 300}},
		{WeightUint8, []float32{0, 1, 255, 17}},
	} {
		t.Run(tc.code.String(), func(t *testing.T) {
			c := EntryCodec{Size: 32, Chunks: 2, Weighted: true, Packed: true, Weights: tc.code}
			b := AppendPacked(nil, ids)
			for _, x := range tc.w {
				b = tc.code.Append(b, float64(x))
			}
			if uint64(len(b)) != c.packedSize(ids) {
				t.Fatalf("size %d, packedSize %d", len(b), c.packedSize(ids))
			}
			gi, gw, err := c.UnpackList(b, 4, nil, nil)
			if err != nil || !slices.Equal(gi, ids) || !slices.Equal(gw, tc.w) {
				t.Fatalf("got %v %v %v", gi, gw, err)
			}
			if _, _, err := c.UnpackList(b[:len(b)-1], 4, nil, nil); err == nil {
				t.Fatal("a short weight: no error")
			}
			c.Weighted = false
			if _, _, err := c.UnpackList(b, 4, nil, nil); err == nil {
				t.Fatal("bytes after the ids of an unweighted list: no error")
			}
		})
	}
}

func FuzzUnpack(f *testing.F) {
	for _, ids := range packCases()[:12] {
		f.Add(AppendPacked(nil, ids), uint16(len(ids)))
	}
	f.Fuzz(func(t *testing.T, b []byte, n uint16) {
		ids, used, err := Unpack(b, int(n), nil)
		if err != nil {
			return
		}
		if !slices.IsSorted(ids) || len(ids) != int(n) {
			t.Fatalf("%d ids decoded from %d bytes: %v", n, used, ids)
		}
		// What decodes re-encodes to the same ids (not always the same
		// bytes: a gap may be written longer than it needs).
		again, _, err := Unpack(AppendPacked(nil, ids), int(n), nil)
		if err != nil || !slices.Equal(again, ids) {
			t.Fatalf("re-encoded %v decodes to %v, %v", ids, again, err)
		}
	})
}

// BenchmarkUnpack decodes lists of Kronecker-like gaps (mostly one and
// two bytes), 64 ids each.
func BenchmarkUnpack(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	var lists [][]byte
	var all []byte
	var at []int
	total := 0
	for range 1024 { // one buffer, as a merged read brings them
		ids := make([]uint32, 64)
		for i := range ids {
			ids[i] = r.Uint32N(1 << 20)
		}
		slices.Sort(ids)
		at = append(at, len(all))
		all = AppendPacked(all, ids)
		total += len(ids)
	}
	for i, a := range at {
		end := len(all)
		if i+1 < len(at) {
			end = at[i+1]
		}
		lists = append(lists, all[a:end])
	}
	out := make([]uint32, 0, 64)
	b.SetBytes(int64(4 * total))
	for b.Loop() {
		for _, l := range lists {
			var err error
			if out, _, err = Unpack(l, 64, out[:0]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*total), "ns/id")
}
