package csr

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/hugemem"
)

// Stage is what a staged read (OpenStaged) needs of the job around it:
// collective steps over every rank, compute and memory nodes alike, and
// staging memory in DM that every CN can read and write.
type Stage interface {
	// Step is one collective step of every rank: each passes its error
	// (nil if it has none) and its payload (nil on an MN), and gets
	// every CN's payload in CN order, or an error when any rank passed
	// one (its own, else one naming the rank that failed).
	Step(err error, payload []byte) ([][]byte, error)
	// Open opens the staging memory, collectively: bytes in all, spread
	// over the memory nodes.
	Open(bytes uint64) (Staging, error)
	// Close closes a staging memory Open returned, collectively, before
	// the read's end (a staged read in rounds closes its degrees' once
	// it has counted the rounds' records).
	Close(Staging) error
	// Round is a Step of the compute nodes only, which route the rounds
	// of a staged read (rounds.go) after the memory nodes' part of it is
	// done.
	Round(err error, payload []byte) ([][]byte, error)
}

// Staging is the staging memory: one linear space of bytes in DM. Its
// methods may be called from several goroutines at once; what one CN
// writes, another reads after the next Step.
type Staging interface {
	// Write writes b at off; it is done when Write returns.
	Write(off uint64, b []byte) error
	// Read reads len(b) bytes at off into b.
	Read(b []byte, off uint64) error
}

// Cutter cuts a staged read's graph into chunks by its degrees, which no
// CN holds whole: each CN places the boundaries that fall in its slice
// of them (Slice), and every CN makes the cut from every CN's (Cut).
type Cutter interface {
	// Slice returns the boundaries that fall in deg, the degrees of the
	// vertices [lo, lo+len(deg)) of a graph of n vertices whose degrees
	// sum to edges, those of the vertices before lo summing to before.
	Slice(deg []uint64, lo uint32, before uint64, n uint32, edges uint64) ([]Boundary, error)
	// Cut returns the C+1 chunk bounds from the boundaries every CN
	// placed, in CN order.
	Cut(placed []Boundary) ([]uint32, error)
}

// Boundary is where a cut places chunk K's first vertex V; Before is the
// degrees of the vertices [0, V) summed.
type Boundary struct {
	K      int
	V      uint32
	Before uint64
}

// Stageable reports whether OpenStaged reads spec: a generator (each CN
// generates its range of the blocks), or a regular file (not a FIFO: it
// is read in ranges, and more than once) holding a text edge list
// (SNAP, .el, .wel), gzipped or not. It looks at the file, so one rank
// decides for the job (the MNs may not see the file).
func Stageable(spec string, opts Options) bool {
	o := opts
	if IsGeneratorSpec(spec) {
		_, err := o.parseGen(spec)
		return err == nil
	}
	path, format, err := resolve(spec, &o)
	if err != nil {
		return false
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return false // a FIFO, say: it cannot be read in ranges, or twice
	}
	return format == FormatSNAP || format == FormatEL || format == FormatWEL
}

// ServeStaged is a memory node's part of the CNs' OpenStaged: it takes
// the same Steps and opens the same staging memory (a second one when
// the vertices outnumber the bound the first was sized for). The caller
// closes it once every CN is done with its share (they read it until
// their rows are built and loaded, and the ids until the job has them).
func ServeStaged(st Stage) error {
	all, err := st.Step(nil, nil)
	if err != nil {
		return err
	}
	p, _, err := planStage(all)
	if err != nil {
		return err
	}
	if _, err := st.Open(p.firstBytes()); err != nil {
		return err
	}
	if _, err := st.Step(nil, nil); err != nil { // 2: the ids' slices
		return err
	}
	if all, err = st.Step(nil, nil); err != nil { // 3: merged, counted
		return err
	}
	_, n, err := p.vertices(all)
	if err != nil {
		return err
	}
	var rows Staging
	if !p.placeRows(n) {
		if rows, err = st.Open(p.total); err != nil {
			return err
		}
	}
	for range 3 { // 4 to 6: degrees, their sums, the cut
		if _, err := st.Step(nil, nil); err != nil {
			return err
		}
	}
	if all, err = st.Step(nil, nil); err != nil { // the rounds' and parts' bounds
		return err
	}
	sps, err := decodeParts(all, p.rounds)
	if err != nil {
		return err
	}
	t := tableOf(sps)
	if all, err = st.Step(nil, nil); err != nil { // 7: the rooms
		return err
	}
	if p.rounds > 1 {
		rooms, err := decodeCounts(all, len(t.round))
		if err != nil {
			return err
		}
		if err := st.Close(rows); err != nil {
			return err
		}
		if _, err := st.Open(p.roundBytes(layRounds(rooms, t.round, p.rounds))); err != nil {
			return err
		}
	}
	_, err = st.Step(nil, nil) // 8: round 0 routed
	return err
}

// stageRange is what a CN tells the others, in the first Step, of its
// byte range of the input.
type stageRange struct {
	File     string
	Edges    uint64 // parsed in the range
	Lines    int64  // lines of the range (up to its error, if any)
	ErrLine  int64  `json:",omitempty"` // the range's first bad line, counted in the range
	ErrMsg   string `json:",omitempty"`
	MaxID    uint64
	Sketch   idSketch // of the range's ids
	Bound    uint64   `json:",omitempty"` // tests: a bound on the vertices (readConfig.vertexBound)
	Wide     bool     `json:",omitempty"` // tests: 8-byte records (readConfig.wideRecords)
	Spill    bool     // the range's edges outgrew the budget to keep them: they go to DM
	Arrays   int      // degree arrays per CN: out-degrees, and in-degrees with Reverse
	Dropped  uint64   // self-loops the policy drops (every chunk has room for them)
	Reverse  bool     // edges go to their destination's owner too
	Weighted bool
	// Dense is a generator's vertex count: its ids are 0..Dense-1 and
	// every one is a vertex, edges or not (steps 2 and 3 find nothing).
	Dense uint64 `json:",omitempty"`
	// StageBytes is the CN's ShareOptions.StageBytes: the least of the
	// CNs' bounds the records routed at once (rounds.go).
	StageBytes uint64 `json:",omitempty"`
}

// stagePlan is where a staged read puts what in the staging memory,
// the same on every rank (planStage, then placeRows).
type stagePlan struct {
	cns     int
	file    string
	edges   uint64 // of the input
	maxID   uint64
	slices  idSlices
	arrays  int
	codec   recCodec // the routed records' (records.go)
	reverse bool
	routed  uint64 // records routed, at most
	rounds  int    // they are routed in this many rounds (rounds.go), at least 1
	dense   uint64 // the vertices of a generator (stageRange.Dense), else 0
	// The ids' region (the first Open; stagedids.go), from 0.
	localOff  []uint64 // lists: CN c's sorted ids from idBase + 8·localOff[c]
	spillOff  []uint64 // CN c's spilled edges (if it spills) from spillBase + spillOff[c] bytes
	idBase    uint64
	mergeBase uint64
	spillBase uint64
	idBytes   uint64
	// The rows' region, for n vertices (counted in step 3): after the
	// ids' for at most nBound vertices (the first Open has room for it),
	// else in a second Open.
	nBound   uint32
	n        uint32
	locBase  uint64 // CN c's degree array a at locBase + 8·n·(c·arrays + a), written a slice at a time
	sumBase  uint64 // the summed array a at sumBase + 8·n·a, each CN summing its slice
	edgeBase uint64
	total    uint64
}

// planStage plans the staging memory from every CN's first payload, or
// returns the input's first bad line (every rank alike).
func planStage(all [][]byte) (*stagePlan, []stageRange, error) {
	rs, err := decodeAll[stageRange](all, "staging record")
	if err != nil {
		return nil, nil, err
	}
	var line int64
	for _, r := range rs {
		if r.ErrLine > 0 {
			return nil, nil, lineErr(r.File, line+r.ErrLine, "%s", r.ErrMsg)
		}
		line += r.Lines
	}
	p := &stagePlan{cns: len(rs), localOff: make([]uint64, len(rs)+1), spillOff: make([]uint64, len(rs)+1)}
	sk := make([]idSketch, len(rs))
	for c, r := range rs {
		p.file = r.File
		p.edges += r.Edges
		p.maxID = max(p.maxID, r.MaxID)
		p.localOff[c+1] = p.localOff[c] + 2*r.Edges // a CN's distinct ids are at most its endpoints
		p.spillOff[c+1] = p.spillOff[c]
		if r.Spill {
			p.spillOff[c+1] += r.Edges * (&spill{weighted: r.Weighted}).rec()
		}
		sk[c] = r.Sketch
		p.arrays, p.reverse = r.Arrays, r.Reverse
		p.dense = r.Dense
	}
	if p.dense > 0 {
		return p.planDense(rs), rs, nil
	}
	u := union(sk)
	p.slices = newIDSlices(u, p.maxID, p.cns)
	// Vertices are at most the id space and the endpoints; the sketch's
	// estimate is within a few percent (a sketch of 4096 ids errs by
	// 1.6% on average): a quarter more, and a second Open otherwise.
	bound := u.estimate()*5/4 + 4096
	for _, r := range rs {
		if r.Bound > 0 {
			bound = r.Bound
		}
	}
	p.nBound = uint32(min(p.maxID+1, 2*p.edges, bound, MaxVertices))
	local, merged := p.localOff[p.cns], p.localOff[p.cns] // words
	if p.slices.bitmap {
		local, merged = p.slices.words*uint64(p.cns*p.cns), p.slices.words*uint64(p.cns)
	}
	p.mergeBase = p.idBase + 8*local
	p.spillBase = p.mergeBase + 8*merged
	p.idBytes = p.spillBase + p.spillOff[p.cns]
	p.planRouted(rs)
	return p, rs, nil
}

// planDense plans a generator's staging memory: its ids need no region
// (the map is the identity on its p.dense vertices, sliced as bitmaps
// would be, and nothing is written or merged), its spilled edges do.
func (p *stagePlan) planDense(rs []stageRange) *stagePlan {
	p.maxID = p.dense - 1
	p.slices = bitmapSlices(p.maxID, p.cns)
	p.nBound = uint32(min(p.dense, MaxVertices))
	p.idBytes = p.spillOff[p.cns]
	p.planRouted(rs)
	return p
}

// planRouted bounds the records routed: every edge, twice with reverse,
// and room for every CN's dropped self-loops in every chunk (room); and
// the rounds they take, so that a round's records fit the least of the
// CNs' StageBytes.
func (p *stagePlan) planRouted(rs []stageRange) {
	n := p.dense // the dense ids' bound: a generator's vertices, else the ids and the endpoints
	if n == 0 {
		n = min(p.maxID+1, 2*p.edges)
	}
	weighted := false
	for _, r := range rs {
		weighted = weighted || r.Weighted
		if r.Wide {
			n = max(n, 1<<32)
		}
	}
	p.codec = codecFor(weighted, n)
	p.routed = p.edges
	if p.reverse {
		p.routed *= 2
	}
	var most uint64 // bytes a round, 0: no bound
	for _, r := range rs {
		p.routed += uint64(p.cns) * r.Dropped
		if r.StageBytes > 0 && (most == 0 || r.StageBytes < most) {
			most = r.StageBytes
		}
	}
	p.rounds = 1
	if bytes := p.routed * p.recBytes(); most > 0 && bytes > most {
		p.rounds = int(min((bytes+most-1)/most, maxRounds))
	}
}

// recBytes is the bytes of a routed record.
func (p *stagePlan) recBytes() uint64 { return uint64(p.codec.bytes) }

// maxRounds bounds the rounds of a staged read: each generates or reads
// the input again, twice (a sweep of the windows to measure them, one to
// load them).
const maxRounds = 64

// routedBytes is the staged records' room in the rows' region: every
// record routed, or none when a region of their own holds a round at a
// time (roundBytes).
func (p *stagePlan) routedBytes() uint64 {
	if p.rounds > 1 {
		return 0
	}
	return p.routed * p.recBytes()
}

// roundBytes is the size of the rounds' region of l.
func (p *stagePlan) roundBytes(l *roundLayout) uint64 { return max(1, l.recs*p.recBytes()) }

// vertices is step 3's counts of ids, a slice's per CN, and the number
// of vertices, or the error of more than MaxVertices.
func (p *stagePlan) vertices(all [][]byte) ([]uint64, uint32, error) {
	counts, err := decodeAll[uint64](all, "count of ids")
	if err != nil {
		return nil, 0, err
	}
	var n uint64
	for _, c := range counts {
		if n += c; n > MaxVertices {
			return nil, 0, fileErr(p.file, "more than %d vertices; dense ids are 32-bit", uint64(MaxVertices))
		}
	}
	return counts, uint32(n), nil
}

// rowsBytes is the size of the rows' region for n vertices.
func (p *stagePlan) rowsBytes(n uint32) uint64 {
	return 8*uint64(n)*uint64((p.cns+1)*p.arrays) + p.routedBytes()
}

// firstBytes is the size of the first Open: the ids' region and room
// for the rows' of nBound vertices; in rounds, the ids' region alone
// (the rows' is closed once the rounds are laid out).
func (p *stagePlan) firstBytes() uint64 {
	if p.rounds > 1 {
		return max(1, p.idBytes)
	}
	return p.idBytes + p.rowsBytes(p.nBound)
}

// placeRows plans the rows' region for n vertices, and says whether it
// is in the first Open (else it is a second one's, from 0: always in
// rounds).
func (p *stagePlan) placeRows(n uint32) bool {
	first := n <= p.nBound && p.rounds == 1
	p.n = n
	p.locBase = 0
	if first {
		p.locBase = p.idBytes
	}
	p.sumBase = p.locBase + 8*uint64(n)*uint64(p.cns*p.arrays)
	p.edgeBase = p.sumBase + 8*uint64(n)*uint64(p.arrays)
	p.total = p.locBase + p.rowsBytes(n)
	return first
}

// stagedInput is one CN's range of a text edge list and what it parsed
// there.
type stagedInput struct {
	path, format string
	gz           bool
	a, b         int64 // the byte range (gz: CN 0 has it all)
	weighted     bool
	o            *Options
	rc           *readConfig
	lines        *edgeLines
	kept         *keptEdges
	spill        *spill   // the range's edges, when not kept
	parsed       bool     // the first parse is done (a later one counts no progress)
	gen          *GenSpec // a generator's: the range is its blocks [a, b)
}

// rangeOf is CN c's byte range of a file of size bytes read by cns CNs:
// from the first line that starts at or after c·size/cns to the first
// that starts at or after (c+1)·size/cns.
func rangeOf(f io.ReaderAt, size int64, c, cns int) (a, b int64, err error) {
	start := func(k int) (int64, error) {
		if k == 0 {
			return 0, nil
		}
		if k == cns {
			return size, nil
		}
		pos := int64(k) * size / int64(cns)
		if pos == 0 {
			return 0, nil
		}
		buf := make([]byte, 64<<10)
		for at := pos - 1; at < size; at += int64(len(buf)) {
			n, err := f.ReadAt(buf, at)
			if i := slices.Index(buf[:n], '\n'); i >= 0 {
				return at + int64(i) + 1, nil
			}
			if err != nil && err != io.EOF {
				return 0, err
			}
		}
		return size, nil
	}
	if a, err = start(c); err == nil {
		b, err = start(c + 1)
	}
	return a, max(a, b), err
}

// parse parses the range into reused edgeBlocks, external ids (use sees
// each, in order). It returns the range's lines.
func (in *stagedInput) parse(use func(p *parsedEdges)) (int64, error) {
	if in.gen != nil {
		in.generate(use)
		return 0, nil
	}
	if in.a >= in.b && !in.gz {
		return 0, nil
	}
	rc := in.rc
	if in.parsed && rc != nil && rc.progress != nil { // a later parse: the bar is done
		rc = &readConfig{careful: rc.careful, blockBytes: rc.blockBytes}
	}
	var r io.Reader
	if in.gz {
		f, err := openFile(in.path, rc)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		r = f
	} else {
		f, err := os.Open(in.path)
		if err != nil {
			return 0, errors.Wrap(err, "csr")
		}
		defer f.Close()
		r = io.NewSectionReader(f, in.a, in.b-in.a)
		if rc != nil && rc.progress != nil {
			r = &countingReader{r: r, p: rc.progress}
		}
	}
	return parseText(r, in.path, in.o.Workers, rc, edgeParser(in.lines, reuseBlocks, nil), func(p parsedEdges, line0 int64) error {
		use(&p)
		return p.err(in.path, line0)
	})
}

// generate generates a generator's range of blocks in parallel, and
// hands use each block (one at a time, in any order: the rows are
// sorted, so the order does not show).
func (in *stagedInput) generate(use func(p *parsedEdges)) {
	var mu sync.Mutex
	in.gen.eachBlock(in.o.Seed, in.o.Workers, uint64(in.a), uint64(in.b), func(_ uint64, src, dst []uint32) {
		mu.Lock()
		defer mu.Unlock()
		use(&parsedEdges{blk: &edgeBlock{s32: src, d32: dst, maxID: in.gen.N - 1}})
	})
}

// meta is what the input says of itself, edges of it read.
func (in *stagedInput) meta(edges uint64) *Meta {
	if in.gen != nil {
		return &Meta{Name: in.path, Path: in.path, Format: in.format, DeclaredVertices: in.gen.N, InputEdges: edges}
	}
	return &Meta{Name: datasetName(in.path), Path: in.path, Format: in.format, InputEdges: edges}
}

// send hands the range's edges, on dense ids, to snk: the kept ones, the
// spilled ones, or a generator's generated again.
func (in *stagedInput) send(snk sink) error {
	switch {
	case in.kept.ok():
		in.kept.send(snk)
	case in.spill != nil:
		return in.spill.send(snk)
	case in.gen != nil:
		recs := make([]edgeRec, 0, batchEdges)
		in.generate(func(p *parsedEdges) {
			for i, s := range p.blk.s32 {
				if recs = append(recs, edgeRec{uint64(s), uint64(p.blk.d32[i]), 1}); len(recs) == cap(recs) {
					sendEdges(snk, recs)
					recs = recs[:0]
				}
			}
		})
		if len(recs) > 0 {
			sendEdges(snk, recs)
		}
	}
	return nil
}

// OpenStaged is OpenShareWith for a text edge list (Stageable) read by
// cns compute nodes together, this one being CN cn: each parses only its
// byte range of the file (a gzipped file, which cannot be cut, is parsed
// by CN 0 alone), and the parsed edges meet their owners through the
// staging memory of st, grouped by owner, instead of every CN parsing
// the whole file. cut partitions the graph by its out-degrees, from the
// slices of them the CNs hold (Cutter); the share is chunk cn's.
//
// The steps, each a Step of the whole job (when one fails, every rank
// returns its error):
//
//  1. Each CN parses its range, sketching its ids (idSketch) and keeping
//     its edges while they fit Options.KeepBytes, and says how many
//     edges and lines it found, its largest id, its sketch, and its
//     first bad line: the error then names the line of the whole file
//     (the lines of the ranges before it added), and every rank returns
//     it. Every rank cuts the id space into C slices (idSlices) and sizes
//     the staging memory, which is opened. A CN that could not keep its
//     edges spills them there (spill).
//  2. Each CN writes its ids slice by slice (stagedids.go).
//  3. CN k merges slice k of every CN's ids and says how many it holds:
//     the slices' counts number the dense ids. Each CN maps its edges to
//     dense ids a slice (or a group of slices) at a time.
//  4. Each CN counts its range's degrees, as many vertices a pass as
//     fit the budget beside its kept edges (at most C passes, |V|/C
//     vertices each), and writes them.
//  5. Each CN sums its slice of every CN's counts, writes the sums and
//     tells the others its slice's total and its vertex with the most.
//  6. Each CN places the cut's boundaries that fall in its slice
//     (Cutter.Slice), and every CN makes the cut from them.
//  7. Each CN says how much room it needs in each chunk's region, from
//     its own degree counts read back from DM (an edge goes to the chunk
//     of its source, and of its destination when in-rows or an
//     undirected graph need it), and 8. writes its edges there (those of
//     its own chunk stay in its kept edges, when it kept them) and says
//     how many it wrote. It then reads its chunk's summed degrees.
//
// The share then reads its owner's region of the staging memory in every
// pass its rows take (windows included), and its ids from there
// (Share.ExternalID), so the staging memory must stay open until its ids
// are read and, for a windowed share, until it is loaded (a share built
// whole frees its kept edges before it returns). Memory: the kept edges of the range
// (Options.KeepBytes), a slice of the id map, step 4's counters (within
// that budget beside the kept edges), O(|V|/C) words of degrees (a
// slice, then the chunk's in 32 bits), and the rows as OpenShareWith builds them
// (ShareOptions.RowBytes), over the chunk's vertices only.
func OpenStaged(spec string, opts Options, so ShareOptions, cut Cutter, st Stage, cn, cns int) (*Share, *Meta, error) {
	return openStaged(spec, opts, so, cut, st, cn, cns, nil)
}

func openStaged(spec string, opts Options, so ShareOptions, cut Cutter, st Stage, cn, cns int, rc *readConfig) (*Share, *Meta, error) {
	o := opts
	err := o.Validate()
	o.EnsureDefaults()
	if so.Progress != nil && rc == nil {
		rc = &readConfig{progress: &progressCounter{report: so.Progress}}
	}
	in := &stagedInput{o: &o, rc: rc}
	undirected := o.Undirected
	r := stageRange{File: spec, Arrays: 1, Reverse: undirected || so.In, StageBytes: uint64(max(so.StageBytes, 0))}
	if r.Reverse {
		r.Arrays = 2
	}
	r.Wide = rc != nil && rc.wideRecords
	all, err := in.step1(st, spec, cn, cns, &r, err)
	if err != nil {
		in.kept.free()
		return nil, nil, err
	}
	keep := false // a windowed share's windows read the kept edges: freed by Share.Free
	defer func() {
		if !keep {
			in.kept.free()
		}
	}()
	p, _, err := planStage(all)
	if err != nil {
		return nil, nil, err
	}
	s, m, err := stageIDs(st, p.firstBytes(), p, in, cn, spec, &r)
	if err != nil {
		return nil, nil, err
	}
	s.so = so
	if s.mem = s.ids; !p.placeRows(m.n()) {
		if s.mem, err = st.Open(p.total); err != nil {
			return nil, nil, err
		}
	}
	// Every step's work happens before it, and an error is passed on to
	// the step: when a step fails, every rank (the MNs too) returns.
	// Steps 4 to 6: the edges mapped to dense ids, the degrees, a slice
	// per CN, and the cut.
	err = s.mapEdges(m)
	if err == nil {
		err = s.writeDegrees(undirected, r.Edges)
	}
	if _, err = st.Step(err, nil); err != nil {
		return nil, nil, err
	}
	sl, err := s.sumSlice(undirected)
	defer sl.free()
	var sum []byte
	if err == nil {
		sum, err = json.Marshal(sl.sum)
	}
	if all, err = st.Step(err, sum); err != nil {
		return nil, nil, err
	}
	var placed []byte
	sums, err := decodeAll[sliceSum](all, "degree sums")
	if err == nil {
		placed, err = s.place(cut, sl, sums)
	}
	sl.free() // the slice's degrees: back before the rows' (steps 4's were at its end)
	if all, err = st.Step(err, placed); err != nil {
		return nil, nil, err
	}
	// Steps 7 and 8: the edges, to their owners (in rounds, the first);
	// with its edges kept, a CN keeps those of its own chunk (it reads
	// them from its kept ones).
	bounds, err := s.cut(cut, all)
	wantIn := so.In && !undirected
	var lo, hi uint32
	var deg, inDeg []uint32
	if err == nil {
		s.local, s.bounds = in.kept.ok(), owners(bounds)
		lo, hi = bounds[cn], bounds[cn+1]
		deg, inDeg, err = s.chunkDegrees(lo, hi, undirected, wantIn)
	}
	// Every CN cuts its chunk into rounds and parts (its windows) and
	// tells the others (a Step of its own, which an error takes instead).
	var wins []uint32
	if s.rounds, wins, err = s.cutParts(st, deg, inDeg, rowsWeighted(in.weighted, &o), err); err != nil {
		return nil, nil, err
	}
	var room []byte
	rm, err := s.room()
	if err == nil {
		room, err = json.Marshal(rm)
	}
	if all, err = st.Step(err, room); err != nil {
		return nil, nil, err
	}
	rooms, err := decodeCounts(all, len(s.rounds.table.round)) // as the MNs decode them
	if err != nil {
		return nil, nil, err
	}
	err = s.layRounds(st, rooms)
	var sent []uint64
	if err == nil {
		sent, err = s.route(0)
	}
	var sp []byte
	if err == nil {
		sp, err = json.Marshal(sent)
	}
	if all, err = st.Step(err, sp); err != nil {
		return nil, nil, err
	}
	if err = s.received(all, 0); err != nil {
		return nil, nil, err
	}
	keep = s.local
	if !keep {
		in.kept.free()
	}
	meta := in.meta(p.edges)
	h := &header{n: p.n, directed: true, weighted: in.weighted, meta: meta} // the ids: m
	sh, meta, err := finishShare(spec, &o, so, s.pass, h, deg, inDeg, wins, lo, hi, topOf(sums), undirected, wantIn)
	if err != nil {
		return nil, nil, err
	}
	sh.ids = m
	if sh.Windowed() {
		sh.win.sweep = s.rounds
	}
	if keep = keep && sh.Windowed(); keep { // its windows read their kept edges
		sh.free = in.kept.free
	}
	return sh, meta, nil
}

// step1 is step 1: this CN's range parsed (unless err, an earlier
// error, is passed on instead), r filled in (its ids sketched) and told
// to every CN, whose records it returns.
func (in *stagedInput) step1(st Stage, spec string, cn, cns int, r *stageRange, err error) ([][]byte, error) {
	if err == nil {
		err = in.first(spec, cn, cns, r)
	}
	var payload []byte
	if err == nil {
		payload, err = json.Marshal(r)
	}
	return st.Step(err, payload)
}

// first is step 1's parse on this CN: its range, its ids sketched (a
// generator's are not: they are dense).
func (in *stagedInput) first(spec string, cn, cns int, r *stageRange) error {
	open := in.openRange
	if IsGeneratorSpec(spec) {
		open = in.openBlocks
	}
	if err := open(spec, cn, cns, r); err != nil {
		return err
	}
	dropLoops := in.o.SelfLoops == DropSelfLoops
	if g := in.gen; g != nil && !dropLoops {
		// A generator's range is known without generating it, and its
		// edges are generated again for every pass; they are generated
		// here only to be kept (or to count the self-loops to drop).
		edges := min(uint64(in.b)*genBlock, g.M) - min(uint64(in.a)*genBlock, g.M)
		if int64(min(edges, math.MaxInt64/8)*8) > in.o.keepBytes() { // 8 B an edge kept
			if r.Edges = edges; edges > 0 {
				r.MaxID = g.N - 1
			}
			in.parsed = true
			return nil
		}
	}
	in.kept = newKeptEdges(in.o.keepBytes())
	lines, err := in.parse(func(p *parsedEdges) {
		b := p.blk
		if r.Dense == 0 {
			r.Sketch.addBlock(b)
		}
		in.kept.add(b)
		if dropLoops {
			r.Dropped += loops(b.s32, b.d32) + loops(b.s64, b.d64)
		}
		r.Edges += uint64(b.len())
		r.MaxID = max(r.MaxID, b.maxID)
	})
	r.Lines = lines
	var ie *InputError
	if errors.As(err, &ie) && ie.Line > 0 {
		r.ErrLine, r.ErrMsg = ie.Line, ie.Msg
		err = nil
	}
	in.parsed = true
	// (Kept edges past the budget are freed already.) A generator's are
	// generated again for each pass instead: its blocks are seeded one by
	// one, so they are the same edges, and spilling them would take 16 B
	// an edge of the MNs' memory (at kron:24, 4.3 GB of the 9.1 GB staged).
	r.Spill = r.Edges > 0 && !in.kept.ok() && in.gen == nil
	return err
}

// openBlocks is a generator's range on CN cn of cns: its share of the
// blocks of edges (each seeded on its own, so the edges are those of
// any other cut).
func (in *stagedInput) openBlocks(spec string, cn, cns int, r *stageRange) error {
	gs, err := in.o.parseGen(spec)
	if err != nil {
		return err
	}
	nb := gs.blocks()
	in.gen, in.path, in.format = &gs, spec, gs.Kind
	in.a, in.b = int64(uint64(cn)*nb/uint64(cns)), int64(uint64(cn+1)*nb/uint64(cns))
	r.File, r.Dense = spec, gs.N
	return nil
}

// openRange is a text edge list's byte range on CN cn of cns, its
// reading counted by the progress bar.
func (in *stagedInput) openRange(spec string, cn, cns int, r *stageRange) error {
	path, format, err := resolve(spec, in.o)
	if err != nil {
		return err
	}
	in.path, in.format, in.weighted = path, format, format == FormatWEL
	r.File, r.Weighted = path, in.weighted
	if in.rc != nil {
		r.Bound = in.rc.vertexBound
	}
	in.lines = edgeListLines(in.weighted, in.o, in.rc)
	f, err := os.Open(path)
	if err != nil {
		return errors.Wrap(err, "csr")
	}
	magic := make([]byte, 2)
	n, _ := f.ReadAt(magic, 0)
	st, err := f.Stat()
	if err == nil {
		in.gz = strings.HasSuffix(path, ".gz") || (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b)
		if in.gz {
			in.a, in.b = 0, 0
			if cn == 0 {
				in.b = st.Size()
			} else {
				in.gz = false // nothing to read
			}
		} else {
			in.a, in.b, err = rangeOf(f, st.Size(), cn, cns)
		}
	}
	f.Close()
	if err != nil {
		return errors.Wrapf(err, "csr: %s", path)
	}
	if rc := in.rc; rc != nil && rc.progress != nil {
		rc.progress.total.Add(in.b - in.a)
	}
	return nil
}

// loops counts the self-loops s[i]→d[i].
func loops[T uint32 | uint64](s, d []T) uint64 {
	var n uint64
	for i := range s {
		if s[i] == d[i] {
			n++
		}
	}
	return n
}

// staged is one CN's staged read after the first step.
type staged struct {
	p    *stagePlan
	ids  Staging // the ids' region
	mem  Staging // the rows' region
	cn   int
	in   *stagedInput
	so   ShareOptions
	spec string
	// runs are this CN's chunk's edges in the staging memory that a
	// pass reads (those of a round, or of a window): runs of records
	// (first, count). got[c][g] is how many CN c sent part g.
	runs   [][2]uint64
	partLo uint64 // the first vertex of the part runs hold (records.go)
	got    [][]uint64
	// local: the chunk's edges from this CN's own range are not staged
	// but read from its kept edges (bounds tells which they are).
	local  bool
	bounds owners
	// rounds, lay: the chunks' rounds and where the records of each go
	// (rounds.go); edges: the memory they are routed to, from ebase.
	rounds *stageRounds
	lay    *roundLayout
	edges  Staging
	ebase  uint64
}

// stageIO is how many bytes a staged read moves per Read or Write.
const stageIO = 4 << 20

// writeWords writes words at off of mem as 64-bit words, stageIO bytes
// at a time.
func writeWords[T uint32 | uint64](mem Staging, off uint64, words []T) error {
	buf := make([]byte, 0, min(stageIO, 8*len(words)))
	for len(words) > 0 {
		k := min(len(words), stageIO/8)
		buf = buf[:0]
		for _, w := range words[:k] {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(w))
		}
		if err := mem.Write(off, buf); err != nil {
			return err
		}
		off, words = off+uint64(8*k), words[k:]
	}
	return nil
}

// readWords reads len(dst) words at off of mem into dst, with f (if not
// nil) combining each word into dst instead: dst[i] = f(dst[i], word).
func readWords(mem Staging, dst []uint64, off uint64, f func(a, b uint64) uint64) error {
	buf := make([]byte, min(stageIO, 8*len(dst)))
	for len(dst) > 0 {
		k := min(len(dst), stageIO/8)
		b := buf[:8*k]
		if err := mem.Read(b, off); err != nil {
			return err
		}
		for i := range k {
			w := binary.LittleEndian.Uint64(b[8*i:])
			if f != nil {
				w = f(dst[i], w)
			}
			dst[i] = w
		}
		off, dst = off+uint64(8*k), dst[k:]
	}
	return nil
}

// writeDegrees is step 4: the degree counts of this CN's edges (edges
// of them), written a range of the vertices at a time, each counted in a
// pass over the edges: as many vertices a pass as their counters fit the
// load's budget (Options.KeepBytes) beside the kept edges, in 32 bits
// when no count can pass them, and at most C passes (a slice of step 5
// each: three words a vertex of it before this budget, 805 MB at
// kron:26 on cn:2, in two passes; now two half-words a vertex, 512 MiB,
// in one).
func (s *staged) writeDegrees(undirected bool, edges uint64) error {
	budget := uint64(max(s.in.o.keepBytes()-s.in.kept.bytes(), 0))
	if edges <= math.MaxUint32 {
		return countDegrees(s, undirected, budget, (*hugemem.Arena).Uint32s)
	}
	return countDegrees(s, undirected, budget, (*hugemem.Arena).Words)
}

// countDegrees is writeDegrees with counters of T, mapped by alloc and
// unmapped at the end, not left to the collector.
func countDegrees[T uint32 | uint64](s *staged, undirected bool, budget uint64, alloc func(*hugemem.Arena, int) []T) error {
	p := s.p
	n := uint64(p.n)
	per := uint64(p.arrays * binary.Size(T(0))) // bytes a vertex
	passes := min(max((n*per+budget-1)/max(budget, 1), 1), uint64(p.cns))
	dropLoops := s.in.o.SelfLoops == DropSelfLoops
	loopIn := p.arrays > 1 && !undirected // a directed self-loop is an in-edge too
	var mem hugemem.Arena
	defer mem.Free()
	arrs := make([][]T, p.arrays)
	for a := range arrs {
		arrs[a] = alloc(&mem, int((n+passes-1)/passes))
	}
	for k := range passes {
		lo, hi := k*n/passes, (k+1)*n/passes
		w := hi - lo
		for a := range arrs {
			arrs[a] = arrs[a][:w]
			clear(arrs[a])
		}
		deg, in := arrs[0], arrs[len(arrs)-1]
		_, err := batches(func(snk sink) (*header, error) { return nil, s.in.send(snk) }, func(es []edgeRec) {
			for _, e := range es {
				i, j := e.s-lo, e.d-lo // past the range when they wrap
				switch {
				case e.s != e.d:
					if i < w {
						deg[i]++
					}
					if j < w && p.arrays > 1 {
						in[j]++
					}
				case !dropLoops && i < w:
					deg[i]++
					if loopIn {
						in[i]++
					}
				}
			}
		})
		if err != nil {
			return err
		}
		for a, arr := range arrs {
			if err := writeWords(s.mem, p.locBase+8*(n*uint64(s.cn*p.arrays+a)+lo), arr); err != nil {
				return err
			}
		}
	}
	return nil
}

// slice is CN c's slice of n words in steps 3 and 4.
func (s *staged) slice(c int, n uint64) (lo, hi uint64) {
	return uint64(c) * n / uint64(s.p.cns), uint64(c+1) * n / uint64(s.p.cns)
}

// sliceSum is what a CN tells the others of its slice of the summed
// degrees (as the partition sees them): their sum, and the vertex with
// the most (the lowest on ties) and how many.
type sliceSum struct {
	Edges  uint64
	Top    uint32
	TopDeg uint64
}

// degreeSlice is this CN's slice [lo, lo+len(deg)) of the partition's
// degrees, and what it tells the others of it.
type degreeSlice struct {
	lo  uint32
	deg []uint64
	sum sliceSum
	mem hugemem.Arena // deg's, unmapped by free
}

// free gives the slice's degrees back to the OS.
func (sl *degreeSlice) free() {
	if sl != nil {
		sl.mem.Free()
	}
}

// sumSlice is step 5: this CN sums its slice of every CN's arrays,
// writes the sums and returns its slice of the partition's degrees.
func (s *staged) sumSlice(undirected bool) (*degreeSlice, error) {
	p := s.p
	lo, hi := s.slice(s.cn, uint64(s.p.n))
	var mem hugemem.Arena
	defer mem.Free()
	sum := mem.Words(int(hi - lo))
	sl := &degreeSlice{lo: uint32(lo)}
	add := func(a, b uint64) uint64 { return a + b }
	for a := range p.arrays {
		clear(sum)
		for c := range p.cns {
			if err := readWords(s.mem, sum, p.locBase+8*(uint64(p.n)*uint64(c*p.arrays+a)+lo), add); err != nil {
				return nil, err
			}
		}
		if err := writeWords(s.mem, p.sumBase+8*(uint64(p.n)*uint64(a)+lo), sum); err != nil {
			return nil, err
		}
		switch {
		case a == 0:
			sl.deg = sl.mem.Words(len(sum))
			copy(sl.deg, sum)
		case a == 1 && undirected: // both directions, a self-loop once
			for i, x := range sum {
				sl.deg[i] += x
			}
		}
	}
	deg := sl.deg
	for _, d := range deg {
		sl.sum.Edges += d
	}
	sl.sum.Top, sl.sum.TopDeg = top(deg, sl.lo)
	return sl, nil
}

// decodeAll decodes every CN's payload of a step, a T each (what names
// it in an error).
func decodeAll[T any](all [][]byte, what string) ([]T, error) {
	out := make([]T, len(all))
	for c, b := range all {
		if err := json.Unmarshal(b, &out[c]); err != nil {
			return nil, errors.Wrapf(err, "csr: CN %d's %s", c, what)
		}
	}
	return out, nil
}

// topOf is the vertex with the most degrees of every slice's, the lowest
// on ties (slices are in vertex order).
func topOf(sums []sliceSum) uint32 {
	degs := make([]uint64, len(sums))
	for c, x := range sums {
		degs[c] = x.TopDeg
	}
	if c, _ := top(degs, 0); int(c) < len(sums) {
		return sums[c].Top
	}
	return 0
}

// place is step 6's part on this CN: the boundaries of the cut that fall
// in its slice.
func (s *staged) place(cut Cutter, sl *degreeSlice, sums []sliceSum) ([]byte, error) {
	var before, edges uint64
	for c, x := range sums {
		if c < s.cn {
			before += x.Edges
		}
		edges += x.Edges
	}
	placed, err := cut.Slice(sl.deg, sl.lo, before, s.p.n, edges)
	if err != nil {
		return nil, err
	}
	return json.Marshal(placed)
}

// cut is step 6's end: the bounds from every CN's boundaries.
func (s *staged) cut(cut Cutter, all [][]byte) ([]uint32, error) {
	each, err := decodeAll[[]Boundary](all, "boundaries")
	if err != nil {
		return nil, err
	}
	bounds, err := cut.Cut(slices.Concat(each...))
	n := s.p.n
	if err == nil && (len(bounds) != s.p.cns+1 || !slices.IsSorted(bounds) || bounds[0] != 0 || bounds[s.p.cns] != n) {
		err = errors.Errorf("csr: %s: a cut of %d vertices into %d chunks has bounds %v", s.spec, n, s.p.cns, bounds)
	}
	return bounds, err
}

// chunkDegrees reads the summed degrees of the chunk [lo, hi): the
// partition's (an undirected graph's both directions, a self-loop once)
// and with wantIn the in-degrees (self-loops included).
func (s *staged) chunkDegrees(lo, hi uint32, undirected, wantIn bool) (deg, in []uint32, err error) {
	p := s.p
	read := func(a int, dst []uint32, add bool) error {
		return s.readDegrees(dst, p.sumBase+8*(uint64(p.n)*uint64(a)+uint64(lo)), lo, add)
	}
	deg = make([]uint32, hi-lo)
	if err = read(0, deg, false); err != nil {
		return nil, nil, err
	}
	switch {
	case undirected:
		err = read(1, deg, true)
	case wantIn:
		in = make([]uint32, hi-lo)
		err = read(1, in, false)
	}
	return deg, in, err
}

// readDegrees reads the summed degrees of the vertices from lo, at off
// of the rows' region, into dst (added to it with add), a piece at a
// time, in 32 bits (narrowTo).
func (s *staged) readDegrees(dst []uint32, off uint64, lo uint32, add bool) error {
	piece := make([]uint64, min(len(dst), stageIO/8))
	for at := 0; at < len(dst); {
		k := min(len(dst)-at, len(piece))
		if err := readWords(s.mem, piece[:k], off, nil); err != nil {
			return err
		}
		if err := narrowTo(s.spec, dst[at:at+k], piece[:k], lo+uint32(at), add); err != nil {
			return err
		}
		off, at = off+8*uint64(k), at+k
	}
	return nil
}

// owners routes edges to the chunks of bounds.
type owners []uint32

// of is the chunk of v.
func (b owners) of(v uint64) int {
	lo, hi := 0, len(b)-2
	for lo < hi { // the last c with b[c] <= v
		mid := (lo + hi + 1) / 2
		if uint64(b[mid]) <= v {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// ownerIndex finds an id's owner in a step or two, as owners.of does in
// a binary search whose branches, on the random ids of a routing pass,
// the CPU cannot predict: the owner of the first id of each bucket of
// 2^shift ids (at most 2^16+1 buckets), then a step past each bound in
// the id's bucket.
type ownerIndex struct {
	b     owners
	shift uint
	first []int32
}

func (b owners) index() ownerIndex {
	end := uint64(b[len(b)-1])
	var shift uint
	for end>>shift > 1<<16 {
		shift++
	}
	x := ownerIndex{b: b, shift: shift, first: make([]int32, end>>shift+1)}
	for k := range x.first {
		x.first[k] = int32(b.of(uint64(k) << shift))
	}
	return x
}

// of is owners.of.
func (x *ownerIndex) of(v uint64) int {
	i := int(x.first[min(v>>x.shift, uint64(len(x.first)-1))])
	for i+2 < len(x.b) && uint64(x.b[i+1]) <= v {
		i++
	}
	return i
}

// mask is the buckets of x (a bit each) that hold an id of an owner
// that want picks. A routing pass looks an id up only where its bucket's
// bit is set: at kron:26 a round takes a third of the parts, and the
// lookups of every id and the loads of its part's round were 8% of a
// CN's load CPU; the mask took a tenth off the routing's CPU (kron:24 in
// three rounds: 9.0 -> 8.2 s on CN 0, pprof), the unpredictable branch
// on the round remaining.
func (x *ownerIndex) mask(want []bool) []uint64 {
	m := make([]uint64, (len(x.first)+63)/64)
	for k := range x.first {
		last := x.of(uint64(k+1)<<x.shift - 1) // the owner of the bucket's last id
		for g := int(x.first[k]); g <= last; g++ {
			if want[g] {
				m[k/64] |= 1 << (k % 64)
				break
			}
		}
	}
	return m
}

// may says whether id v's bucket is set in mask m.
func (x *ownerIndex) may(m []uint64, v uint64) bool {
	k := min(v>>x.shift, uint64(len(x.first)-1))
	return m[k/64]&(1<<(k%64)) != 0
}

// room is step 7: how many records this CN may send each part of each
// chunk (rounds.go; one part: the chunk), from its own degree counts
// (read back, a piece at a time, from where step 4 wrote them): the
// out-edges of the part's vertices, with reverse their in-edges too (an
// edge inside the part goes once but counts twice), and the self-loops
// the policy drops, which the degrees leave out and which are routed
// for their count (loopsByPart).
func (s *staged) room() ([]uint64, error) {
	p, x := s.p, s.rounds
	pb := x.table.bounds
	room := make([]uint64, len(x.table.round))
	arrays := 1
	if p.reverse {
		arrays = 2
	}
	buf := make([]uint64, min(stageIO/8, uint64(s.p.n)))
	for a := range arrays {
		base := p.locBase + 8*uint64(p.n)*uint64(s.cn*p.arrays+a)
		for g := range room {
			for v, end := uint64(pb[g]), uint64(pb[g+1]); v < end; {
				b := buf[:min(uint64(len(buf)), end-v)]
				if err := readWords(s.mem, b, base+8*v, nil); err != nil {
					return nil, err
				}
				for _, w := range b {
					room[g] += w
				}
				v += uint64(len(b))
			}
		}
	}
	if s.in.o.SelfLoops == DropSelfLoops {
		loops, err := s.loopsByPart()
		if err != nil {
			return nil, err
		}
		for g := range room {
			room[g] += loops[g]
		}
	}
	for g := range room {
		if s.local && x.table.chunk[g] == s.cn {
			room[g] = 0
		}
	}
	return room, nil
}

// loopsByPart counts this CN's self-loops by the part of their vertex,
// in a pass over its edges of its own. A room for the CN's every
// dropped self-loop in every part (as before stop 62) outgrew the
// staging memory planned for a windowed share, whose parts are many
// (FuzzStaged).
func (s *staged) loopsByPart() ([]uint64, error) {
	t := s.rounds.table
	loops := make([]uint64, len(t.round))
	pt := t.bounds.index()
	_, err := batches(func(snk sink) (*header, error) { return nil, s.in.send(snk) }, func(es []edgeRec) {
		for _, e := range es {
			if e.s == e.d {
				loops[pt.of(e.s)]++
			}
		}
	})
	return loops, err
}

// stageRecs is how many records a CN buffers for a part before it
// writes them, with few parts in a round; with more, each buffer holds
// a share of stageRecs·stageBufs, down to stageRecs/16.
const (
	stageRecs = 1 << 16
	stageBufs = 4
)

// router buffers a CN's records per part and writes them to the parts'
// regions.
type router struct {
	s    *staged
	c    recCodec
	bufs [][]byte
	fill []int
	lo   []uint64 // each part's first vertex
	at   []uint64 // where this CN's records for each part start
	room []uint64 // how many fit there
	sent []uint64
	err  error
}

// put adds edge e to part o's buffer, which holds its destination if
// dst, else its source.
func (r *router) put(o int, e edgeRec, dst bool) {
	b, i := r.bufs[o], r.fill[o]
	if r.c.bytes == 6 { // the common case, inlined
		r.c.put6(b[i:], e, r.lo[o], dst)
	} else {
		r.c.put(b[i:], e, r.lo[o], dst)
	}
	if r.fill[o] = i + r.c.bytes; r.fill[o] == len(b) {
		r.flush(o)
	}
}

// flush writes part o's buffer.
func (r *router) flush(o int) {
	k := uint64(r.fill[o] / r.c.bytes)
	if r.err == nil && k > 0 {
		if r.sent[o]+k > r.room[o] {
			r.err = errors.Errorf("csr: %s changed while it was read (more edges for chunk %d than counted)", r.s.spec, r.s.rounds.table.chunk[o])
		} else {
			r.err = r.s.edges.Write(r.s.ebase+r.s.p.recBytes()*(r.at[o]+r.sent[o]), r.bufs[o][:r.fill[o]])
		}
	}
	r.sent[o] += k
	r.fill[o] = 0
}

// cutParts is the rounds and parts of every chunk (stageParts): this CN
// cuts its own (deg and in, its chunk's degrees; with one round, the
// chunk is its round) and every CN learns every CN's in a Step, which
// takes err (an earlier error) if there is one. It returns this CN's
// windows too (nil: its rows are built whole), which its parts are.
func (s *staged) cutParts(st Stage, deg, in []uint32, weighted bool, err error) (*stageRounds, []uint32, error) {
	p := s.p
	var wins []uint32
	var payload []byte
	so := s.so
	if s.local {
		so.WindowBytes = 0 // every window's pass goes over the kept edges
	}
	if so.width = p.codec.width(); so.width > 0 && so.align() > so.width && err == nil {
		err = errors.Errorf("csr: %s: windows of %d vertices (ShareOptions.Align) are wider than the staged records address (%d)", s.spec, so.align(), so.width)
	}
	if err == nil {
		lo, hi := s.bounds[s.cn], s.bounds[s.cn+1]
		sp := stageParts{Rounds: []uint32{lo, hi}}
		if p.rounds > 1 {
			sp.Rounds = cutRounds(deg, in, lo, hi, p.rounds, so.align())
			wins = roundWindows(deg, in, sp.Rounds, weighted, so)
		} else {
			wins = windows(deg, in, lo, hi, weighted, so)
		}
		if sp.Parts = wins; wins == nil {
			sp.Parts = sp.Rounds
		}
		payload, err = json.Marshal(sp)
	}
	all, err := st.Step(err, payload)
	if err != nil {
		return nil, nil, err
	}
	sps, err := decodeParts(all, p.rounds)
	if err != nil {
		return nil, nil, err
	}
	x := &stageRounds{s: s, st: st, r: p.rounds, table: tableOf(sps)}
	for o, sp := range sps {
		if sp.Rounds[0] != s.bounds[o] || sp.Rounds[p.rounds] != s.bounds[o+1] {
			return nil, nil, errors.Errorf("csr: CN %d's rounds %v do not cut its chunk [%d, %d)", o, sp.Rounds, s.bounds[o], s.bounds[o+1])
		}
		for j := 0; so.width > 0 && j+1 < len(sp.Parts); j++ {
			if sp.Parts[j+1]-sp.Parts[j] > so.width {
				return nil, nil, errors.Errorf("csr: CN %d's part [%d, %d) is wider than the staged records address (%d vertices)", o, sp.Parts[j], sp.Parts[j+1], so.width)
			}
		}
	}
	x.own = sps[s.cn]
	return x, wins, nil
}

// layRounds lays the rounds out from every CN's rooms (step 7) and opens
// their region: the rows' region's end with one round, else a staging
// memory of its own, which every round uses anew.
func (s *staged) layRounds(st Stage, rooms [][]uint64) error {
	p := s.p
	s.lay = layRounds(rooms, s.rounds.table.round, p.rounds)
	if p.rounds > 1 { // the degrees' region is read: the rounds' takes its place
		if err := st.Close(s.mem); err != nil {
			return err
		}
		var err error
		s.mem, s.ebase = nil, 0
		s.edges, err = st.Open(p.roundBytes(s.lay))
		return err
	}
	s.edges, s.ebase = s.mem, p.edgeBase
	if s.lay.recs*p.recBytes() > p.total-p.edgeBase {
		return errors.Errorf("csr: %s: %d records for the staging memory's %d", s.spec, s.lay.recs, (p.total-p.edgeBase)/p.recBytes())
	}
	return nil
}

// route is step 8 for round k (rounds.go; with one round, every edge):
// this CN's edges of the round, written to their parts' regions (part
// g's holds every CN's room for it, CN 0's first). It returns how many
// records it sent each part.
func (s *staged) route(k int) ([]uint64, error) {
	p, x, l := s.p, s.rounds, s.lay
	t := x.table
	parts := len(t.round)
	r := &router{s: s, c: p.codec, bufs: make([][]byte, parts), fill: make([]int, parts),
		lo: make([]uint64, parts), at: make([]uint64, parts), room: make([]uint64, parts), sent: make([]uint64, parts)}
	inRound := 0
	for g := range parts {
		if t.round[g] == k {
			inRound++
		}
	}
	recs := uint64(max(stageRecs*stageBufs/max(inRound, 1), stageRecs/16))
	recs = min(recs, stageRecs)
	for g := range parts {
		if t.round[g] != k {
			r.bufs[g] = make([]byte, r.c.bytes) // never filled: no room
			continue
		}
		r.lo[g], r.at[g], r.room[g] = uint64(t.bounds[g]), l.at[s.cn][g], l.rooms[s.cn][g]
		r.bufs[g] = make([]byte, max(1, min(recs, r.room[g]))*p.recBytes())
	}
	self := -1 // the chunk whose edges stay here
	if s.local {
		self = s.cn
	}
	want := make([]bool, parts) // the parts this CN routes to in round k
	for g := range want {
		want[g] = t.round[g] == k && t.chunk[g] != self
	}
	pt, reverse := t.bounds.index(), p.reverse
	may := pt.mask(want)
	_, err := batches(func(snk sink) (*header, error) { return nil, s.in.send(snk) }, func(es []edgeRec) {
		for _, e := range es {
			i := -1 // e.s's part, if looked up: none of the round's else
			if pt.may(may, e.s) {
				if i = pt.of(e.s); want[i] {
					r.put(i, e, false)
				}
			}
			if reverse && pt.may(may, e.d) { // once more to the destination's part, if another
				if j := pt.of(e.d); j != i && want[j] {
					r.put(j, e, true)
				}
			}
		}
	})
	for g := range r.bufs {
		r.flush(g)
	}
	if err == nil {
		err = r.err
	}
	return r.sent, err
}

// received is step 8's end for round k: where every CN's records for
// this CN's chunk are, part by part, from the counts they sent (all).
// A pass reads the round's part when it has one (a share built whole),
// else the one window picks: an edge between two parts went to both.
func (s *staged) received(all [][]byte, k int) error {
	x := s.rounds
	got, err := decodeCounts(all, len(x.table.round))
	if err != nil {
		return err
	}
	s.got, s.runs = got, nil
	if f := x.table.first; f[s.cn+1]-f[s.cn] == 1 && x.table.round[f[s.cn]] == k {
		s.readPart(f[s.cn])
	}
	return nil
}

// readPart points the passes at every CN's records for part g in the
// region.
func (s *staged) readPart(g int) {
	s.runs = make([][2]uint64, s.p.cns)
	for c := range s.runs {
		s.runs[c] = [2]uint64{s.lay.at[c][g], s.got[c][g]}
	}
	s.partLo = uint64(s.rounds.table.bounds[g])
}

// window points the passes at the records of this CN's window [lo, hi),
// one of its parts, routed in the round the region holds.
func (s *staged) window(lo, hi uint32) error {
	x := s.rounds
	pb := x.own.Parts
	j, ok := slices.BinarySearch(pb, lo)
	for ok && j+1 < len(pb) && pb[j+1] == lo { // past empty parts
		j++
	}
	if !ok || j+1 >= len(pb) || pb[j+1] != hi {
		return errors.Errorf("csr: %s: [%d, %d) is not a window of the staged read's parts %v", s.spec, lo, hi, pb)
	}
	g := x.table.first[s.cn] + j
	if x.table.round[g] != x.cur {
		return errors.Errorf("csr: %s: window [%d, %d) is routed in round %d, not %d", s.spec, lo, hi, x.table.round[g], x.cur)
	}
	s.readPart(g)
	return nil
}

// decodeCounts decodes every CN's payload of one number per chunk.
func decodeCounts(all [][]byte, cns int) ([][]uint64, error) {
	counts := make([][]uint64, len(all))
	for c, b := range all {
		if err := json.Unmarshal(b, &counts[c]); err != nil || len(counts[c]) != cns {
			return nil, errors.Errorf("csr: CN %d's counts are not %d numbers", c, cns)
		}
	}
	return counts, nil
}

// pass is a pass over this chunk's region of the staging memory: its
// edges, every CN's, on dense ids. Reads run one ahead of the decoding.
func (s *staged) pass(snk sink) (*header, error) {
	spans, err := s.spans()
	if err != nil {
		return nil, err
	}
	c, lo, rec := s.p.codec, s.partLo, s.p.recBytes()
	var own func() // the kept edges of this chunk, while the first read runs
	if s.local {
		own = func() { s.sendOwn(snk) }
	}
	recs := make([]edgeRec, 0, batchEdges)
	err = readAhead(s.edges, spans, stageIO/rec*rec, own, func(b []byte, _ uint64) error {
		for ; len(b) > 0; b = b[rec:] {
			if recs = append(recs, c.get(b, lo)); len(recs) == cap(recs) {
				sendEdges(snk, recs)
				recs = recs[:0]
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(recs) > 0 {
		sendEdges(snk, recs)
	}
	return nil, nil
}

// spans is where the records of the part a pass reads are: offset and
// bytes, a span per CN.
func (s *staged) spans() ([][2]uint64, error) {
	if s.runs == nil {
		return nil, errors.Errorf("csr: %s: a pass over the staged edges of no part", s.spec)
	}
	rec := s.p.recBytes()
	spans := make([][2]uint64, len(s.runs))
	for i, run := range s.runs {
		spans[i] = [2]uint64{s.ebase + rec*run[0], rec * run[1]}
	}
	return spans, nil
}

// directRows says whether the window [lo, hi) can be built by rows: out-
// and in-rows of a directed unweighted graph, from records alone (no
// kept edges of this chunk), no self-loop dropped.
func (s *staged) directRows(rp *rowPass) bool {
	return !s.local && s.p.recBytes() != 16 && !rp.weighted && !rp.undirected && !rp.dropLoops && !rp.fingerprint &&
		rp.out != nil && rp.in != nil
}

// rows is rp.run over the window's records, when directRows says so: a
// record, an edge with an end in the window, goes to the out-row of its
// source, the in-row of its destination, or both, at random, so the
// general pass's branches on each mispredicted one time in two; here
// each record, with no edge record nor batch made of it, is put in both
// rows' buffers and kept by the ones it belongs to (shareRows.addIf).
// kron:24, CN 0's CPU in the windows' pass: 9.4 -> 8.1 s (pprof).
func (s *staged) rows(rp *rowPass) error {
	spans, err := s.spans()
	if err != nil {
		return err
	}
	out, in := rp.out, rp.in
	lo, n := uint64(rp.lo), uint64(rp.hi-rp.lo)
	c, rec := s.p.codec, int(s.p.recBytes())
	if s.partLo != lo {
		return errors.Errorf("csr: %s: window [%d, %d) reads the part from %d", s.spec, rp.lo, rp.hi, s.partLo)
	}
	err = readAhead(s.edges, spans, uint64(stageIO/rec*rec), nil, func(b []byte, _ uint64) error {
		for ; len(b) >= rec; b = b[rec:] {
			var i, j uint64 // past n when outside: they wrap
			if rec == 6 {   // the common case, inlined
				i, j = c.offsets6(b, lo)
			} else {
				i, j = c.offsets(b, lo)
			}
			if i >= n && j >= n {
				return errors.Errorf("csr: %s: edge %d→%d was routed to the window [%d, %d)", s.spec, uint32(lo+i), uint32(lo+j), rp.lo, rp.hi)
			}
			out.addIf(i < n, uint32(i), uint32(lo+j))
			in.addIf(j < n, uint32(j), uint32(lo+i))
		}
		return nil
	})
	out.flush()
	in.flush()
	return err
}

// readAhead reads the spans (offset, bytes) of mem in order, chunk bytes
// at a time (a multiple of the records'; its buffers no larger than the
// longest span), one chunk ahead of f, which is handed each and where it
// is; first, if not nil, runs while the first chunk is read.
func readAhead(mem Staging, spans [][2]uint64, chunk uint64, first func(), f func(b []byte, at uint64) error) error {
	type piece struct {
		b   []byte
		at  uint64
		err error
	}
	ready, free := make(chan piece, 1), make(chan []byte, 2)
	var most uint64
	for _, sp := range spans {
		most = max(most, sp[1])
	}
	for range 2 {
		free <- make([]byte, min(most, chunk))
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(ready)
		for _, sp := range spans {
			for i := uint64(0); i < sp[1]; i += chunk {
				var b []byte
				select {
				case b = <-free:
				case <-stop:
					return
				}
				pc := piece{b: b[:min(chunk, sp[1]-i)], at: sp[0] + i}
				pc.err = mem.Read(pc.b, pc.at)
				select {
				case ready <- pc:
				case <-stop:
					return
				}
				if pc.err != nil {
					return
				}
			}
		}
	}()
	if first != nil {
		first()
	}
	for pc := range ready {
		if pc.err != nil {
			return pc.err
		}
		if err := f(pc.b, pc.at); err != nil {
			return err
		}
		free <- pc.b[:cap(pc.b)]
	}
	return nil
}

// sendOwn hands snk the kept edges of this CN's range that its chunk
// gets (by its source, or with reverse by its destination).
func (s *staged) sendOwn(snk sink) {
	lo, hi := uint64(s.bounds[s.cn]), uint64(s.bounds[s.cn+1])
	reverse := s.p.reverse
	recs := make([]edgeRec, 0, batchEdges)
	s.in.kept.each(func(es []edgeRec) {
		for _, e := range es {
			if (e.s >= lo && e.s < hi) || (reverse && e.d >= lo && e.d < hi) {
				if recs = append(recs, e); len(recs) == cap(recs) {
					sendEdges(snk, recs)
					recs = recs[:0]
				}
			}
		}
	})
	if len(recs) > 0 {
		sendEdges(snk, recs)
	}
}
