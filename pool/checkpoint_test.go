package pool

import (
	"bytes"
	"strings"
	"testing"
)

func ckpt(t testing.TB, epoch uint64) []byte {
	t.Helper()
	b, err := CkptHeader{Epoch: epoch, Iteration: 10 * epoch, Vertices: 1 << 20, Params: 0xfeed, Values: 0xbeef + epoch, Kernel: "pagerank"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCkptHeaderRoundTrip(t *testing.T) {
	h := CkptHeader{Epoch: 7, Iteration: 49, Vertices: 4194304, Params: 0x1234, Values: ValuesSum(0, []uint64{1, 2, 3}, nil), Kernel: "sssp"}
	b, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := DecodeCkptHeader(b)
	if err != nil || !ok || got != h {
		t.Fatalf("decode(encode(%+v)) = %+v, %v, %v", h, got, ok, err)
	}
	for _, k := range []string{"", strings.Repeat("k", CkptKernelBytes+1)} {
		if _, err := (CkptHeader{Epoch: 1, Kernel: k}).Encode(); err == nil {
			t.Errorf("kernel %q encoded; want an error", k)
		}
	}
}

func TestCurrentCkpt(t *testing.T) {
	zero := make([]byte, CkptHeaderBytes)
	torn := func(b []byte) []byte { c := bytes.Clone(b); c[ckIter] ^= 1; return c }
	other := func(b []byte) []byte { c := bytes.Clone(b); c[ckVersion]++; return c }
	for _, c := range []struct {
		name  string
		a, b  []byte
		epoch uint64 // 0: none
		err   string
	}{
		{"never written", zero, zero, 0, ""},
		{"first in B", zero, ckpt(t, 1), 1, ""},
		{"B newer", ckpt(t, 2), ckpt(t, 3), 3, ""},
		{"A newer", ckpt(t, 4), ckpt(t, 3), 4, ""},
		{"A torn writing epoch 4: B's 3", torn(ckpt(t, 4)), ckpt(t, 3), 3, ""},
		{"first torn", zero, torn(ckpt(t, 1)), 0, "checksum"},
		{"both torn", torn(ckpt(t, 2)), torn(ckpt(t, 1)), 0, "checksum"},
		{"another build's", other(ckpt(t, 2)), zero, 0, "version"},
	} {
		h, ok, err := CurrentCkpt(c.a, c.b)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %+v, %v, %v; want an error about its %s", c.name, h, ok, err, c.err)
			}
		case err != nil || ok != (c.epoch > 0) || h.Epoch != c.epoch:
			t.Errorf("%s: epoch %d (ok %v, %v); want epoch %d", c.name, h.Epoch, ok, err, c.epoch)
		}
	}
}

// The next checkpoint never writes the header or buffer of the current one.
func TestNextCkpt(t *testing.T) {
	slot, epoch := NextCkpt(CkptHeader{}, false)
	if slot != 1 || epoch != 1 {
		t.Fatalf("first checkpoint: header %d epoch %d; want 1, 1", slot, epoch)
	}
	for e := uint64(1); e < 6; e++ {
		cur := CkptHeader{Epoch: e}
		slot, epoch := NextCkpt(cur, true)
		if epoch != e+1 || slot == int(e%2) || (CkptHeader{Epoch: epoch}).Buffer() == cur.Buffer() {
			t.Errorf("after epoch %d: header %d epoch %d; want epoch %d in the other header and buffer", e, slot, epoch, e+1)
		}
	}
	// The parts tile the region, in order, each word-aligned.
	for _, n := range []uint64{0, 1, 7, 1000, 1001} {
		parts := []struct{ off, len uint64 }{
			{CkptHeaderOff(0), CkptHeaderBytes}, {CkptHeaderOff(1), CkptHeaderBytes},
			{CkptValuesOff(n, 0), 8 * n}, {CkptValuesOff(n, 1), 8 * n},
			{CkptFrontOff(n, 0), n}, {CkptFrontOff(n, 1), n}}
		end := uint64(0)
		for i, p := range parts {
			if p.off < end || p.off%8 != 0 {
				t.Errorf("%d vertices: part %d at %d overlaps the one before (ending at %d) or is not a word's start", n, i, p.off, end)
			}
			end = p.off + p.len
		}
		if end > CkptRegionBytes(n) || CkptRegionBytes(n)-end >= 8 {
			t.Errorf("%d vertices: the parts end at %d; the region is %d bytes", n, end, CkptRegionBytes(n))
		}
	}
}

func FuzzDecodeCkptHeader(f *testing.F) {
	f.Add(ckpt(f, 1))
	f.Add(make([]byte, CkptHeaderBytes))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, ok, err := DecodeCkptHeader(b)
		if err != nil || !ok {
			return
		}
		again, err := h.Encode()
		if err != nil {
			t.Fatalf("a decoded header %+v does not encode: %v", h, err)
		}
		if h2, ok2, err2 := DecodeCkptHeader(again); err2 != nil || !ok2 || h2 != h {
			t.Fatalf("re-encoded %+v decodes to %+v, %v, %v", h, h2, ok2, err2)
		}
	})
}

// The state's checksum is the same however the vertices are split into
// chunks, and changes with any value or frontier byte, or with a value
// moved to another vertex.
func TestValuesSum(t *testing.T) {
	vals := []uint64{5, 0, 1 << 63, 42, 42, 7, 0, 3}
	front := []byte{0, 1, 1, 0, 0, 0, 1, 0}
	whole := ValuesSum(0, vals, front)
	for _, cut := range [][]int{{0, 8}, {0, 3, 8}, {0, 1, 2, 5, 8}} {
		var s uint64
		for i := 0; i+1 < len(cut); i++ {
			s += ValuesSum(uint64(cut[i]), vals[cut[i]:cut[i+1]], front[cut[i]:cut[i+1]])
		}
		if s != whole {
			t.Errorf("chunks %v: %#x; the whole gives %#x", cut, s, whole)
		}
	}
	changed := append([]uint64(nil), vals...)
	changed[2]++
	swapped := append([]uint64(nil), vals...)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	for name, v := range map[string][]uint64{"a value changed": changed, "two values swapped": swapped} {
		if ValuesSum(0, v, front) == whole {
			t.Errorf("%s: same checksum", name)
		}
	}
	moved := append([]byte(nil), front...)
	moved[0], moved[1] = 1, 0
	left := append([]byte(nil), front...)
	left[1] = 0
	for name, f := range map[string][]byte{"a vertex left the frontier": left, "the frontier moved": moved, "no frontier": nil} {
		if ValuesSum(0, vals, f) == whole {
			t.Errorf("%s: same checksum", name)
		}
	}
}
