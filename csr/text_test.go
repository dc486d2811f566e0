package csr

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// denseBlocks (bitmap or sorted ids) and idSet agree with densify, the
// sort-and-search reference, on dense, sparse, identity and 64-bit ids.
func TestDenseBlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   func(r *rand.Rand) uint64
	}{
		{"identity", func(r *rand.Rand) uint64 { return uint64(r.IntN(50)) }},
		{"dense", func(r *rand.Rand) uint64 { return uint64(r.IntN(5000)) }},
		{"holes", func(r *rand.Rand) uint64 { return uint64(r.IntN(1000)) * 97 }},
		{"wide", func(r *rand.Rand) uint64 { return uint64(r.Uint32()) }},
		{"64-bit", func(r *rand.Rand) uint64 { return r.Uint64() >> uint(r.IntN(64)) }},
		{"sparse", func(r *rand.Rand) uint64 { return r.Uint64() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var src, dst []uint64
			var blocks []*edgeBlock
			ids := &idSet{workers: 2}
			for range 20 {
				var sc edgeScratch
				for range r.IntN(500) {
					s, d := tc.id(r), tc.id(r)
					sc.s, sc.d, sc.w = append(sc.s, s), append(sc.d, d), append(sc.w, float64(s%7))
					src, dst = append(src, s), append(dst, d)
				}
				b := &edgeBlock{}
				sc.blockInto(b, true)
				ids.add32(b.s32, b.maxID)
				ids.add32(b.d32, b.maxID)
				ids.add64(b.s64, b.maxID)
				ids.add64(b.d64, b.maxID)
				blocks = append(blocks, b)
			}
			wantIDs, wantSrc, wantDst, err := densify("x", slices.Clone(src), slices.Clone(dst), 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{1, 3} {
				bs := make([]*edgeBlock, len(blocks))
				for i, b := range blocks {
					c := *b
					bs[i] = &c
				}
				n, gotIDs, gotSrc, gotDst, w, err := denseBlocks("x", bs, true, workers)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(gotIDs, wantIDs) || !slices.Equal(gotSrc, wantSrc) || !slices.Equal(gotDst, wantDst) {
					t.Fatalf("workers %d: ids %v src %v dst %v\nwant %v %v %v", workers, gotIDs, gotSrc, gotDst, wantIDs, wantSrc, wantDst)
				}
				if want := len(wantIDs); wantIDs == nil && len(src) > 0 {
					if max(slices.Max(src), slices.Max(dst))+1 != uint64(n) {
						t.Fatalf("n %d, want max id + 1", n)
					}
				} else if int(n) != want {
					t.Fatalf("n %d, want %d", n, want)
				}
				for i := range w {
					if w[i] != float64(src[i]%7) {
						t.Fatalf("weight %d: %v", i, w[i])
					}
				}
			}
			m, err := ids.idMap("x")
			if err != nil {
				t.Fatal(err)
			}
			if got := m.table(); !reflect.DeepEqual(got, wantIDs) {
				t.Fatalf("idSet: %v, want %v", got, wantIDs)
			}
			for v, x := range wantIDs {
				if got := m.external(uint32(v)); got != x {
					t.Fatalf("idSet: dense %d is external %d, want %d", v, got, x)
				}
			}
			for i, s := range src {
				if x, ok := m.dense(s); !ok || x != wantSrc[i] {
					t.Fatalf("idSet maps %d to %d %v, want %d", s, x, ok, wantSrc[i])
				}
			}
			if _, ok := m.dense(math.MaxUint64 - 1); ok && !slices.Contains(src, math.MaxUint64-1) && !slices.Contains(dst, math.MaxUint64-1) {
				t.Fatal("an id that is not there found")
			}
		})
	}
}

// fastFloat gives what strconv.ParseFloat gives, or declines.
func FuzzFastFloat(f *testing.F) {
	for _, s := range []string{"0", "1", "0.5", "123.456", "999999999999999", "0.000000000000001", "1.", ".5", "1e5", "-1", "1.2.3", "00.10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := fastFloat([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("fastFloat(%q) = %v, ParseFloat %v %v", s, got, want, err)
		}
	})
}

// A block that starts mid-file counts its lines: errors name the line
// of the whole file, for every text format, whatever the blocks and
// workers.
func TestLineNumbersAcrossBlocks(t *testing.T) {
	const good, bad = 30000, 30001
	lines := func(line string, n int) string { return strings.Repeat(line, n) }
	mtxHead := "%%MatrixMarket matrix coordinate pattern general\n% a comment\n9 9 40000\n"
	tests := []struct {
		name  string
		files map[string]string
		open  string
		want  string
	}{
		{"el", map[string]string{"g.el": lines("1 2\n", good) + "1 x\n1 2\n"}, "g.el",
			fmt.Sprintf("g.el:%d: expected a non-negative integer destination vertex id, got \"x\"", bad)},
		{"snap-gz", map[string]string{"g.txt.gz": "# c\n" + lines("1\t2\r\n", good-1) + "1 2 3\n"}, "g.txt.gz",
			fmt.Sprintf("g.txt.gz:%d: expected 2 fields (src dst), got 3", bad)},
		{"wel", map[string]string{"g.wel": lines("1 2 0.5\n", good) + "1 2 -3\n"}, "g.wel",
			fmt.Sprintf("g.wel:%d: negative edge weight \"-3\"", bad)},
		{"mtx", map[string]string{"m.mtx": mtxHead + lines("1 2\n", good-3) + "1 10\n"}, "m.mtx",
			fmt.Sprintf("m.mtx:%d: expected a column index in 1..9, got \"10\"", bad)},
		{"mtx-long", map[string]string{"m.mtx": strings.Replace(mtxHead, "40000", "29997", 1) + lines("1 2\n", good-3) + "3 3\n"}, "m.mtx",
			fmt.Sprintf("m.mtx:%d: more entries than the 29997 the size line declares", bad)},
		{"mtx-short", map[string]string{"m.mtx": mtxHead + lines("1 2\n", good-3)}, "m.mtx",
			fmt.Sprintf("m.mtx:%d: expected 40000 entries as the size line declares, got 29997", bad)},
		{"graphalytics-e", map[string]string{"x.properties": "", "x.v": "1\n2\n", "x.e": lines("1 2\n", good) + "2 3\n"}, "x.properties",
			fmt.Sprintf("x.e:%d: destination vertex 3 is not in the vertex file x.v", bad)},
		{"graphalytics-v", map[string]string{"x.properties": "", "x.v": lines("7\n", good) + "7 7\n", "x.e": ""}, "x.properties",
			fmt.Sprintf("x.v:%d: expected 1 field (vertex id), got 2", bad)},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		for name, c := range tc.files {
			writeFile(t, dir, name, c)
		}
		for _, workers := range []int{1, 2, 3} {
			for _, size := range []int{1, 100, 4096, 1 << 20} {
				t.Run(fmt.Sprintf("%s/workers=%d/block=%d", tc.name, workers, size), func(t *testing.T) {
					_, _, err := open(filepath.Join(dir, tc.open), Options{Workers: workers}, &readConfig{blockBytes: func() int { return size }})
					if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "/"+tc.want) {
						t.Fatalf("error %v\nwant ...%s", err, tc.want)
					}
				})
			}
		}
	}
}

// A read error (corrupt gzip) is reported after the lines before it, and
// a bad line before it wins.
func TestReadErrorAfterLines(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(strings.Repeat("1 2\n", 100000)))
	zw.Close()
	data := buf.Bytes()
	corrupt := slices.Clone(data)
	for i := len(corrupt) / 2; i < len(corrupt)/2+64; i++ {
		corrupt[i] ^= 0x55
	}
	dir := t.TempDir()
	p := writeFile(t, dir, "g.el.gz", "RAW:"+string(corrupt))
	for _, workers := range []int{1, 2} {
		_, _, err := open(p, Options{Workers: workers}, &readConfig{blockBytes: func() int { return 1000 }})
		if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "corrupt gzip data") {
			t.Fatalf("workers %d: %v", workers, err)
		}
	}
	var buf2 bytes.Buffer
	zw = gzip.NewWriter(&buf2)
	zw.Write([]byte("1 2\n3 y\n" + strings.Repeat("1 2\n", 100000)))
	zw.Close()
	corrupt = slices.Clone(buf2.Bytes())
	for i := len(corrupt) / 2; i < len(corrupt)/2+64; i++ {
		corrupt[i] ^= 0x55
	}
	p = writeFile(t, dir, "h.el.gz", "RAW:"+string(corrupt))
	_, _, err := open(p, Options{Workers: 2}, &readConfig{blockBytes: func() int { return 1000 }})
	if err == nil || !strings.HasSuffix(err.Error(), "h.el.gz:2: expected a non-negative integer destination vertex id, got \"y\"") {
		t.Fatalf("%v", err)
	}
}

// OpenProgress reports the bytes of every file of the input, up to
// their total.
func TestOpenProgress(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "x.properties", "graph.x.directed = true\n")
	writeFile(t, dir, "x.v", "1\n2\n3\n")
	writeFile(t, dir, "x.e.gz", strings.Repeat("1 2\n2 3\n", 1000))
	p := writeFile(t, dir, "g.el", strings.Repeat("1 2\n", 1000))
	for _, spec := range []string{filepath.Join(dir, "x.properties"), p} {
		var done, total int64
		calls := 0
		if _, _, err := OpenProgress(spec, Options{}, func(d, tt int64) { done, total = d, tt; calls++ }); err != nil {
			t.Fatal(err)
		}
		if calls == 0 || done != total || total == 0 {
			t.Errorf("%s: %d calls, done %d of %d", spec, calls, done, total)
		}
	}
}

// A Graphalytics dataset's properties go into a binary edge list and come
// back with their algorithm parameters; bad ones are refused with their
// byte offset.
func TestBinaryProperties(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "x.properties", "graph.x.directed = false\ngraph.x.bfs.source-vertex = 30\ngraph.x.pr.damping-factor = 0.85\ngraph.x.pr.num-iterations = 7\ngraph.x.algorithms = bfs, pr\n")
	writeFile(t, dir, "x.v", "10\n20\n30\n")
	writeFile(t, dir, "x.e", "10 30\n30 20\n")
	g, meta, err := Open(filepath.Join(dir, "x.properties"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteBinary(&buf, g, BinaryOptions{Properties: meta.Properties}); err != nil {
		t.Fatal(err)
	}
	g2, m2, err := Read(bytes.NewReader(buf.Bytes()), "y.bel", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, g2) || !reflect.DeepEqual(m2.Properties, meta.Properties) {
		t.Fatalf("round trip: %s %v\nwant %s %v", adj(g2), m2.Properties, adj(g), meta.Properties)
	}
	if !m2.HasBFSSource || m2.BFSSource != 30 || !m2.HasPR || m2.PRIterations != 7 || m2.PRDamping != 0.85 || !slices.Equal(m2.Algorithms, []string{"bfs", "pr"}) {
		t.Errorf("parameters %+v", m2)
	}
	// The share reader gets them too.
	p := filepath.Join(dir, "y.bel")
	writeFile(t, dir, "y.bel", "RAW:"+buf.String())
	sh, m3, err := OpenShare(p, Options{}, func(deg []uint64) (uint32, uint32, error) { return 0, uint32(len(deg)), nil })
	if err != nil || !m3.HasBFSSource || m3.BFSSource != 30 || !reflect.DeepEqual(sh.Graph, g) {
		t.Errorf("share: %v %+v", err, m3)
	}
	if err := WriteBinary(&bytes.Buffer{}, g, BinaryOptions{Properties: map[string]string{"a=b": "c"}}); err == nil {
		t.Error("a key with '=' stored")
	}
	bad := binaryWithProps(t, g, map[string]string{"bfs.source-vertex": "x"})
	if _, _, err := Read(bytes.NewReader(bad), "z.bel", Options{}); err == nil || !IsInputError(err) ||
		!strings.Contains(err.Error(), "z.bel: byte 64: property bfs.source-vertex: expected a non-negative integer, got \"x\"") {
		t.Errorf("bad property: %v", err)
	}
}

// binaryWithProps is g as a binary edge list with properties.
func binaryWithProps(t *testing.T, g *Graph, props map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteBinary(&buf, g, BinaryOptions{Properties: props}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A line longer than the limit is an InputError naming file:line and the
// limit, for every text format and however the blocks fall.
func TestLineLimit(t *testing.T) {
	long := strings.Repeat("1", 100)
	tests := []struct {
		name, file, content, want string
	}{
		{"el", "g.el", "1 2\n2 3\n" + long + " 2\n3 4\n", "g.el:3: a line longer than 64 bytes"},
		{"el without line ends", "z.el", strings.Repeat("\x00", 1000), "z.el:1: a line longer than 64 bytes"},
		{"snap last line", "g.txt", "# c\n1 2\n" + long, "g.txt:3: a line longer than 64 bytes"},
		{"wel", "g.wel", "1 2 0.5\n1 2 0." + long + "\n", "g.wel:2: a line longer than 64 bytes"},
		{"mtx entries", "m.mtx", "%%MatrixMarket matrix coordinate pattern general\n9 9 2\n1 2\n" + long + "\n", "m.mtx:4: a line longer than 64 bytes"},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		writeFile(t, dir, tc.file, tc.content)
		for _, workers := range []int{1, 3} {
			for _, size := range []int{1, 7, 4096} {
				t.Run(fmt.Sprintf("%s/workers=%d/block=%d", tc.name, workers, size), func(t *testing.T) {
					_, _, err := open(filepath.Join(dir, tc.file), Options{Workers: workers}, &readConfig{maxLine: 64, blockBytes: func() int { return size }})
					if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "/"+tc.want) {
						t.Fatalf("error %v\nwant ...%s", err, tc.want)
					}
				})
			}
		}
	}
	// Header lines (Matrix Market, Graphalytics properties) are read line
	// by line, with the limit MaxLineBytes.
	dir := t.TempDir()
	writeFile(t, dir, "h.mtx", "%%MatrixMarket matrix coordinate pattern general\n%"+strings.Repeat("c", MaxLineBytes+10)+"\n1 1 0\n")
	writeFile(t, dir, "x.properties", "graph.x.directed = true\n"+strings.Repeat("p", 3*MaxLineBytes))
	for file, want := range map[string]string{"h.mtx": "h.mtx:2: a line longer than", "x.properties": "x.properties:2: a line longer than"} {
		if _, _, err := open(filepath.Join(dir, file), Options{}, nil); err == nil || !IsInputError(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", file, err, want)
		}
	}
}

// The block reader refuses a line longer than its limit, at its line, and
// otherwise returns the input whole, in blocks of whole lines.
func FuzzLineLimit(f *testing.F) {
	f.Add([]byte("1 2\n3 4\n"), uint8(3), uint8(2))
	f.Add([]byte("12345678\n1\n"), uint8(4), uint8(1))
	f.Add([]byte("1\n\n123456"), uint8(5), uint8(9))
	f.Fuzz(func(t *testing.T, data []byte, limit, block uint8) {
		lim, size := int(limit%32)+1, int(block%16)+1
		firstLong := int64(0)
		for i, l := range bytes.Split(data, []byte{'\n'}) {
			if len(l) > lim {
				firstLong = int64(i) + 1
				break
			}
		}
		br := &blockReader{r: bytes.NewReader(data), rc: &readConfig{maxLine: lim, blockBytes: func() int { return size }}, file: "f"}
		var got []byte
		for {
			b, end, err := br.next(nil)
			got = append(got, b...)
			if err != nil {
				var ie *InputError
				if !errors.As(err, &ie) || ie.Line != firstLong || firstLong == 0 {
					t.Fatalf("error %v; the first line longer than %d is %d", err, lim, firstLong)
				}
				return
			}
			if len(b) > 0 && !end && b[len(b)-1] != '\n' {
				t.Fatalf("block %q does not end a line", b)
			}
			if end {
				break
			}
		}
		if firstLong != 0 {
			t.Fatalf("line %d is longer than %d but no error", firstLong, lim)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("blocks %q, input %q", got, data)
		}
	})
}
