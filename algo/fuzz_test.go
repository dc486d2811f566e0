package algo

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
)

// FuzzParseOutput feeds arbitrary text to the output reader. Whatever it
// accepts must be well formed (one entry per id, values of the kind), must
// survive being written back in Graphalytics format and read again, and the
// re-read output must validate against the original.
func FuzzParseOutput(f *testing.F) {
	f.Add([]byte("1 0\n2 9223372036854775807\n3 1\n"), uint8(KindBFS))
	f.Add([]byte("1 1.477629166666667e-01\r\n2 4.753375000000000e-02\r\n"), uint8(KindPR))
	f.Add([]byte("1 0.0\n2 Infinity\n3 infinity\n4 1.7976931348623157e308\n5 4.9e-324\n"), uint8(KindSSSP))
	f.Add([]byte("1 1\n2 1\n6 6\n7 18446744073709551615\n8 -3\n"), uint8(KindWCC))
	f.Add([]byte("\n\n1\t2\n 3 4 \n"), uint8(KindCDLP))
	f.Add([]byte("1 0.3333\n1 0.5\n"), uint8(KindLCC))
	f.Add([]byte("x y\n"), uint8(KindBFS))
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		kind := Kind(k%6) + KindBFS
		o, err := ParseOutput(bytes.NewReader(data), "fuzz", kind)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "algo: fuzz:") {
				t.Fatalf("error %q does not name the input", err)
			}
			return
		}
		if err := o.check("parsed"); err != nil {
			t.Fatal(err)
		}
		seen := make(map[uint64]bool)
		for i, id := range o.IDs {
			if seen[id] {
				t.Fatalf("vertex %d accepted twice", id)
			}
			seen[id] = true
			if kind.isFloat() && (math.IsNaN(o.Floats[i]) || math.IsInf(o.Floats[i], -1)) {
				t.Fatalf("vertex %d: accepted %v", id, o.Floats[i])
			}
		}
		g := &csr.Graph{N: uint32(o.Len()), IDs: o.IDs}
		var b bytes.Buffer
		switch {
		case kind.isFloat():
			err = FormatOutput(&b, g, o.Floats)
		case kind.isLabel():
			u := make([]uint64, len(o.Ints))
			for i, x := range o.Ints {
				u[i] = uint64(x)
			}
			err = FormatOutput(&b, g, u)
		default:
			err = FormatOutput(&b, g, o.Ints)
		}
		if err != nil {
			t.Fatalf("writing back: %v", err)
		}
		back, err := ParseOutput(&b, "written", kind)
		if err != nil {
			t.Fatalf("reading back %q: %v", b.String(), err)
		}
		if err := Validate(kind, o, back); err != nil {
			t.Fatalf("written output does not validate: %v", err)
		}
		if !kind.isFloat() && !slices.Equal(o.Ints, back.Ints) {
			t.Fatalf("integers changed: %v → %v", o.Ints, back.Ints)
		}
	})
}

// fuzzGraph decodes a small graph: up to 8 vertices, edges from byte
// triples (u, v, weight 0..3).
func fuzzGraph(t *testing.T, spec []byte, directed bool) *csr.Graph {
	n := uint32(1)
	if len(spec) > 0 {
		n = uint32(spec[0]%8) + 1
		spec = spec[1:]
	}
	var edges []edge
	seen := make(map[[2]uint32]bool)
	for i := 0; i+2 < len(spec) && len(edges) < 24; i += 3 {
		u, v := uint32(spec[i])%n, uint32(spec[i+1])%n
		key := [2]uint32{u, v}
		if !directed && v < u {
			key = [2]uint32{v, u}
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		edges = append(edges, edge{u, v, float64(spec[i+2] % 4)})
	}
	ids := make([]uint64, n)
	for v := range ids {
		ids[v] = 1000 + 7*uint64(v)
	}
	return makeGraph(t, n, ids, directed, true, edges)
}

// FuzzVerifyBFS checks that VerifyBFS accepts a depth vector exactly when it
// equals the reference: the reference with arbitrary entries overwritten
// must be rejected unless the overwrites happen to change nothing.
func FuzzVerifyBFS(f *testing.F) {
	f.Add([]byte{5, 0, 1, 0, 1, 2, 0, 2, 3, 0, 4, 0, 0}, []byte{3, 2}, uint8(0), true)
	f.Add([]byte{5, 0, 1, 0, 1, 2, 0, 2, 3, 0}, []byte{4, 9}, uint8(0), false)
	f.Add([]byte{7, 0, 1, 0, 1, 0, 0, 3, 4, 0, 4, 3, 0}, []byte{3, 1, 4, 2}, uint8(0), true)
	f.Fuzz(func(t *testing.T, spec, patch []byte, s uint8, directed bool) {
		g := fuzzGraph(t, spec, directed)
		src := uint32(s) % g.N
		ref := ReferenceBFS(g, src)
		if err := VerifyBFS(g, src, ref); err != nil {
			t.Fatalf("reference rejected: %v", err)
		}
		d := slices.Clone(ref)
		for i := 0; i+1 < len(patch); i += 2 {
			v := uint32(patch[i]) % g.N
			if x := patch[i+1] % 10; x == 9 {
				d[v] = math.MaxInt64
			} else {
				d[v] = int64(x) - 1
			}
		}
		err := VerifyBFS(g, src, d)
		if same := slices.Equal(d, ref); same != (err == nil) {
			t.Fatalf("depths %v (reference %v): verifier says %v", d, ref, err)
		}
	})
}

// FuzzVerifySSSP is FuzzVerifyBFS for SSSP, with weights 0..3 (zero-weight
// cycles included) and distances overwritten by multiples of 0.5 or +Inf,
// so every wrong distance is wrong by far more than SSSPTolerance.
func FuzzVerifySSSP(f *testing.F) {
	f.Add([]byte{5, 0, 1, 2, 1, 2, 1, 2, 3, 0, 3, 2, 0}, []byte{3, 4}, uint8(0), true)
	f.Add([]byte{6, 0, 1, 1, 4, 5, 0, 5, 4, 0}, []byte{4, 2, 5, 2}, uint8(0), true)
	f.Add([]byte{4, 0, 1, 3, 1, 2, 1}, []byte{2, 8}, uint8(1), false)
	f.Fuzz(func(t *testing.T, spec, patch []byte, s uint8, directed bool) {
		g := fuzzGraph(t, spec, directed)
		src := uint32(s) % g.N
		ref := ReferenceSSSP(g, src)
		if err := VerifySSSP(g, src, ref); err != nil {
			t.Fatalf("reference rejected: %v", err)
		}
		d := slices.Clone(ref)
		for i := 0; i+1 < len(patch); i += 2 {
			v := uint32(patch[i]) % g.N
			if x := patch[i+1] % 32; x == 31 {
				d[v] = math.Inf(1)
			} else {
				d[v] = float64(x) / 2
			}
		}
		err := VerifySSSP(g, src, d)
		if same := slices.Equal(d, ref); same != (err == nil) {
			t.Fatalf("distances %v (reference %v): verifier says %v", d, ref, err)
		}
	})
}

// FuzzVerifyWCC checks that VerifyWCC accepts a labelling exactly when it
// describes the same partition as the reference.
func FuzzVerifyWCC(f *testing.F) {
	f.Add([]byte{7, 0, 1, 0, 2, 1, 0, 4, 5, 0}, []byte{3, 0}, true)
	f.Add([]byte{7, 0, 1, 0, 2, 1, 0, 4, 5, 0}, []byte{0, 9, 1, 9, 2, 9}, false)
	f.Fuzz(func(t *testing.T, spec, patch []byte, directed bool) {
		g := fuzzGraph(t, spec, directed)
		ref := ReferenceWCC(g)
		if err := VerifyWCC(g, ref); err != nil {
			t.Fatalf("reference rejected: %v", err)
		}
		l := slices.Clone(ref)
		for i := 0; i+1 < len(patch); i += 2 {
			l[uint32(patch[i])%g.N] = uint64(patch[i+1] % 4)
		}
		err := VerifyWCC(g, l)
		if same := samePartition(ref, l); same != (err == nil) {
			t.Fatalf("labels %v (reference %v): verifier says %v", l, ref, err)
		}
	})
}

// samePartition reports whether two labellings group the vertices alike.
func samePartition(a, b []uint64) bool {
	ab, ba := map[uint64]uint64{}, map[uint64]uint64{}
	for i := range a {
		if x, ok := ab[a[i]]; ok && x != b[i] {
			return false
		}
		if x, ok := ba[b[i]]; ok && x != a[i] {
			return false
		}
		ab[a[i]], ba[b[i]] = b[i], a[i]
	}
	return true
}
