package csr

import (
	"fmt"
	"io"
	"strings"
)

// readMTX reads a Matrix Market coordinate file: the banner
// "%%MatrixMarket matrix coordinate FIELD SYMMETRY" with FIELD one of
// pattern, real, integer and SYMMETRY general or symmetric; '%' comments;
// the size line "rows cols entries"; then entries "i j [value]", 1-based.
// The graph has max(rows, cols) vertices; entry (i, j) is the edge i→j
// weighted by value; symmetric matrices are undirected graphs.
// With a sink, the edges go to it (dense ids) and the EdgeList has none.
func readMTX(r io.Reader, file string, o *Options, meta *Meta, snk sink, rc *readConfig) (*EdgeList, error) {
	lr := newLineReader(r, file)
	line, err := lr.next()
	if err == io.EOF {
		return nil, lineErr(file, 1, "expected a %%%%MatrixMarket banner, got an empty file")
	}
	if err != nil {
		return nil, err
	}
	ban := strings.Fields(strings.ToLower(string(line)))
	if len(ban) != 5 || ban[0] != "%%matrixmarket" || ban[1] != "matrix" {
		return nil, lineErr(file, lr.line, "expected \"%%%%MatrixMarket matrix coordinate <field> <symmetry>\", got %q", trunc(string(line)))
	}
	if ban[2] != "coordinate" {
		return nil, lineErr(file, lr.line, "expected coordinate format, got %q (dense arrays are not graphs)", ban[2])
	}
	weighted := false
	switch ban[3] {
	case "pattern":
	case "real", "integer", "double":
		weighted = true
	default:
		return nil, lineErr(file, lr.line, "expected field pattern, real or integer, got %q", ban[3])
	}
	directed := true
	switch ban[4] {
	case "general":
	case "symmetric":
		directed = false
	default:
		return nil, lineErr(file, lr.line, "expected symmetry general or symmetric, got %q", ban[4])
	}
	// Size line.
	var f [4][]byte
	var rows, cols, nnz uint64
	for {
		line, err = lr.next()
		if err == io.EOF {
			return nil, lineErr(file, lr.line+1, "expected the size line \"rows cols entries\", got end of file")
		}
		if err != nil {
			return nil, err
		}
		if isComment(line) {
			continue
		}
		if n := fields(line, f[:]); n != 3 {
			return nil, lineErr(file, lr.line, "expected 3 fields (rows cols entries), got %d", n)
		}
		var ok1, ok2, ok3 bool
		rows, ok1 = parseUint(f[0])
		cols, ok2 = parseUint(f[1])
		nnz, ok3 = parseUint(f[2])
		if !ok1 || !ok2 || !ok3 {
			return nil, lineErr(file, lr.line, "expected three non-negative integers (rows cols entries), got %q", trunc(string(line)))
		}
		break
	}
	n := max(rows, cols)
	if p := vertexProblem(n, o.maxVertices(), o.HostReaders); p != "" {
		return nil, lineErr(file, lr.line, "matrix dimension %d: %s", n, p)
	}
	if !directed && rows != cols {
		return nil, lineErr(file, lr.line, "symmetric matrix must be square, got %d×%d", rows, cols)
	}
	meta.DeclaredVertices, meta.DeclaredEdges = n, nnz
	el := &EdgeList{N: uint32(n), Directed: directed}
	if weighted {
		el.Weights = []float64{}
	}
	want, wcol := 2, -1
	if weighted {
		want, wcol = 3, 2
	}
	allowNeg := o.AllowNegativeWeights
	lines := &edgeLines{fields: want, wcol: wcol, slowOnly: rc.slowOnly(),
		post: func(i, j uint64) (uint64, uint64, bool) {
			return i - 1, j - 1, i >= 1 && i <= rows && j >= 1 && j <= cols
		},
		slow: func(line []byte, full bool) (i, j uint64, x float64, edge bool, msg string) {
			if isComment(line) {
				return
			}
			var f [4][]byte
			if k := fields(line, f[:]); k != want {
				return 0, 0, 0, false, fmt.Sprintf("expected %d fields (%s), got %d", want, map[bool]string{false: "row col", true: "row col value"}[weighted], k)
			}
			if full {
				return 0, 0, 0, false, fmt.Sprintf("more entries than the %d the size line declares", nnz)
			}
			i, ok := parseUint(f[0])
			if !ok || i < 1 || i > rows {
				return 0, 0, 0, false, fmt.Sprintf("expected a row index in 1..%d, got %s", rows, quote(f[0]))
			}
			j, ok = parseUint(f[1])
			if !ok || j < 1 || j > cols {
				return 0, 0, 0, false, fmt.Sprintf("expected a column index in 1..%d, got %s", cols, quote(f[1]))
			}
			x = 1
			if weighted {
				if x, msg = parseWeight(f[2], allowNeg); msg != "" {
					return
				}
			}
			return i - 1, j - 1, x, true, ""
		}}
	// The blocks are parsed as if the size line allowed any number of
	// entries; a block that fails or goes past the count is parsed again
	// with the count left, for the error a line-by-line reader gives.
	type parsed struct {
		parsedEdges
		data []byte // the block's bytes, only while it is used
	}
	parser := edgeParser(lines, edgeMode(snk), nil)
	newParser := func() func([]byte, *parsed) {
		parse := parser()
		return func(data []byte, p *parsed) {
			parse(data, &p.parsedEdges)
			p.data = data
		}
	}
	var blocks []*edgeBlock
	var count uint64
	total, err := parseTextAfter(lr.r, file, lr.line, o.Workers, rc, newParser, func(p parsed, line0 int64) error {
		k := uint64(len(p.recs))
		if p.blk != nil {
			k = uint64(p.blk.len())
		}
		if p.msg != "" || k > nnz-count {
			var sc edgeScratch
			errLine, msg := lines.parse(p.data, &sc, nnz-count)
			return lineErr(file, line0+lr.line+errLine, "%s", msg)
		}
		count += k
		if snk != nil {
			sendEdges(snk, p.recs)
		} else {
			blocks = append(blocks, p.blk)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if count != nnz {
		return nil, lineErr(file, lr.line+total+1, "expected %d entries as the size line declares, got %d", nnz, count)
	}
	if snk == nil {
		el.Src, el.Dst, el.Weights = concatBlocks(blocks, weighted)
		if weighted && el.Weights == nil {
			el.Weights = []float64{}
		}
	}
	if n > 0 {
		el.IDs = make([]uint64, n)
		for v := range el.IDs {
			el.IDs[v] = uint64(v) + 1
		}
	}
	meta.InputEdges = count
	return el, nil
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
